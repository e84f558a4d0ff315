"""The installed llama.cpp: what it was built for, and whether it can generate here.

A llama.cpp compiled with AMX by GCC up to 13.2 segfaults on the first decode on Intel
CPUs with AMX (Sapphire Rapids and later; llama.cpp issue #20824), which would take the
whole ``ragctl`` process down without a word. So:

- ``make`` builds llama-cpp-python from source without AMX (``scripts/build-llama.sh``);
- where llama.cpp still reports AMX, models load with ``use_extra_bufts=False``, which
  keeps the AMX matrix code out of use;
- before the first model is loaded, a child process loads it and generates two tokens,
  once per build of llama.cpp (the result is cached): a crash there becomes a one-line
  error that names the fix, instead of a segfault.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ragctl.config import cache_dir
from ragctl.errors import RagctlError

logger = logging.getLogger("ragctl.llamacpp")

PROBE_FILE = "llama-probe.json"
PROBE_TIMEOUT_S = 120.0
REBUILD = ("rebuild llama-cpp-python without AMX: RAGCTL_LLAMA_BUILD=portable "
           "scripts/build-llama.sh PYTHON (README: 'Installing by hand')")

# Loads a model and generates two tokens; run with -P, so the current folder is not on
# sys.path (a json.py there would be imported).
_PROBE = """
import sys
from pathlib import Path
from ragctl.models.llamacpp import open_model
llm = open_model(Path(sys.argv[1]), n_ctx=64, n_threads=1, seed=0, verbose=False)
llm.create_completion("The capital of France is", max_tokens=2, temperature=0.0)
"""


class LlamaCrashError(RagctlError):
    """llama.cpp crashed generating a test token with this build."""


def system_info() -> str:
    import llama_cpp

    info = llama_cpp.llama_print_system_info()
    return info.decode("utf-8", "replace") if isinstance(info, bytes) else str(info)


def has_amx(info: str | None = None) -> bool:
    """llama.cpp reports AMX among the CPU features it was built with and found."""
    info = system_info() if info is None else info
    return any(part.split("=")[0].strip().startswith("AMX") and part.split("=")[-1].strip()
               == "1" for part in info.split("|") if "=" in part)


def open_model(path: Path, *, no_extra_buffers: bool | None = None, **kwargs: Any) -> Any:
    """``llama_cpp.Llama(model_path=path, **kwargs)``, with no extra buffer types (the AMX
    matrix code) where llama.cpp reports AMX (``no_extra_buffers=None``), or as asked.

    Bindings that take ``use_extra_bufts`` get it; older ones (0.3.x) build the model's
    parameters from ``llama_model_default_params()``, whose struct has the field, so the
    defaults are handed over with it off while the model loads."""
    import inspect

    from llama_cpp import Llama

    if no_extra_buffers is None:
        no_extra_buffers = has_amx()
    if not no_extra_buffers:
        return Llama(model_path=str(path), **kwargs)
    if "use_extra_bufts" in inspect.signature(Llama.__init__).parameters:
        return Llama(model_path=str(path), use_extra_bufts=False, **kwargs)
    with _defaults_without_extra_buffers():
        return Llama(model_path=str(path), **kwargs)


_PATCH_LOCK = threading.Lock()


@contextmanager
def _defaults_without_extra_buffers() -> Iterator[None]:
    import llama_cpp.llama as binding

    low = binding.llama_cpp
    original = low.llama_model_default_params

    def defaults() -> Any:
        params = original()
        params.use_extra_bufts = False
        return params

    with _PATCH_LOCK:
        low.llama_model_default_params = defaults
        try:
            yield
        finally:
            low.llama_model_default_params = original


def build_id() -> str:
    """What identifies this build of llama.cpp: its version and its shared libraries."""
    import llama_cpp

    parts = [getattr(llama_cpp, "__version__", "?")]
    lib = Path(llama_cpp.__file__).parent / "lib"
    for so in sorted(lib.glob("*.so*")) + sorted(lib.glob("*.dylib")) + sorted(lib.glob("*.dll")):
        st = so.stat()
        parts.append(f"{so.name}:{st.st_size}:{st.st_mtime_ns}")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def _cache() -> Path:
    return cache_dir() / PROBE_FILE


def _read_cache() -> dict[str, Any]:
    try:
        data = json.loads(_cache().read_text())
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def _write_cache(key: str, result: dict[str, Any]) -> None:
    path = _cache()
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        data = _read_cache()
        data[key] = result
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data, indent=2))
        os.replace(tmp, path)
    except OSError as e:  # a read-only cache: probe again next time
        logger.debug("cannot cache the llama.cpp probe: %s", e)


def probe(model: Path, *, code: str = _PROBE, timeout_s: float = PROBE_TIMEOUT_S) -> None:
    """Generate two tokens with ``model`` in a child process, once per build of
    llama.cpp; raise :class:`LlamaCrashError` if that crashes (killed by a signal). Other
    failures are left to the load in this process, which reports them itself. Set
    ``RAGCTL_LLAMA_PROBE=0`` to skip the probe."""
    if os.environ.get("RAGCTL_LLAMA_PROBE", "1") == "0":
        return
    key = build_id()
    cached = _read_cache().get(key)
    if cached is None:
        cached = _run_probe(model, code, timeout_s)
        if cached.get("ok") or cached.get("signal"):
            _write_cache(key, cached)
        else:  # a timeout, or a model llama.cpp cannot load: the load itself will say
            logger.info("%s", cached.get("error"))
            return
    if cached.get("signal"):
        raise LlamaCrashError(cached["error"])


def _run_probe(model: Path, code: str, timeout_s: float) -> dict[str, Any]:
    # -P: the current folder is not put on sys.path; ragctl itself is found where this
    # process found it
    package_root = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (package_root, os.environ.get("PYTHONPATH", "")) if p)}
    try:
        done = subprocess.run([sys.executable, "-P", "-c", code, str(model)],
                              capture_output=True, text=True, timeout=timeout_s, env=env)
    except subprocess.TimeoutExpired:
        return {"ok": False, "error": f"llama.cpp did not generate a test token in "
                                      f"{timeout_s:.0f} s"}
    except OSError as e:
        return {"ok": False, "error": f"cannot start the llama.cpp test: {e.strerror}"}
    if done.returncode == 0:
        return {"ok": True}
    if done.returncode < 0:
        try:
            name = signal.Signals(-done.returncode).name
        except ValueError:
            name = f"signal {-done.returncode}"
        return {"ok": False, "signal": name,
                "error": f"llama.cpp crashed ({name}) generating a test token on this CPU; "
                         f"{REBUILD}"}
    last = (done.stderr.strip().splitlines() or ["no message"])[-1]
    return {"ok": False, "error": f"llama.cpp failed its test generation: {last[:200]}"}
