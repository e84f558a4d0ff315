"""Put together the real-documents folder that bench/realdocs.json's questions are about.

The files come from public repositories' example and test folders ("sources" in the
JSON). Give each repository as a local git directory (`--repo owner/name=PATH`) or let
the script clone it (`git clone --depth 1`, needs the network; ragctl itself never does).
The choice is fixed, so two runs give the same folder:

    python bench/realdocs_folder.py OUT [--repo mozilla/readability=/path/to/repo.git ...]
    RAGCTL_HOME=H ragctl index OUT && python bench/realdocs.py --home H
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import ROOT

WEB_PAGES = 24  # the pages the questions cite, then the first others by name
MAIL = 40
PEPS = ("0001", "0008", "0013", "0020", "0257", "0440", "0572", "0703", "0723")
SCANS = ("c02-22.pdf", "linn.pdf", "skew.pdf", "cardinal.pdf", "typewriter.png",
         "multipage.pdf", "epson.pdf", "kcs.pdf")


def _web(paths: list[str]) -> dict[str, str]:
    pages = sorted({p.split("/")[2] for p in paths
                    if p.startswith("test/test-pages/") and p.endswith("/source.html")})
    cited = {Path(q["source"]).stem for q in _questions() if q.get("source", "").startswith("web/")}
    chosen = [p for p in pages if p in cited]
    chosen += [p for p in pages if p not in cited][: max(0, WEB_PAGES - len(chosen))]
    return {f"test/test-pages/{p}/source.html": f"web/{p}.html" for p in sorted(chosen)}


def _mail(paths: list[str]) -> dict[str, str]:
    eml = sorted(p for p in paths if p.startswith("spec/fixtures/emails/") and p.endswith(".eml"))
    return {p: f"mail/{Path(p).name}" for p in eml[:MAIL]}


def _under(folders: tuple[str, ...], suffixes: tuple[str, ...], dest: str,
           names: tuple[str, ...] = ()) -> Callable[[list[str]], dict[str, str]]:
    def pick(paths: list[str]) -> dict[str, str]:
        return {p: f"{dest}/{Path(p).name}" for p in sorted(paths)
                if p.startswith(folders) and p.endswith(suffixes)
                and (not names or Path(p).name in names)}
    return pick


RECIPE: dict[str, Callable[[list[str]], dict[str, str]]] = {
    "python-openxml/python-docx": _under(("tests/test_files/", "features/steps/test_files/"),
                                         (".docx",), "docx"),
    "invoice-x/invoice2data": _under(("tests/compare/",), (".pdf",), "invoices"),
    "mikel/mail": _mail,
    "python/peps": _under(("peps/",), (".rst",), "notes",
                          tuple(f"pep-{n}.rst" for n in PEPS)),
    "jsvine/pdfplumber": _under(("examples/pdfs/", "tests/pdfs/"), (".pdf",), "pdf"),
    "ocrmypdf/OCRmyPDF": _under(("tests/resources/",), SCANS, "scans", SCANS),
    "mozilla/readability": _web,
}


def _questions() -> list[dict[str, str]]:
    return json.loads((ROOT / "bench" / "realdocs.json").read_text())["questions"]


def _git(repo: Path, *args: str) -> bytes:
    return subprocess.run(["git", f"--git-dir={repo}", *args], check=True,
                          capture_output=True).stdout


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--repo", action="append", default=[], metavar="OWNER/NAME=GITDIR")
    args = ap.parse_args()
    given = dict(r.split("=", 1) for r in args.repo)
    with tempfile.TemporaryDirectory() as tmp:
        total = 0
        for name, pick in RECIPE.items():
            if name in given:
                repo = Path(given[name])
            else:
                repo = Path(tmp) / name.replace("/", "+")
                subprocess.run(["git", "clone", "-q", "--bare", "--depth", "1",
                                f"https://github.com/{name}", str(repo)], check=True)
            paths = _git(repo, "ls-tree", "-r", "--name-only", "HEAD").decode().splitlines()
            chosen = pick(paths)
            for src, dest in chosen.items():
                target = args.out / dest
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(_git(repo, "show", f"HEAD:{src}"))
            print(f"{name}: {len(chosen)} files")
            total += len(chosen)
    missing = [q["source"] for q in _questions()
               if q.get("source") and not (args.out / q["source"]).exists()]
    print(f"{total} files in {args.out}" + (f"; missing: {missing}" if missing else ""))


if __name__ == "__main__":
    main()
