"""Small deterministic backends for fast unit tests, registered through the real registry
(see conftest.py); tests of the real models sit beside them."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence

import numpy as np

from ragctl.models.backends import Completion, Embedder, Entailment, Generator
from ragctl.models.reader import Reader, SpanCandidate


class HashEmbedder(Embedder):
    """Deterministic bag-of-words vectors: texts sharing words are close."""

    def __init__(self, name: str = "fake-hash", dim: int = 64) -> None:
        self.name = name
        self.dim = dim
        self.calls = 0
        self.texts = 0

    def _embed(self, texts: list[str]) -> np.ndarray:
        self.calls += 1
        self.texts += len(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            for w in re.findall(r"\w+", t.lower()):
                h = int(hashlib.md5(w.encode()).hexdigest(), 16)
                out[i, h % self.dim] += 1.0
            out[i, 0] += 0.01
        return out


class FakeGenerator(Generator):
    """Answers with a fixed reply, a function of the prompt, or the next of a script of
    replies (then nothing); records the prompts. Its log-likelihood of a continuation is
    high when the continuation appears in the prompt's last context."""

    def __init__(self, reply: str | Callable[[str], str] = "3 pm [1]", *,
                 replies: Sequence[str] | None = None, name: str = "fake-gen") -> None:
        self.reply = reply
        self.replies = list(replies) if replies is not None else None
        self.prompts: list[str] = []
        self.name = name

    def complete(self, prompt: str, *, max_tokens: int = 48, stop: Sequence[str] = ("\n",),
                 on_token: Callable[[str], None] | None = None) -> Completion:
        self.prompts.append(prompt)
        if self.replies is not None:
            text = self.replies.pop(0) if self.replies else ""
        else:
            text = self.reply(prompt) if callable(self.reply) else str(self.reply)
        if on_token is not None:
            for piece in re.findall(r"\s*\S+", text):
                on_token(piece)
        return Completion(text, len(prompt.split()), len(text.split()), 0.01, 0.001)

    def logprob(self, prompt: str, continuation: str) -> float:
        last = prompt.rsplit("Context:", 1)[-1]
        return 0.0 if continuation.strip().lower() in last.lower() else -8.0

    def count_tokens(self, text: str) -> int:
        return len(text.split())


class FakeReader(Reader):
    """Finds the first of ``answers`` in a context (a confident span); elsewhere proposes
    the context's last word with a score below its null score."""

    name = "fake-reader"

    def __init__(self, *answers: str, margin: float = 6.0) -> None:
        self.answers = answers
        self.margin = margin
        self.questions: list[str] = []

    def read(self, question: str, contexts: Sequence[str], *, top: int = 5
             ) -> list[list[SpanCandidate]]:
        self.questions.append(question)
        out = []
        for c, text in enumerate(contexts):
            found = [(text.find(a), a) for a in self.answers if a and text.find(a) >= 0]
            if found:
                i, a = min(found)
                out.append([SpanCandidate(c, i, i + len(a), self.margin, 0.0)])
            else:
                last = text.rstrip(" .").split(" ")[-1]
                i = text.rstrip(" .").rfind(last)
                out.append([SpanCandidate(c, i, i + len(last), -4.0, 0.0)])
        return out


class FakeEntailment(Entailment):
    """Says what ``verdicts`` says ("entailment" or "contradiction", surely) of a premise
    that holds a phrase, for a hypothesis that holds a word: ``{(phrase, word): verdict}``;
    neutral otherwise."""

    name = "fake-nli"

    def __init__(self, verdicts: dict[tuple[str, str], str] | None = None) -> None:
        self.verdicts = verdicts or {}
        self.seen: list[tuple[str, str]] = []

    def _probs(self, pairs: list[tuple[str, str]]) -> np.ndarray:
        self.seen.extend(pairs)
        out = []
        for premise, hypothesis in pairs:
            label = next((v for (p, w), v in self.verdicts.items()
                          if p in premise and w in hypothesis), "neutral")
            out.append({"entailment": [0.96, 0.02, 0.02], "neutral": [0.1, 0.8, 0.1],
                        "contradiction": [0.02, 0.02, 0.96]}[label])
        return np.array(out, dtype=np.float32)
