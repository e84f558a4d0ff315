"""Readers for public evaluation data, all turned into one shape: passages + examples.

Formats: SQuAD JSON (v1.1, and v2.0 with ``is_impossible``); the FilCo/DPR JSONL
``{question, answers, ctxs[{title, text}]}`` (gzip too); HotpotQA distractor JSON
(sentence-level ``supporting_facts``); HotpotQA paragraph JSONL (``is_supporting``);
BEIR-style corpus / queries / qrels (SciFact). The splits of the shared evaluation data
are built in: SQuAD even articles = dev, odd = report; NQ oracle first 2,000 lines = dev,
the rest = report; HotpotQA and SciFact are evaluation only (every split is all of it).
The split ``all`` reads every question of a training file; the shared files that hold a
report split (:data:`SPLIT_FILES`) refuse it.
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragctl.errors import RagctlError

FORMATS = ("squad", "dpr", "hotpot", "hotpot-paragraphs", "beir")
ALIASES = {"nq": "dpr", "scifact": "beir"}  # the shared data by name
NAMES = ("squad", "nq", "dpr", "hotpot", "hotpot-paragraphs", "scifact", "beir")
NQ_DEV_LINES = 2000
SPLITS = ("dev", "report", "all")
# the shared evaluation files whose report split lives beside their dev split
SPLIT_FILES = ("dev-v1.1.json", "nq-open-oracle.jsonl.gz", "nq-open-oracle.jsonl")


@dataclass(frozen=True)
class Passage:
    id: str
    title: str
    text: str


@dataclass(frozen=True)
class Example:
    id: str
    question: str
    answers: tuple[str, ...]
    gold_passages: tuple[str, ...] = ()
    supporting: tuple[str, ...] = ()  # gold sentences
    answerable: bool = True
    contexts: tuple[str, ...] = ()  # the passages given with the question, in rank order


@dataclass
class Dataset:
    name: str
    split: str
    passages: list[Passage] = field(default_factory=list)
    examples: list[Example] = field(default_factory=list)


def detect_format(path: Path) -> str:
    if path.is_dir():
        return "beir"
    name = path.name.lower()
    if name.endswith((".jsonl", ".jsonl.gz")):
        first = _first_line(path)
        if "question_text" in first and "contexts" in first:
            return "hotpot-paragraphs"
        return "dpr"
    head = path.read_text(errors="replace")[:2000]
    if '"supporting_facts"' in head or head.lstrip().startswith("[{"):
        return "hotpot"
    return "squad"


def _first_line(path: Path) -> dict[str, Any]:
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rt") as f:
        line = f.readline()
    try:
        first: dict[str, Any] = json.loads(line)
    except ValueError:
        raise RagctlError(f"{path}: the first line is not JSON") from None
    return first


def _lines(path: Path) -> list[dict[str, Any]]:
    opener = gzip.open if path.name.endswith(".gz") else open
    out = []
    with opener(path, "rt") as f:
        for n, line in enumerate(f, start=1):
            if line.strip():
                try:
                    out.append(json.loads(line))
                except ValueError:
                    raise RagctlError(f"{path}:{n}: not a JSON line") from None
    return out


def load(path: Path, *, fmt: str | None = None, split: str = "report") -> Dataset:
    """Read a dataset file or folder; ``fmt`` is a format or a name of :data:`NAMES` (None:
    detected); ``split`` is 'dev' or 'report' (see the module doc)."""
    path = Path(path)
    if not path.exists():
        raise RagctlError(f"{path} does not exist")
    if split not in SPLITS:
        raise RagctlError(f"split must be one of {', '.join(SPLITS)}, not {split!r}")
    if split == "all" and path.name in SPLIT_FILES:
        raise RagctlError(f"{path} holds a report split beside its dev split: read it with "
                          "split 'dev' (or 'report'), not 'all'")
    fmt = ALIASES.get(fmt, fmt) if fmt else detect_format(path)
    readers = {"squad": read_squad, "dpr": read_dpr, "hotpot": read_hotpot,
               "hotpot-paragraphs": read_hotpot_paragraphs, "beir": read_beir}
    if fmt not in readers:
        raise RagctlError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    try:
        return readers[fmt](path, split)
    except (KeyError, TypeError, IndexError) as e:
        raise RagctlError(f"{path} does not look like {fmt} data (missing {e})") from None


def read_squad(path: Path, split: str) -> Dataset:
    data = json.loads(path.read_text())["data"]
    parity = {"dev": 0, "report": 1}.get(split)
    ds = Dataset("squad", split)
    for i, article in enumerate(data):
        if parity is not None and i % 2 != parity:
            continue
        for k, para in enumerate(article["paragraphs"]):
            pid = f"{i}-{k}"
            ds.passages.append(Passage(pid, article["title"], para["context"]))
            for q in para["qas"]:
                impossible = bool(q.get("is_impossible", False))
                answers = tuple(a["text"] for a in q.get("answers", []))
                ds.examples.append(Example(str(q["id"]), q["question"], answers,
                                           gold_passages=() if impossible else (pid,),
                                           answerable=not impossible and bool(answers),
                                           contexts=(pid,)))
    return ds


def read_dpr(path: Path, split: str) -> Dataset:
    rows = _lines(path)
    if "nq-open-oracle" in path.name:
        rows = rows[:NQ_DEV_LINES] if split == "dev" else rows[NQ_DEV_LINES:]
    ds = Dataset(path.name.split(".")[0], split)
    seen: dict[tuple[str, str], str] = {}
    for n, row in enumerate(rows):
        golds, contexts = [], []
        for ctx in row.get("ctxs", []):
            key = (ctx.get("title", ""), ctx["text"])
            if key not in seen:
                seen[key] = f"p{len(seen)}"
                ds.passages.append(Passage(seen[key], key[0], key[1]))
            contexts.append(seen[key])
            if ctx.get("isgold") or ctx.get("hasanswer"):
                golds.append(seen[key])
        answers = tuple(str(a) for a in row["answers"])
        ds.examples.append(Example(str(row.get("id", n)), row["question"], answers,
                                   gold_passages=tuple(golds), answerable=bool(answers),
                                   contexts=tuple(contexts)))
    return ds


def read_hotpot(path: Path, split: str) -> Dataset:
    rows = json.loads(path.read_text())
    ds = Dataset("hotpot", split)
    seen: dict[str, str] = {}
    for n, row in enumerate(rows):
        ctx = dict(zip(row["context"]["title"], row["context"]["sentences"], strict=True))
        for title, sents in ctx.items():
            if title not in seen:
                seen[title] = f"h{len(seen)}"
                ds.passages.append(Passage(seen[title], title, "".join(sents).strip()))
        facts = list(zip(row["supporting_facts"]["title"], row["supporting_facts"]["sent_id"],
                         strict=True))
        support = tuple(ctx[t][k].strip() for t, k in facts if t in ctx and k < len(ctx[t]))
        golds = tuple(dict.fromkeys(seen[t] for t, _ in facts if t in seen))
        ds.examples.append(Example(str(row.get("_id", n)), row["question"], (row["answer"],),
                                   gold_passages=golds, supporting=support,
                                   contexts=tuple(seen[t] for t in ctx)))
    return ds


def read_hotpot_paragraphs(path: Path, split: str) -> Dataset:
    ds = Dataset("hotpot-paragraphs", split)
    seen: dict[tuple[str, str], str] = {}
    for n, row in enumerate(_lines(path)):
        golds, contexts = [], []
        for c in row["contexts"]:
            key = (c["title"], c["paragraph_text"])
            if key not in seen:
                seen[key] = f"p{len(seen)}"
                ds.passages.append(Passage(seen[key], key[0], key[1]))
            contexts.append(seen[key])
            if c.get("is_supporting"):
                golds.append(seen[key])
        answers = tuple(s for a in row["answers_objects"] for s in a.get("spans", []))
        ds.examples.append(Example(str(row.get("question_id", n)), row["question_text"],
                                   answers, gold_passages=tuple(golds),
                                   contexts=tuple(contexts)))
    return ds


def read_beir(path: Path, split: str) -> Dataset:
    """A BEIR folder (corpus.jsonl, queries.jsonl, qrels/test.tsv); SciFact's layout too."""
    corpus = path / "corpus.jsonl"
    if not corpus.exists() and (path.parent / "corpus.jsonl").exists():
        corpus = path.parent / "corpus.jsonl"
    ds = Dataset(path.name if path.name != "beir_format" else path.parent.name, split)
    for row in _lines(corpus):
        text = row.get("text") or " ".join(row.get("abstract", []))
        ds.passages.append(Passage(str(row.get("_id", row.get("doc_id"))),
                                   row.get("title", ""), text))
    qrels: dict[str, list[str]] = {}
    qfile = path / "qrels" / "test.tsv"
    for line in qfile.read_text().splitlines()[1:]:
        qid, did, score = line.split("\t")[:3]
        if float(score) > 0:
            qrels.setdefault(qid, []).append(did)
    for row in _lines(path / "queries.jsonl"):
        qid = str(row["_id"])
        if qid in qrels:
            ds.examples.append(Example(qid, row["text"], (), gold_passages=tuple(qrels[qid]),
                                       contexts=tuple(qrels[qid])))
    return ds
