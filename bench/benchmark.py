"""The real-document benchmark, all of it: build its folders, index them, ask, report.

The benchmark is the question sets declared in :data:`SETS`, each a JSON file of questions
written blind about public documents (its "sources" name each file's repository, commit
and path), each in the ``dev`` split (tuned on: its answers are printed and saved) or the
``test`` split (frozen: only totals are printed and saved; a source whose failures anyone
reads moves to dev). Sets are split by source repository.

    python bench/benchmark.py folders --mirrors /work/.mirror --out /tmp/bench  # copy, index
    python bench/benchmark.py run --split dev  --out /tmp/bench                 # ask, judge
    python bench/benchmark.py run --split test --out /tmp/bench

``folders`` copies every file out of a local git directory of its repository (the layout
the fetch tool leaves: ``MIRRORS/<owner>+<name>/repo``) at the pinned commit, then indexes
each set's folder into its own home (``OUT/<set>/home``) with the installed ``ragctl``.
``run`` asks each question as a user would (one ``ragctl ask --json`` process; ``--long``
for the long questions) and judges it as bench/realdocs.py does; a long answer by the share
of its expected facts it states. It reports, per kind, per detail and per file type: right /
partly / wrong / wrongly refused for answerable questions and rightly refused / answered
for not-stated ones, plus: answers cited to a document that names none of the question's
distinctive names, printed answers of the wrong type, and the selective-answering curve
(accuracy of the answered questions against the share answered, by the answer's
confidence). Writes bench/results/benchmark-<split>.json (with each set's questions commit)
and prints a table.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import ROOT, median, print_table, save
from bench.realdocs import judge

B = ROOT / "bench"
# name → (questions file, split); the split is the file's own "split" (realdocs.json: dev)
SETS: dict[str, str] = {
    "realdocs-dev": "realdocs.json",
    "tables-dev": "tables-dev.json",
    "policies-dev": "policies-dev.json",
    "receipts-dev": "blind/receipts-dev.json",
    "receipts-folder-dev": "blind/receipts-folder-dev.json",
    "mail-notes-dev": "blind/mail-notes-dev.json",
    "reports-dev": "blind/reports-dev.json",
    "handtrial-dev": "handtrial-dev.json",
    "sheets-dev": "blind/sheets-dev.json",
    "doctables-dev": "blind/doctables-dev.json",
    "forms-dev": "blind/forms-dev.json",
    "pdfreports-dev": "blind/pdfreports-dev.json",
    "computedocs-dev": "blind/computedocs-dev.json",
    "fresh-dev": "blind/fresh-dev.json",
    "reportcalc-dev": "blind/reportcalc-dev.json",
    "pdftables-dev": "blind/pdftables-dev.json",
    "statements-dev": "blind/statements-dev.json",
    "handtrials-dev": "blind/handtrials-dev.json",
    "calc-dev": "blind/calc-dev.json",
    "calc2-dev": "blind/calc2-dev.json",
    "calc3-dev": "blind/calc3-dev.json",
    "photos-dev": "blind/photos-dev.json",
    "tables4-dev": "blind/tables4-dev.json",
    "realdocs-test": "realdocs-test.json",
    "sheets-test": "sheets-test.json",
    "policies-test": "policies-test.json",
    "receipts-test": "blind/receipts-test.json",
    "mail-notes-test": "blind/mail-notes-test.json",
    "reports-test": "blind/reports-test.json",
}
LONG_RIGHT = 0.6  # a long answer stating this share of its expected facts is right


def spec_of(name: str) -> dict[str, Any]:
    return json.loads((B / SETS[name]).read_text())


def split_of(name: str) -> str:
    return spec_of(name).get("split", "dev")


def git_dir(mirrors: Path, repo: str) -> Path:
    base = mirrors / repo.replace("/", "+") / "repo"
    return base / ".git" if (base / ".git").exists() else base


def files_of(spec: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    """(repo, commit, path in the repository, path in the folder) of every file."""
    sources = spec["sources"]
    out: list[tuple[str, str, str, str]] = []
    if isinstance(sources, list):  # sheets-test: [{file, repo (or repository), path, commit}]
        return [(s.get("repo") or s["repository"], s["commit"], s["path"], s["file"])
                for s in sources]
    for key, value in sources.items():
        if isinstance(value, str):
            raise ValueError("built by bench/realdocs_folder.py")
        if "path" in value:  # tables-dev: {file: {repo, commit, path}}
            out.append((value["repo"], value["commit"], value["path"], key))
            continue
        for src in value if isinstance(value, list) else [value]:
            # one file renamed as the questions name it ("saved as fresh/fpa-2026-budget.csv:")
            named = _SAVED_AS.match(src.get("what", "")) if len(src["files"]) == 1 else None
            out += [(src["repo"], src["commit"], p, named.group(1) if named else
                     f"{key.rstrip('/')}/{Path(p).name}") for p in src["files"]]
    return out


_SAVED_AS = re.compile(r"saved as (\S+?):")


def build_folder(name: str, mirrors: Path, folder: Path) -> int:
    spec = spec_of(name)
    if name == "realdocs-dev":
        repos = [r for r in os.listdir(mirrors) if "+" in r]
        args = [a for r in repos for a in ("--repo", f"{r.replace('+', '/', 1)}="
                                           f"{git_dir(mirrors, r.replace('+', '/', 1))}")]
        subprocess.run([sys.executable, str(B / "realdocs_folder.py"), str(folder), *args],
                       check=True)
        return sum(1 for p in folder.rglob("*") if p.is_file())
    n = 0
    for repo, commit, path, dest in files_of(spec):
        got = subprocess.run(["git", f"--git-dir={git_dir(mirrors, repo)}", "show",
                              f"{commit}:{path}"], capture_output=True)
        if got.returncode != 0:  # a repository that could not be fetched (over the size limit)
            print(f"{name}: missing {repo}:{path}; its questions are left out", file=sys.stderr)
            continue
        data = got.stdout
        if dest.endswith(".gz") and not path.endswith(dest):
            import gzip

            data, dest = gzip.decompress(data), dest[:-3]
        target = folder / dest
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        n += 1
    return n


def folders(args: argparse.Namespace) -> None:
    for name in args.sets or SETS:
        folder, home = args.out / name / "docs", args.out / name / args.home
        if not folder.exists() or args.force:
            n = build_folder(name, args.mirrors, folder)
            print(f"{name}: {n} files in {folder}", file=sys.stderr)
        home.mkdir(parents=True, exist_ok=True)
        t = time.perf_counter()
        out = subprocess.run([args.ragctl, "index", str(folder), "-q", "--json"],
                             env={**os.environ, "RAGCTL_HOME": str(home)},
                             capture_output=True, text=True)
        summary = out.stdout.strip().splitlines()[-1:] or out.stderr.strip().splitlines()[-1:]
        print(f"{name}: indexed in {time.perf_counter() - t:.0f} s (exit {out.returncode}) "
              f"{(summary or [''])[0][:200]}", file=sys.stderr)


def ask(ragctl: str, home: Path, q: dict[str, Any]) -> tuple[dict[str, Any], int, float]:
    cmd = [ragctl, "ask", q["q"], "--json"] + (["--long"] if q["kind"] == "long" else [])
    t = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True,
                         env={**os.environ, "RAGCTL_HOME": str(home)})
    wall = time.perf_counter() - t
    try:
        answer = json.loads(out.stdout)
    except ValueError:
        answer = {"error": out.stderr.strip().splitlines()[-1:] or ["?"]}
    return answer, out.returncode, wall


def facts_covered(q: dict[str, Any], text: str) -> float:
    """The share of a long question's expected facts its answer states: a fact is stated
    when its words (SQuAD-normalized) are in the answer, in order, or four in five of them
    are."""
    from ragctl.text import normalize_answer

    have = normalize_answer(text)
    words = set(have.split())
    hit = 0
    for fact in q.get("facts", []):
        f = normalize_answer(fact)
        fw = f.split()
        if f and (f in have or (fw and sum(w in words for w in fw) >= 0.8 * len(fw))):
            hit += 1
    return hit / max(1, len(q.get("facts", [])))


def verdict_of(q: dict[str, Any], answer: dict[str, Any], code: int) -> tuple[str, float]:
    if q["kind"] == "long":
        if code == 3:
            return "missed", 0.0
        text = answer.get("answer_text") or answer.get("answer") or ""
        share = facts_covered(q, text)
        return ("right" if share >= LONG_RIGHT else "partly" if share > 0 else "wrong"), share
    return judge(q, answer, code), 0.0


OUTCOME = {"right": "right", "partly": "partly", "wrong": "wrong", "missed": "wrongly refused"}


def checks(home: Path, q: dict[str, Any], answer: dict[str, Any], code: int) -> dict[str, bool]:
    """Whether a printed answer cites a document naming none of the question's names, and
    whether its span is of a type the question rules out."""
    if code != 0 or q["kind"] in ("long",) or not answer.get("sources"):
        return {}
    from ragctl.ask.grounding import distinctive_names
    from ragctl.ask.question import question_type
    from ragctl.ask.rules import fits

    out: dict[str, bool] = {}
    qt = question_type(q["q"])
    if answer.get("kind") == "span" and qt.kind == "factoid":
        out["wrong_type"] = not fits(qt.expects, answer.get("raw_answer") or "")
    if distinctive_names(q["q"]):
        out["ungrounded"] = not _names_grounded(home, q["q"], answer["sources"])
    return out


_STORES: dict[str, Any] = {}


def _names_grounded(home: Path, question: str, sources: list[dict[str, Any]]) -> bool:
    from ragctl.ask.grounding import ground
    from ragctl.config import load_settings
    from ragctl.store.collection import Collection

    key = str(home)
    if key not in _STORES:
        os.environ["RAGCTL_HOME"] = key
        _STORES[key] = Collection.open(load_settings())
    g = ground(_STORES[key].store, question)
    if g.missing:
        return False
    return all(g.grounded(s["path"]) for s in sources)


def curve(points: list[tuple[float, bool]]) -> list[dict[str, float]]:
    """Answered accuracy against coverage: answered questions by confidence, best first."""
    pts = sorted(points, key=lambda p: -p[0])
    out = []
    for share in (0.2, 0.4, 0.6, 0.8, 1.0):
        k = max(1, round(share * len(pts)))
        if pts:
            out.append({"coverage": share, "accuracy": round(sum(r for _, r in pts[:k]) / k, 3),
                        "answered": k})
    return out


def run(args: argparse.Namespace) -> None:
    names = [n for n in (args.sets or SETS) if split_of(n) == args.split]
    test = args.split == "test"
    totals: dict[str, dict[str, dict[str, int]]] = {a: {} for a in ("set", "kind", "detail",
                                                                      "type", "all")}
    rows, walls, points, long_shares = [], [], [], []
    flagged = {"ungrounded": 0, "wrong_type": 0}
    commits = {}
    skipped: dict[str, int] = {}
    for name in names:
        spec = spec_of(name)
        commits[name] = subprocess.run(["git", "log", "-1", "--format=%H", "--",
                                        str(B / SETS[name])], capture_output=True, text=True,
                                       cwd=ROOT).stdout.strip()
        home = args.out / name / args.home
        docs = args.out / name / "docs"
        for n, q in enumerate(spec["questions"], start=1):
            if args.limit and n > args.limit:
                break
            source = q.get("source") or q.get("file", "")
            sources = source if isinstance(source, list) else [source] if source else []
            if name != "realdocs-dev" and any(
                    not (docs / s).exists() and not any(docs.glob(f"*/{Path(s).name}"))
                    for s in sources):
                skipped[name] = skipped.get(name, 0) + 1  # its file could not be had
                continue
            answer, code, wall = ask(args.ragctl, home, q)
            walls.append(wall)
            verdict, share = verdict_of(q, answer, code)
            if q["kind"] == "long" and code != 3:
                long_shares.append(share)
            if q["kind"] == "unanswerable":
                outcome = "rightly refused" if verdict == "right" else "answered not-stated"
            else:
                outcome = OUTCOME[verdict]
            for k, v in checks(home, q, answer, code).items():
                flagged[k] += int(v)
            if code == 0:
                points.append((float(answer.get("confidence") or 0.0),
                               q["kind"] != "unanswerable" and verdict == "right"))
            keys = {"set": name, "kind": q["kind"], "detail": q.get("detail", "?"),
                    "type": "folder" if len(sources) > 1 else
                    Path(sources[0] if sources else "").suffix.lstrip(".").lower() or "?",
                    "all": "all"}
            for axis, key in keys.items():
                cell = totals[axis].setdefault(key, {})
                cell[outcome] = cell.get(outcome, 0) + 1
            if not test:
                text = answer.get("answer", "") if code != 3 else "(not found)"
                rows.append({"set": name, "n": n, "question": q["q"], "kind": q["kind"],
                             "detail": q.get("detail"), "verdict": verdict, "exit": code,
                             "answer": text, "expected": q.get("answers") or q.get("facts"),
                             "sources": [Path(c["path"]).name
                                         for c in answer.get("sources", [])],
                             "reason": answer.get("abstain_reason"),
                             "rules": answer.get("rules"), "wall_s": round(wall, 2),
                             # how it was answered, and the best span's signals (to fit
                             # answerability on these questions' kinds of documents)
                             "answer_kind": answer.get("kind"),
                             "confidence": answer.get("confidence"),
                             "best": next((c for c in answer.get("candidates") or []
                                           if isinstance(c, dict) and "margin" in c), None),
                             "candidates": [c for c in answer.get("candidates") or []
                                            if isinstance(c, dict) and "margin" in c]})
                print(f"{name} {n:>3} {verdict:<7} {q['q'][:60]:<60} → {text[:60]}",
                      file=sys.stderr)
    n_all = sum(totals["all"]["all"].values())
    good = sum(v for k, v in totals["all"]["all"].items() if k in ("right", "rightly refused"))
    ns = [c for c in totals["kind"].get("unanswerable", {}).items()]
    refused_ns = dict(ns).get("rightly refused", 0)
    answerable = {k: v for k, v in totals["all"]["all"].items()
                  if k in ("right", "partly", "wrong", "wrongly refused")}
    table = [(f"{axis}: {key}", ", ".join(f"{v} {k}" for k, v in sorted(cell.items())), "")
             for axis in ("set", "kind", "detail", "type")
             for key, cell in sorted(totals[axis].items())]
    table += [
        ("right or rightly refused", f"{good} of {n_all} ({100 * good / max(1, n_all):.0f}%)",
         "≥ 85%"),
        ("not-stated refused", f"{refused_ns} of {sum(dict(ns).values())}", "≥ 70%"),
        ("answerable refused", f"{answerable.get('wrongly refused', 0)} of "
         f"{sum(answerable.values())}", "≤ 5%"),
        ("cited to a document naming none of the question's names",
         str(flagged["ungrounded"]), "0"),
        ("printed answers of the wrong type", str(flagged["wrong_type"]), "0"),
        ("long questions: expected facts stated (answered)",
         f"{100 * sum(long_shares) / max(1, len(long_shares)):.0f}% of {len(long_shares)}",
         "≥ 60%"),
        ("wall time per question, p50", f"{median(walls):.2f} s" if walls else "-", ""),
    ]
    frozen = ", ".join(f"{k} {v[:10]}" for k, v in commits.items())
    print_table(f"{args.split} split, {n_all} questions (questions at {frozen})", table)
    if skipped:
        print(f"left out (their files could not be had): {skipped}")
    result: dict[str, Any] = {"split": args.split, "questions_commits": commits, "n": n_all,
                              "left_out": skipped,
                              "right_or_rightly_refused": good, "totals": totals,
                              "flagged": flagged, "curve": curve(points),
                              "long_facts_share": long_shares and
                              round(sum(long_shares) / len(long_shares), 3)}
    if not test:
        result["questions"] = rows
    print(f"\nwrote {save(args.name or f'benchmark-{args.split}', result)}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    for cmd in ("folders", "run"):
        p = sub.add_parser(cmd)
        p.add_argument("--out", type=Path, required=True, help="folders and homes go here")
        p.add_argument("--sets", nargs="*", choices=list(SETS))
        p.add_argument("--ragctl", default=str(ROOT / ".venv" / "bin" / "ragctl"))
        p.add_argument("--home", default="home", help="each set's home: OUT/<set>/HOME")
    f = sub.choices["folders"]
    f.add_argument("--mirrors", type=Path, required=True)
    f.add_argument("--force", action="store_true", help="copy the files again")
    r = sub.choices["run"]
    r.add_argument("--split", choices=("dev", "test"), required=True)
    r.add_argument("--limit", type=int, default=0, help="the first N questions of each set")
    r.add_argument("--name", help="results file name (default benchmark-<split>)")
    args = ap.parse_args()
    folders(args) if args.cmd == "folders" else run(args)


if __name__ == "__main__":
    main()
