"""The installed llama.cpp runs here: its build, the crash probe, AMX, threads."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ragctl import cpus
from ragctl.errors import RagctlError
from ragctl.models import llamacpp

CRASH = "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)"


@pytest.fixture
def gguf() -> Path:
    pytest.importorskip("llama_cpp")
    from ragctl.models.generate import gemma3_path

    return gemma3_path()


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("RAGCTL_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


@pytest.mark.real
def test_the_installed_llama_cpp_generates_a_few_tokens() -> None:
    """Through the same path as `ask --free` and `--long`: the registry's generator."""
    from ragctl import models

    gen = models.load("generator", "gemma-3-270m")
    try:
        out = gen.complete("The capital of France is", max_tokens=4)
        assert out.completion_tokens >= 1 and out.text.strip(), out
        assert gen.logprob("The capital of France is", " Paris") < 0
    finally:
        gen.close()


def test_the_build_record_says_no_amx() -> None:
    """`make` builds llama-cpp-python from source without AMX and records its flags."""
    record = Path(sys.prefix) / "llama-build.txt"
    if not record.exists():
        pytest.skip("llama-cpp-python was not built by scripts/build-llama.sh here")
    text = record.read_text()
    assert "build=native" in text or "build=portable" in text or "build=default" in text
    if "build=native" in text:
        assert "-mno-amx-tile -mno-amx-int8 -mno-amx-bf16" in text
    pytest.importorskip("llama_cpp")
    if "build=default" not in text:
        assert not llamacpp.has_amx()


def test_a_crash_while_generating_is_one_line_error_and_remembered(gguf: Path,
                                                                   cache: Path) -> None:
    with pytest.raises(llamacpp.LlamaCrashError) as e:
        llamacpp.probe(gguf, code=CRASH)
    message = str(e.value)
    assert "SIGSEGV" in message and "scripts/build-llama.sh" in message
    assert "\n" not in message and isinstance(e.value, RagctlError)
    # cached for this build: a probe that would pass is not run again
    with pytest.raises(llamacpp.LlamaCrashError):
        llamacpp.probe(gguf, code="pass")


def test_a_probe_that_passes_is_run_once_per_build(gguf: Path, cache: Path) -> None:
    llamacpp.probe(gguf)
    assert llamacpp.build_id() in (cache / llamacpp.PROBE_FILE).read_text()
    llamacpp.probe(gguf, code=CRASH)  # cached as passing: the crash is not run


def test_a_probe_that_fails_without_crashing_leaves_the_error_to_the_load(
        gguf: Path, cache: Path) -> None:
    llamacpp.probe(gguf, code="raise SystemExit(5)")
    assert not (cache / llamacpp.PROBE_FILE).exists()


def test_amx_is_read_from_the_system_info() -> None:
    assert llamacpp.has_amx("CPU : AVX2 = 1 | AMX_INT8 = 1 | LLAMAFILE = 1 |")
    assert not llamacpp.has_amx("CPU : AVX2 = 1 | AVX512 = 1 | AMX_INT8 = 0 |")
    assert not llamacpp.has_amx("CPU : SSE3 = 1 | AVX = 1 | ")


def test_a_model_loaded_without_extra_buffers_generates(gguf: Path) -> None:
    """What an AMX CPU gets: the model loads with use_extra_bufts off, and the
    binding's defaults are as before afterwards."""
    import llama_cpp

    llm = llamacpp.open_model(gguf, no_extra_buffers=True, n_ctx=64, n_threads=1,
                              verbose=False)
    try:
        out = llm.create_completion("One, two,", max_tokens=2, temperature=0.0)
        assert out["usage"]["completion_tokens"] >= 1
    finally:
        llm.close()
    assert llama_cpp.llama_model_default_params().use_extra_bufts


def test_threads_follow_the_setting_within_the_usable_cpus() -> None:
    usable = len(cpus.usable_cpus())
    assert cpus.generator_threads(1) == 1
    assert cpus.generator_threads(999) == usable
    assert 1 <= cpus.generator_threads(0) <= usable


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="needs CPU affinity")
def test_a_cpu_another_process_keeps_busy_is_not_counted_free() -> None:
    cpu = min(cpus.usable_cpus())
    loop = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        os.sched_setaffinity(loop.pid, {cpu})
        time.sleep(0.3)
        assert cpus.busy_cpus({cpu}, 0.3) == 1
    finally:
        loop.kill()
        loop.wait()


def test_the_generator_takes_the_threads_setting(gguf: Path) -> None:
    from ragctl.models.generate import LlamaGenerator

    gen = LlamaGenerator(gguf, n_ctx=256, threads=1)
    try:
        gen.complete("One, two,", max_tokens=2)
        assert gen.threads == 1 and gen.llm.n_threads == 1
    finally:
        gen.close()


def test_free_threads_are_at_least_one_and_at_most_the_usable_cpus() -> None:
    assert 1 <= cpus.free_threads(sample_s=0.01) <= len(cpus.usable_cpus())
