"""Export a trained filter or relevance model to a quantized CTranslate2 directory.

The result is what :class:`ragctl.models.ct2.CT2Scorer` loads: the converted model, the
tokenizer (``tokenizer.json``), ``manifest.json`` and, for an encoder, ``head.npz``.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ragctl import __version__
from ragctl.config import QUANTIZATIONS
from ragctl.errors import RagctlError, missing_dependency
from ragctl.training.architectures import ARCHITECTURES, Architecture

ROUNDINGS = ("auto", "gptq", "nearest")


def read_training(src: Path) -> dict[str, Any]:
    """The ``train.json`` of a training run (its folder or its ``model`` folder)."""
    src = Path(src)
    model = src / "model" if (src / "model" / "train.json").exists() else src
    meta_file = model / "train.json"
    if not meta_file.exists():
        raise RagctlError(f"{src} is not a ragctl training run (no model/train.json); "
                          "train one with: ragctl train filter|re")
    meta: dict[str, Any] = json.loads(meta_file.read_text())
    meta["_model_dir"] = str(model)
    return meta


def export_model(src: Path, out: Path, *, quantization: str = "int8",
                 name: str | None = None, data_licence: str | None = None,
                 rounding: str = "auto",
                 on_progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    """Convert the training run ``src`` into ``out``; returns the manifest written.

    ``rounding`` (int8 types, encoder models): "gptq" rounds the weights with
    ``ragctl.quantize`` on texts from the run's training data; "nearest" is the converter's
    plain rounding; "auto" is gptq when the training data can still be read."""
    if quantization not in QUANTIZATIONS:
        raise RagctlError(f"quantization must be one of {', '.join(QUANTIZATIONS)}")
    if rounding not in ROUNDINGS:
        raise RagctlError(f"rounding must be one of {', '.join(ROUNDINGS)}")
    if rounding == "gptq" and not quantization.startswith("int8"):
        raise RagctlError(f"--rounding gptq is for int8 quantizations, not {quantization}")
    meta = read_training(src)
    model_dir = Path(meta["_model_dir"])
    if meta["architecture"] not in ARCHITECTURES:
        raise RagctlError(f"{src} was trained as a {meta['architecture']}, which this "
                          f"version of ragctl no longer exports")
    arch = ARCHITECTURES[meta["architecture"]]()
    try:
        from ctranslate2.converters import TransformersConverter
    except ImportError:
        raise missing_dependency("ctranslate2", "generate") from None
    from ragctl.training.trainer import quiet_transformers

    quiet_transformers()
    out = Path(out)
    rounded: dict[str, Any] = {"method": "nearest" if quantization.startswith("int8")
                               else "none"}
    convert_dir = model_dir
    work = out.with_name(out.name + ".gptq-tmp")
    tmp = out.with_name(out.name + ".export-tmp")
    if tmp.exists():
        shutil.rmtree(tmp)
    try:
        if quantization.startswith("int8") and rounding != "nearest":
            texts = _calibration(meta, arch, required=rounding == "gptq")
            if texts:
                rounded = _gptq_copy(model_dir, work, texts, meta, on_progress)
                convert_dir = work
        try:
            TransformersConverter(str(convert_dir)).convert(
                str(tmp), quantization=quantization, force=True)
        except (ValueError, RuntimeError, OSError, KeyError, NotImplementedError) as e:
            shutil.rmtree(tmp, ignore_errors=True)
            raise RagctlError(f"CTranslate2 cannot convert {model_dir}: {e}") from None
    finally:
        shutil.rmtree(work, ignore_errors=True)
    tokenizer = model_dir / "tokenizer.json"
    if not tokenizer.exists():
        shutil.rmtree(tmp, ignore_errors=True)
        raise RagctlError(f"{model_dir} has no tokenizer.json (a fast tokenizer is needed)")
    shutil.copy(tokenizer, tmp / "tokenizer.json")
    if (model_dir / "head.npz").exists():
        shutil.copy(model_dir / "head.npz", tmp / "head.npz")
    opts = meta.get("options", {})
    manifest: dict[str, Any] = {
        "name": name or out.name,
        "kind": {"filter": "filter", "re": "relevance"}.get(meta["kind"], meta["kind"]),
        "backend": arch.backend,
        "architecture": arch.name,
        "base": meta.get("base"),
        "max_length": meta.get("max_length", 256),
        "max_words": meta.get("max_words", 180),
        "calibration": meta.get("calibration", [1.0, 0.0]),
        "quantization": quantization,
        "rounding": rounded,
        "training": {
            "data": [_relative(d) for d in meta.get("data", [])],
            "command": meta.get("command", ""),
            "silver_measure": opts.get("measure") if meta["kind"] == "filter" else None,
            "objective": (opts.get("objective") if meta["kind"] == "re" else
                          "span-and-null" if meta["kind"] == "reader" else
                          "three-way-nli" if meta["kind"] == "nli" else
                          arch.filter_objective),
            "examples": meta.get("examples"),
            "val_examples": meta.get("val_examples"),
            "epochs": opts.get("epochs"),
            "layers": opts.get("layers"),
            "best_epoch": meta.get("best_epoch"),
            "seed": opts.get("seed"),
            "data_licence": data_licence,
        },
        "metrics": meta.get("metrics", {}),
        **({"max_answer_tokens": meta["max_answer_tokens"]} if "max_answer_tokens" in meta
           else {}),
        **({"labels": meta["labels"]} if "labels" in meta else {}),
        "created": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "ragctl": __version__,
    }
    if meta.get("prompt"):
        manifest["prompt"] = meta["prompt"]
        manifest["true"], manifest["false"] = "true", "false"
    (tmp / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    if out.exists():
        old = out.with_name(out.name + ".export-old")
        if old.exists():
            shutil.rmtree(old)
        os.replace(out, old)
        os.replace(tmp, out)
        shutil.rmtree(old)
    else:
        out.parent.mkdir(parents=True, exist_ok=True)
        os.replace(tmp, out)
    return manifest


def _calibration(meta: dict[str, Any], arch: Architecture, *, required: bool) -> list[str]:
    """Calibration texts from the run's training data, or [] (an error if ``required``)."""
    from ragctl.training.quantize import calibration_texts

    why = ""
    if not arch.encoder:
        why = f"GPTQ rounding is for encoder models, not {arch.name}"
    paths = [Path(d) for d in meta.get("data", [])]
    missing = [str(p) for p in paths if not p.exists()]
    if not why and (missing or not paths):
        why = ("the run's training data is not here to calibrate on: "
               f"{', '.join(missing) or 'none recorded'}")
    if why:
        if required:
            raise RagctlError(f"{why}; export with --rounding nearest")
        return []
    if meta["kind"] == "reader":
        from ragctl.training.reader import reader_calibration_texts

        return reader_calibration_texts(meta)
    if meta["kind"] == "nli":
        from ragctl.training.entail import entail_calibration_texts

        return entail_calibration_texts(meta)
    from ragctl.training.trainer import load_examples

    examples = load_examples(paths)
    return calibration_texts(examples, meta["kind"], seed=int(
        meta.get("options", {}).get("seed", 0)))


def _gptq_copy(model_dir: Path, work: Path, texts: list[str], meta: dict[str, Any],
               on_progress: Callable[[int, int], None] | None) -> dict[str, Any]:
    """A copy of ``model_dir`` in ``work`` with its weights rounded by GPTQ."""
    try:
        from transformers import AutoModel, AutoTokenizer
    except ImportError:
        raise missing_dependency("transformers", "train") from None
    from ragctl.training.quantize import gptq_int8

    if work.exists():
        shutil.rmtree(work)
    shutil.copytree(model_dir, work)
    try:
        model = AutoModel.from_pretrained(str(model_dir))
        tokenizer = AutoTokenizer.from_pretrained(str(model_dir))
    except (OSError, ValueError, KeyError) as e:
        raise RagctlError(f"cannot load {model_dir} for GPTQ rounding: {e}") from None
    try:
        report = gptq_int8(model, tokenizer, texts,
                           max_length=int(meta.get("max_length", 256)),
                           on_progress=on_progress)
    except (RuntimeError, ValueError) as e:
        raise RagctlError(f"GPTQ rounding of {model_dir} failed: {e}; "
                          "export with --rounding nearest") from None
    model.save_pretrained(str(work))
    return report.to_dict()


def _relative(path: str) -> str:
    """A data path relative to the working directory when it lies inside it."""
    p = Path(path)
    try:
        return str(p.resolve().relative_to(Path.cwd().resolve()))
    except (ValueError, OSError):
        return path


def dir_size(path: Path) -> int:
    return sum(f.stat().st_size for f in Path(path).rglob("*") if f.is_file())


def export_run(name: str, *, src: Path | None = None, out: Path | None = None,
               quantization: str = "int8", data_licence: str | None = None,
               rounding: str = "auto", on_progress: Callable[[int, int], None] | None = None
               ) -> tuple[Path, dict[str, Any]]:
    """``ragctl export NAME``: the run ``<home>/training/NAME`` (or ``src``) into
    ``<home>/models/NAME`` (or ``out``); returns the target and its manifest."""
    from ragctl.config import home_dir, models_dir

    target = out or models_dir() / name
    manifest = export_model(src or home_dir() / "training" / name, target,
                            quantization=quantization, name=name, data_licence=data_licence,
                            rounding=rounding, on_progress=on_progress)
    return target, manifest
