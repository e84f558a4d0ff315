"""The generator's own words: with ``free``, without a reader, in the FULL and PSG context
modes, and RE-RAG's marginalization over the kept passages; each sentence is checked
against the context it cites (:func:`~ragctl.ask.verify.verify`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from ragctl.ask.verify import strip_citations, verify
from ragctl.models.generate import build_prompt
from ragctl.models.relevance import re_weights
from ragctl.records import Hit, Sentence
from ragctl.text import normalize_answer

if TYPE_CHECKING:
    from ragctl.ask.stages import AskOptions, Evidence, LoadedStages
    from ragctl.records import Answer


def answer(stages: LoadedStages, ans: Answer, ev: Evidence, opts: AskOptions,
           on_token: Callable[[str], None] | None) -> None:
    """The generator's own words from the context, checked against it."""
    question, kept, per_passage, context = ev.question, ev.kept, ev.per_passage, ev.context
    ans.kind = "free"
    gen = stages.generator
    ans.models["generator"] = gen.name
    ans.tokens["full_context"] = gen.count_tokens(" ".join(h.text for h in kept))
    ans.tokens["context"] = gen.count_tokens(" ".join(s.text for s in context))
    t = time.perf_counter()
    if opts.marginalize:
        weights = ev.probs[[ev.order[k] for k in ev.kept_order]]
        text = marginalize(stages, question, kept, per_passage, weights, ans, opts)
    else:
        prompt = build_prompt(question, [s.text for s in context])
        completion = gen.complete(prompt, max_tokens=opts.max_tokens, on_token=on_token)
        text = completion.text
        ans.tokens["prompt"] = completion.prompt_tokens
        ans.tokens["completion"] = completion.completion_tokens
        ans.timings["first_token"] = completion.first_token_seconds
        ans.timings["tokens_per_second"] = completion.tokens_per_second
    ans.timings["generate"] = time.perf_counter() - t
    ans.raw_answer = text.strip()
    t = time.perf_counter()
    checked = verify(text, context, stages.checker, threshold=opts.support_threshold)
    ans.timings["verify"] = time.perf_counter() - t
    ans.removed_citations = checked.removed_citations
    ans.unsupported_citations = checked.unsupported_citations
    ans.notes = checked.notes()
    sentences = [s for s in checked.sentences if s.supported]
    ans.sentences = sentences
    ans.answer = " ".join(
        s.text + "".join(f" [{n}]" for n in s.citations) for s in sentences).strip()
    cited = sorted({n for s in sentences for n in s.citations})
    ans.sources = [ans.context[n - 1] for n in cited]


def marginalize(stages: LoadedStages, question: str, kept: Sequence[Hit],
                per_passage: dict[int, list[Sentence]], probs: np.ndarray, ans: Answer,
                opts: AskOptions) -> str:
    """RE-RAG eq. 6: P(y) = Σ_j P_RE(q, c_j) · P_G(y | q, c_j) over the kept passages."""
    gen = stages.generator
    prompts = [build_prompt(question, [s.text for s in per_passage[h.passage_id]])
               for h in kept]
    weights = re_weights([float(p) for p in probs])
    candidates: dict[str, str] = {}
    for prompt in prompts:
        text, _ = strip_citations(gen.complete(prompt, max_tokens=opts.max_tokens).text)
        key = normalize_answer(text)
        if key and key not in candidates:
            candidates[key] = text
    if not candidates:
        return ""
    scored = []
    for text in candidates.values():
        p = sum(float(w) * float(np.exp(gen.logprob(prompt, " " + text)))
                for w, prompt in zip(weights, prompts, strict=True))
        scored.append((p, text))
    scored.sort(reverse=True)
    total = sum(p for p, _ in scored) or 1.0
    ans.candidates = [{"answer": t, "probability": p, "share": p / total} for p, t in scored]
    ans.confidence = scored[0][0]
    return scored[0][1]
