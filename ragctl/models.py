"""The model registry: what is installed, and which one each stage uses by default.

Filters and relevance estimators are exported CTranslate2 directories with a
``manifest.json``. They are looked up by name in ``<home>/models`` first, then in the
``models/`` folder shipped with ragctl. Generators and embedders come from their own
registries (Python packages with weights). ``use`` writes the choice to config.toml.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .config import CONFIG_FILE, Settings, home_dir, models_dir, write_setting
from .errors import ModelNotFoundError, RagctlError

KINDS = {"generator": "generator", "embedder": "embedder", "filter": "context_filter",
         "relevance": "relevance"}
FALLBACK = "similarity"


def bundled_models_dir() -> Path:
    """The ``models/`` folder next to the package (a source checkout or editable install)."""
    return Path(__file__).resolve().parent.parent / "models"


def search_dirs() -> list[Path]:
    dirs = [models_dir()]
    bundled = bundled_models_dir()
    if bundled.resolve() != dirs[0].resolve():
        dirs.append(bundled)
    return dirs


def find_model(name: str) -> Path | None:
    """A model directory by path or by name in the search folders."""
    path = Path(name).expanduser()
    if (path / "manifest.json").exists():
        return path
    if "/" in name or name.startswith("."):
        return None
    for d in search_dirs():
        if (d / name / "manifest.json").exists():
            return d / name
    return None


def model_dir(name: str) -> Path:
    found = find_model(name)
    path = Path(name).expanduser()
    if found is None and path.is_dir():
        raise ModelNotFoundError(f"{path} is not a ragctl model directory (no manifest.json); "
                                 "export one with: ragctl export")
    if found is None:
        raise ModelNotFoundError(
            f"no model {name!r} in {', '.join(str(d) for d in search_dirs())} and it is not a "
            f"model directory; see: ragctl models (or use '{FALLBACK}')")
    return found


@dataclass
class ModelInfo:
    kind: str
    name: str
    location: str
    default: bool = False
    details: dict[str, Any] = field(default_factory=dict)


def list_models(settings: Settings) -> list[ModelInfo]:
    from .embed import _REGISTRY, DEFAULT_EMBEDDER
    from .generate import GENERATORS, resolve_generator

    out: list[ModelInfo] = []
    for name in GENERATORS:
        try:
            where = str(resolve_generator(name))
        except RagctlError as e:
            where = f"not installed ({e})"
        out.append(ModelInfo("generator", name, where, name == settings.generator))
    for name in sorted({DEFAULT_EMBEDDER, *_REGISTRY}):
        out.append(ModelInfo("embedder", name, "python package", name == settings.embedder))
    for kind, current in (("filter", settings.context_filter),
                          ("relevance", settings.relevance)):
        out.append(ModelInfo(kind, FALLBACK, "built in", current == FALLBACK,
                             {"description": "cosine similarity fallback"}))
    seen: set[str] = set()
    for d in search_dirs():
        if not d.is_dir():
            continue
        for sub in sorted(d.iterdir()):
            mf = sub / "manifest.json"
            if sub.name in seen or not mf.exists():
                continue
            try:
                manifest = json.loads(mf.read_text())
            except ValueError:
                continue
            kind = manifest.get("kind", "?")
            current = settings.context_filter if kind == "filter" else settings.relevance
            seen.add(sub.name)
            out.append(ModelInfo(kind, sub.name, str(sub), current in (sub.name, str(sub)),
                                 manifest))
    return out


def use_model(kind: str, name: str) -> Path:
    """Make ``name`` the default for ``kind``; returns the config file written."""
    if kind not in KINDS:
        raise RagctlError(f"kind must be one of {', '.join(KINDS)}, not {kind!r}")
    if kind == "generator":
        from .generate import resolve_generator

        resolve_generator(name)
    elif kind == "embedder":
        from .embed import _REGISTRY, resolve_embedder_dir

        if name not in _REGISTRY:
            resolve_embedder_dir(name)
    elif name != FALLBACK:
        path = model_dir(name)
        manifest = json.loads((path / "manifest.json").read_text())
        want = "filter" if kind == "filter" else "relevance"
        if manifest.get("kind") != want:
            raise RagctlError(f"{name} is a {manifest.get('kind')} model, not a {want} model")
    write_setting(KINDS[kind], name)
    return home_dir() / CONFIG_FILE
