"""Exported models on disk: a folder with ``manifest.json`` (its kind, backend and
settings) beside the weights, found by path or by name in ``<home>/models`` and then among
the models shipped with ragctl."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

from ragctl.config import models_dir
from ragctl.errors import ModelNotFoundError

MANIFEST = "manifest.json"
FALLBACK = "similarity"  # what a kind falls back to when its exported model is missing


def bundled_models_dir() -> Path:
    """The models shipped with ragctl: the package data ``ragctl.shipped`` of an installed
    wheel (``models/`` of the checkout in an editable install), else ``models/`` beside the
    package."""
    try:
        spec = importlib.util.find_spec("ragctl.shipped")
    except ModuleNotFoundError:
        spec = None
    for location in (spec.submodule_search_locations or []) if spec else []:
        if Path(location).is_dir():
            return Path(location)
    return Path(__file__).resolve().parents[2] / "models"


def search_dirs() -> list[Path]:
    dirs = [models_dir()]
    bundled = bundled_models_dir()
    if bundled.resolve() != dirs[0].resolve():
        dirs.append(bundled)
    return dirs


def find_model(name: str) -> Path | None:
    """An exported model directory by path or by name in the search folders."""
    path = Path(name).expanduser()
    if (path / MANIFEST).exists():
        return path
    if "/" in name or name.startswith("."):
        return None
    for d in search_dirs():
        if (d / name / MANIFEST).exists():
            return d / name
    return None


def model_dir(name: str) -> Path:
    found = find_model(name)
    path = Path(name).expanduser()
    if found is None and path.is_dir():
        raise ModelNotFoundError(f"{path} is not a ragctl model directory (no {MANIFEST}); "
                                 "export one with: ragctl export")
    if found is None:
        raise ModelNotFoundError(
            f"no model {name!r} in {', '.join(str(d) for d in search_dirs())} and it is not a "
            f"model directory; see: ragctl models (or use '{FALLBACK}')")
    return found


def read_manifest(path: Path) -> dict[str, Any]:
    try:
        manifest: dict[str, Any] = json.loads((path / MANIFEST).read_text())
    except (OSError, ValueError) as e:
        raise ModelNotFoundError(f"cannot read {path / MANIFEST}: {e}") from None
    return manifest


def exported(kind: str) -> list[tuple[str, Path, dict[str, Any]]]:
    """(name, directory, manifest) of the exported models of ``kind``, first found wins."""
    out: list[tuple[str, Path, dict[str, Any]]] = []
    seen: set[str] = set()
    for d in search_dirs():
        if not d.is_dir():
            continue
        for sub in sorted(d.iterdir()):
            if sub.name in seen or not (sub / MANIFEST).exists():
                continue
            try:
                manifest = read_manifest(sub)
            except ModelNotFoundError:
                continue
            if manifest.get("kind") == kind:
                seen.add(sub.name)
                out.append((sub.name, sub, manifest))
    return out
