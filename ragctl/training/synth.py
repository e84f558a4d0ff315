"""Training examples from the user's own documents, for people without labelled data.

Sample sentences from an index, have the local generator write a question each sentence
answers (with its short answer), and keep a question only if the answer is in the
sentence, the question does not give it away, and retrieval finds the source passage
again among the top k (the round-trip check). The kept questions get the retrieved
passages, ready for silver labelling.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ragctl.config import Settings
from ragctl.errors import RagctlError
from ragctl.text import contains_answer, normalize_answer
from ragctl.training.silver import AnswerScorer, SilverInput

PROMPT = (
    "Write a question that the sentence answers, and the short answer.\n\n"
    "Sentence: The Eiffel Tower was completed in 1889 for the World's Fair.\n"
    "Question: When was the Eiffel Tower completed?\nAnswer: 1889\n\n"
    "Sentence: Marie Curie was born in Warsaw, then part of the Russian Empire.\n"
    "Question: Where was Marie Curie born?\nAnswer: Warsaw\n\n"
    "Sentence: {sentence}\nQuestion:"
)


@dataclass
class SynthStats:
    tried: int = 0
    unparsed: int = 0
    answer_not_in_sentence: int = 0
    gives_answer_away: int = 0
    not_found_again: int = 0
    kept: int = 0


def parse(text: str) -> tuple[str, str] | None:
    """'Question?\\nAnswer: x' → (question, answer)."""
    if "Answer:" not in text:
        return None
    q, _, rest = text.partition("Answer:")
    question = " ".join(q.split())
    answer = " ".join(rest.strip().split("\n")[0].split()).rstrip(".")
    if not question.endswith("?") or len(question) < 8 or not answer or len(answer) > 80:
        return None
    return question, answer


def synthesize(settings: Settings, scorer: AnswerScorer | None, *, n: int, seed: int = 0,
               top_k: int = 8, progress: Callable[[int], None] | None = None,
               stats: SynthStats | None = None) -> list[SilverInput]:
    from ragctl.ask.retrieve import Retriever
    from ragctl.store.collection import Collection

    generator: Any = getattr(scorer, "generator", None)
    if generator is None:
        raise RagctlError("--from-index needs a llama.cpp generator (a GGUF model)")
    stats = stats if stats is not None else SynthStats()
    out: list[SilverInput] = []
    with Collection.open(settings) as collection:
        rows = collection.store.sentence_rows()
        rows = [r for r in rows if 8 <= len(r[2].split()) <= 60]
        if not rows:
            raise RagctlError(f"index {settings.index!r} has no sentences to ask about")
        random.Random(seed).shuffle(rows)
        retriever = Retriever(collection)
        for sid, pid, sentence in rows[:n]:
            stats.tried += 1
            if progress is not None:
                progress(1)
            done = generator.complete(PROMPT.format(sentence=" ".join(sentence.split())),
                                      max_tokens=48, stop=("\n\n", "Sentence:"))
            parsed = parse(done.text)
            if parsed is None:
                stats.unparsed += 1
                continue
            question, answer = parsed
            if not contains_answer(sentence, [answer]):
                stats.answer_not_in_sentence += 1
                continue
            if normalize_answer(answer) in normalize_answer(question):
                stats.gives_answer_away += 1
                continue
            hits = retriever.search(question, limit=top_k)
            if pid not in {h.passage_id for h in hits}:
                stats.not_found_again += 1
                continue
            stats.kept += 1
            out.append(SilverInput(f"synth-{sid}", question, (answer,),
                                   tuple((h.title, h.text) for h in hits)))
    return out
