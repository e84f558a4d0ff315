"""Silver labels (FilCo §2.2): which sentences of the retrieved passages support the answer.

Every sentence of every passage is scored with three measures:

- **StrInc** — the sentence contains the answer (normalized); the selected sentence is the
  first one, in passage rank order, that does;
- **Lexical** — unigram F1 between the sentence and the answer (the question for
  claim-verification data without answers); the best sentence if its F1 reaches λ = 0.5;
- **CXMI** — log M_gen(o | t ⊕ q) − log M_gen(o | q) from the generator; the best sentence
  if the ratio exceeds 1 (the log ratio exceeds 0).

With a generator each passage also gets log M_gen(o | p ⊕ q), the signal the relevance
estimator is trained to match (RE-RAG eq. 8–10), and ``has_answer`` (StrInc on the
passage) for the weak-label alternative. One JSON line per example; a run appends and can
be resumed.
"""

from __future__ import annotations

import json
import math
import os
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ragctl.errors import RagctlError, missing_dependency
from ragctl.text import contains_answer, passage_text, tokens, unigram_f1

MEASURES = ("strinc", "lexical", "cxmi")
LEXICAL_LAMBDA = 0.5
CXMI_THRESHOLD = 1.0  # as a ratio


@dataclass
class SilverSentence:
    text: str
    start: int
    end: int
    strinc: bool
    lexical: float
    cxmi: float | None = None  # log ratio


@dataclass
class SilverPassage:
    title: str
    text: str
    has_answer: bool
    sentences: list[SilverSentence] = field(default_factory=list)
    answer_logprob: float | None = None  # log M_gen(o | p ⊕ q)


@dataclass
class SilverExample:
    id: str
    question: str
    answers: list[str]
    passages: list[SilverPassage]
    selected: dict[str, list[list[int]]] = field(default_factory=dict)  # measure → [[p, s]]
    no_context_logprob: float | None = None

    def to_json(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> SilverExample:
        passages = [SilverPassage(p["title"], p["text"], bool(p["has_answer"]),
                                  [SilverSentence(**s) for s in p["sentences"]],
                                  p.get("answer_logprob"))
                    for p in d["passages"]]
        return cls(str(d["id"]), d["question"], list(d["answers"]), passages,
                   {k: [list(x) for x in v] for k, v in d.get("selected", {}).items()},
                   d.get("no_context_logprob"))

    def sentence(self, ref: Sequence[int]) -> SilverSentence:
        return self.passages[ref[0]].sentences[ref[1]]


@dataclass(frozen=True)
class SilverInput:
    """One question with its answers and passages (title, text) in rank order."""

    id: str
    question: str
    answers: tuple[str, ...]
    passages: tuple[tuple[str, str], ...]


# measures ------------------------------------------------------------------------------
def lexical_score(sentence: str, answers: Sequence[str], question: str) -> float:
    """Unigram F1 against the best answer, or against the question when there is none."""
    targets = [a for a in answers if tokens(a)] or [question]
    return max(unigram_f1(sentence, t) for t in targets)


def select_strinc(ex: SilverExample) -> list[list[int]]:
    for p, passage in enumerate(ex.passages):
        for s, sent in enumerate(passage.sentences):
            if sent.strinc:
                return [[p, s]]
    return []


def select_lexical(ex: SilverExample, lam: float = LEXICAL_LAMBDA) -> list[list[int]]:
    best, ref = -1.0, None
    for p, passage in enumerate(ex.passages):
        for s, sent in enumerate(passage.sentences):
            if sent.lexical > best:
                best, ref = sent.lexical, [p, s]
    return [ref] if ref is not None and best >= lam else []


def select_cxmi(ex: SilverExample, threshold: float = CXMI_THRESHOLD) -> list[list[int]]:
    best, ref = -math.inf, None
    for p, passage in enumerate(ex.passages):
        for s, sent in enumerate(passage.sentences):
            if sent.cxmi is not None and sent.cxmi > best:
                best, ref = sent.cxmi, [p, s]
    return [ref] if ref is not None and best > math.log(threshold) else []


SELECTORS: dict[str, Callable[[SilverExample], list[list[int]]]] = {
    "strinc": select_strinc, "lexical": select_lexical, "cxmi": select_cxmi}


# generator scores ----------------------------------------------------------------------
def cxmi_prompt(question: str, context: Sequence[str]) -> str:
    from ragctl.models.generate import build_prompt

    return build_prompt(question, context)


class AnswerScorer(ABC):
    """log M_gen(answer | prompt) for a batch of prompts."""

    name: str

    @abstractmethod
    def logprobs(self, prompts: Sequence[str], answer: str) -> list[float]: ...

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release native resources."""


class LlamaAnswerScorer(AnswerScorer):
    """The llama.cpp generator; prompts share their prefix in its KV cache."""

    def __init__(self, generator: Any) -> None:
        self.generator = generator
        self.name = generator.name

    def logprobs(self, prompts: Sequence[str], answer: str) -> list[float]:
        return [self.generator.logprob(p, " " + answer.strip()) for p in prompts]

    def close(self) -> None:
        self.generator.close()


class HFAnswerScorer(AnswerScorer):
    """A local Hugging Face causal LM directory, scored in padded batches with torch."""

    def __init__(self, path: Path, *, batch_size: int = 8, device: str = "auto") -> None:
        try:
            import torch
            from transformers import AutoModelForCausalLM, AutoTokenizer
        except ImportError:
            raise missing_dependency("transformers", "train") from None
        path = Path(path)
        if not (path / "config.json").exists():
            raise RagctlError(f"{path} is not a Hugging Face model directory (no config.json)")
        self.torch = torch
        self.device = ("cuda" if torch.cuda.is_available() else "cpu") if device == "auto" \
            else device
        self.tokenizer = AutoTokenizer.from_pretrained(str(path))
        model: Any = AutoModelForCausalLM.from_pretrained(str(path))
        self.model = model.to(self.device).eval()
        self.batch_size = batch_size
        self.name = path.name

    def logprobs(self, prompts: Sequence[str], answer: str) -> list[float]:
        torch = self.torch
        out: list[float] = []
        tok = self.tokenizer
        ans = tok(" " + answer.strip(), add_special_tokens=False)["input_ids"]
        for i in range(0, len(prompts), self.batch_size):
            part = prompts[i:i + self.batch_size]
            seqs = [tok(p)["input_ids"] + ans for p in part]
            width = max(len(s) for s in seqs)
            pad = tok.pad_token_id if tok.pad_token_id is not None else 0
            ids = torch.tensor([s + [pad] * (width - len(s)) for s in seqs], device=self.device)
            mask = torch.tensor([[1] * len(s) + [0] * (width - len(s)) for s in seqs],
                                device=self.device)
            with torch.no_grad():
                logits = self.model(input_ids=ids, attention_mask=mask).logits.float()
            logp = torch.log_softmax(logits, dim=-1)
            for b, s in enumerate(seqs):
                n = len(s)
                positions = range(n - len(ans) - 1, n - 1)
                out.append(float(sum(logp[b, j, s[j + 1]] for j in positions)))
        return out


def load_answer_scorer(name: str, *, n_ctx: int = 2048) -> AnswerScorer:
    """A generator of the registry (a name or a GGUF file), or a Hugging Face causal-LM
    directory."""
    from ragctl.config import Settings
    from ragctl.models import registry as models

    path = Path(name).expanduser()
    if path.is_dir() and (path / "config.json").exists():
        return HFAnswerScorer(path)
    return LlamaAnswerScorer(models.load("generator", name, Settings(n_ctx=n_ctx)))


# labelling -----------------------------------------------------------------------------
class SilverLabeler:
    def __init__(self, *, measures: Sequence[str] = MEASURES,
                 scorer: AnswerScorer | None = None, passage_logprobs: bool = True,
                 max_sentence_words: int = 200) -> None:
        from ragctl.index.sentences import SentenceSplitter

        unknown = [m for m in measures if m not in MEASURES]
        if unknown:
            raise RagctlError(f"unknown measure {unknown[0]!r}; choose from {', '.join(MEASURES)}")
        if "cxmi" in measures and scorer is None:
            raise RagctlError("the CXMI measure needs a generator")
        self.measures = tuple(measures)
        self.scorer = scorer
        self.passage_logprobs = passage_logprobs and scorer is not None
        self.splitter = SentenceSplitter(max_words=max_sentence_words)

    def label(self, item: SilverInput) -> SilverExample:
        answers = [a for a in item.answers if a.strip()]
        spans = self.splitter.split_many([t for _, t in item.passages])
        passages = []
        for (title, text), sents in zip(item.passages, spans, strict=True):
            passages.append(SilverPassage(
                title, text, bool(answers) and contains_answer(text, answers),
                [SilverSentence(s.text, s.start, s.end,
                                bool(answers) and contains_answer(s.text, answers),
                                round(lexical_score(s.text, answers, item.question), 4))
                 for s in sents]))
        ex = SilverExample(item.id, item.question, answers, passages)
        if self.scorer is not None and answers:
            self._generator_scores(ex, sentences="cxmi" in self.measures,
                                   passages=self.passage_logprobs)
        ex.selected = {m: SELECTORS[m](ex) for m in self.measures}
        return ex

    def _generator_scores(self, ex: SilverExample, *, sentences: bool, passages: bool) -> None:
        """One batch per example: no context, each passage, each sentence."""
        assert self.scorer is not None
        answer = ex.answers[0]
        prompts = [cxmi_prompt(ex.question, [])]
        for p in ex.passages:
            if passages:
                prompts.append(cxmi_prompt(ex.question, [passage_text(p.title, p.text)]))
            if sentences:
                prompts.extend(cxmi_prompt(ex.question, [s.text]) for s in p.sentences)
        lps = iter(self.scorer.logprobs(prompts, answer))
        base = next(lps)
        ex.no_context_logprob = round(base, 4)
        for p in ex.passages:
            if passages:
                p.answer_logprob = round(next(lps), 4)
            if sentences:
                for s in p.sentences:
                    s.cxmi = round(next(lps) - base, 4)


@dataclass
class SilverRun:
    written: int = 0
    skipped_done: int = 0
    skipped_bad: int = 0
    selected: dict[str, int] = field(default_factory=dict)


def read_silver(path: Path) -> Iterator[SilverExample]:
    path = Path(path)
    if not path.exists():
        raise RagctlError(f"{path} does not exist")
    with path.open(encoding="utf-8") as f:
        for n, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                yield SilverExample.from_dict(json.loads(line))
            except (ValueError, KeyError, TypeError) as e:
                raise RagctlError(f"{path}:{n}: not a silver-label line ({e})") from None


def _done_ids(path: Path) -> set[str]:
    """Ids already written; a torn last line (an interrupted run) is cut off."""
    if not path.exists():
        return set()
    data = path.read_bytes()
    keep = data.rfind(b"\n") + 1
    if keep < len(data):
        with path.open("r+b") as f:
            f.truncate(keep)
    done = set()
    for line in data[:keep].splitlines():
        if line.strip():
            try:
                done.add(str(json.loads(line)["id"]))
            except (ValueError, KeyError):
                continue
    return done


def write_silver(items: Iterable[SilverInput], out: Path, labeler: SilverLabeler, *,
                 resume: bool = True,
                 progress: Callable[[int], None] | None = None) -> SilverRun:
    """Label ``items`` into ``out`` (JSONL), skipping ids already there when resuming."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    if not resume and out.exists():
        out.unlink()
    done = _done_ids(out)
    run = SilverRun()
    with out.open("a", encoding="utf-8") as f:
        for item in items:
            if item.id in done:
                run.skipped_done += 1
            elif not item.passages or not item.question.strip():
                run.skipped_bad += 1
            else:
                ex = labeler.label(item)
                f.write(ex.to_json() + "\n")
                f.flush()
                run.written += 1
                for m, refs in ex.selected.items():
                    run.selected[m] = run.selected.get(m, 0) + bool(refs)
            if progress is not None:
                progress(1)
        os.fsync(f.fileno())
    return run


# inputs --------------------------------------------------------------------------------
def inputs_from_dataset(path: Path, *, fmt: str | None = None, split: str = "dev",
                        limit: int | None = None, seed: int = 0) -> list[SilverInput]:
    """The examples of a dataset file with their passages; ``limit`` draws a seeded sample."""
    import random

    from ragctl.eval.datasets import load

    ds = load(path, fmt=fmt, split=split)
    by_id = {p.id: p for p in ds.passages}
    examples = [ex for ex in ds.examples if ex.question.strip()]
    if limit is not None and limit < len(examples):
        examples = random.Random(seed).sample(examples, limit)
    out = []
    for ex in examples:
        ctx = tuple((by_id[c].title, by_id[c].text) for c in ex.contexts if c in by_id)
        out.append(SilverInput(ex.id, ex.question, ex.answers, ctx))
    return out


def with_retrieved_passages(items: Sequence[SilverInput], retriever: Any, *, top_k: int,
                            replace: bool = False) -> list[SilverInput]:
    """Give questions without passages (all of them with ``replace``) the top ``top_k``
    passages of a ragctl index."""
    out = []
    for item in items:
        if item.passages and not replace:
            out.append(item)
            continue
        hits = retriever.search(item.question, limit=top_k)
        out.append(SilverInput(item.id, item.question, item.answers,
                               tuple((h.title, h.text) for h in hits)))
    return out


# the whole job ---------------------------------------------------------------------------
ProgressFactory = Callable[[str, int | None], AbstractContextManager[Callable[[int], None]]]


def _no_progress(description: str, total: int | None
                 ) -> AbstractContextManager[Callable[[int], None]]:
    return nullcontext(lambda n: None)


@dataclass(frozen=True)
class SilverJob:
    """What ``ragctl silver`` was asked to do."""

    out: Path
    data: Path | None = None  # a dataset file; None to write questions --from-index
    fmt: str | None = None
    split: str = "dev"
    limit: int | None = None
    measures: tuple[str, ...] = ("strinc", "lexical")
    generator: str = "gemma-3-270m"
    passage_logprobs: bool | None = None  # None: when a generator is loaded
    index: str | None = None  # retrieve passages from this index
    top_k: int = 8
    retrieve: bool = False  # for every question, not only those without passages
    from_index: str | None = None
    questions: int = 200
    seed: int = 0
    restart: bool = False
    max_sentence_words: int = 200


@dataclass
class SilverReport:
    run: SilverRun
    synth: Any = None  # SynthStats with --from-index
    without_passages: int = 0
