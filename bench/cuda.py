"""The CTranslate2 path on a GPU: train, export, load, and agree with the CPU.

On a machine with an NVIDIA GPU: a tiny random span reader (built on the spot, as the
tests build theirs) is trained one epoch on the device PyTorch picks, exported as int8,
int8_float16 and float16, and loaded on the CPU, on CUDA and with ``device = auto``; the
same is done with a tiny bi-encoder and with every shipped model whose weights are in
models/. For each: the device and compute type it ran in, whether it loaded and read, the
largest difference of its outputs from the CPU's, whether the best span is the same, and
the median time of one read. Needs ctranslate2 and PyTorch with transformers.

Prints a table and writes bench/results/cuda.json. Usage: python bench/cuda.py
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import ROOT, median, save

QUESTIONS = [("where is the cat", ["the cat sat on the mat", "the office is in lisbon"]),
             ("when is the appointment", ["the dentist appointment is thursday"]),
             ("what is the rent", ["the rent is euros", "the company train is in porto"])]
DEVICES = ("cpu", "cuda", "auto")


def _timed(fn: Any, n: int = 5) -> tuple[Any, float]:
    out, times = None, []
    for _ in range(n):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return out, median(times)


def device_rows(label: str, load: Callable[[str], Any], run: Callable[[Any], Any],
                compare: Callable[[Any, Any], dict[str, Any]]) -> list[dict[str, Any]]:
    """A model ``load``-ed on each device: where it ran, how long ``run`` takes (median),
    and how its output ``compare``-s with the CPU's; a failure is recorded, not raised."""
    rows, cpu = [], None
    for device in DEVICES:
        row: dict[str, Any] = {"model": label, "asked": device}
        try:
            model = load(device)
            row.update(device=model.device, compute_type=model.compute_type)
            got, row["seconds"] = _timed(lambda m=model: run(m))
        except Exception as e:  # the finding is the error itself, whatever it is
            row.update(ok=False, error=f"{type(e).__name__}: {e}"[:200])
            rows.append(row)
            continue
        row["ok"] = True
        if cpu is None:
            cpu = got
        else:
            row.update(compare(cpu, got))
        rows.append(row)
    return rows


def reader_rows(path: Path, label: str) -> list[dict[str, Any]]:
    """The reader at ``path`` on each device, against the CPU's logits and spans."""
    from ragctl.models.reader import CT2Reader

    def read(r: Any) -> Any:
        return [(r.logits(q, cs), r.read(q, cs, top=1)) for q, cs in QUESTIONS]

    def compare(cpu: Any, got: Any) -> dict[str, Any]:
        return {"max_logit_diff": max(
                    float(np.max(np.abs(a[k] - b[k])))
                    for (la, _), (lb, _) in zip(cpu, got, strict=True)
                    for a, b in zip(la, lb, strict=True) for k in (0, 1)),
                "same_spans": all(
                    [(c.start, c.end) for cands in sa for c in cands]
                    == [(c.start, c.end) for cands in sb for c in cands]
                    for (_, sa), (_, sb) in zip(cpu, got, strict=True))}

    return device_rows(label, lambda d: CT2Reader(path, device=d), read, compare)


def scorer_rows(path: Path, label: str, *, entailment: bool = False) -> list[dict[str, Any]]:
    """A pair scorer (relevance, filter) or the entailment model on each device, against
    the CPU (a bi-encoder's vectors computed afresh, not read from its cache)."""
    from ragctl.models.ct2 import CT2Scorer
    from ragctl.models.entail import CT2Entailment

    pairs = [(q, c) for q, cs in QUESTIONS for c in cs]

    def load(device: str) -> Any:
        model: Any = (CT2Entailment if entailment else CT2Scorer)(path, device=device)
        if getattr(model, "vector_cache", None) is not None:
            model.vector_cache = None  # each device computes its own vectors
        return model

    def score(m: Any) -> Any:
        getattr(m, "backend", m).__dict__.pop("_cache", None)  # nor from memory
        return np.asarray(m._probs(pairs) if entailment else m.z(pairs))

    return device_rows(label, load, score, lambda cpu, got: {
        "max_logit_diff": float(np.max(np.abs(cpu - got)))})


def tiny_reader(tmp: Path) -> Path:
    """A tiny reader trained one epoch (on CUDA when PyTorch sees it)."""
    from ragctl.training.reader import ReaderOptions, ReaderTrainer, SpanExample, write_spans
    from tests.tiny_models import hf_bert

    base = hf_bert(tmp / "base")
    data = tmp / "tiny.spans.jsonl"
    texts = [("where is the cat", "the cat sat on the mat", "mat"),
             ("where is the office", "the office is in lisbon", "lisbon"),
             ("what is the rent", "the rent is euros", "euros"),
             ("when is the appointment", "the dentist appointment is thursday", "thursday")]
    write_spans([SpanExample(f"q{i}", q, c, c.index(a), c.index(a) + len(a), (a,), "g")
                 for i, (q, c, a) in enumerate(texts * 3)], data)
    run = tmp / "run"
    ReaderTrainer(ReaderOptions(base=str(base), epochs=1, batch_size=4, max_length=64,
                                val_fraction=0.25), [data], run).run()
    return run


def main() -> None:
    import ctranslate2

    from ragctl.training.export import export_model
    from tests.tiny_models import build_bi_encoder

    info: dict[str, Any] = {"ctranslate2": ctranslate2.__version__}
    try:
        info["cuda_devices"] = ctranslate2.get_cuda_device_count()
        info["cuda_compute_types"] = sorted(ctranslate2.get_supported_compute_types("cuda"))
    except Exception as e:
        info["cuda_error"] = f"{type(e).__name__}: {e}"[:200]
    try:
        import torch

        info["torch_cuda"] = torch.cuda.get_device_name() if torch.cuda.is_available() else None
    except ImportError:
        info["torch_cuda"] = None
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        run = tiny_reader(tmp)
        for q in ("int8", "int8_float16", "float16"):
            out = tmp / f"reader-{q}"
            export_model(run, out, quantization=q, rounding="nearest")
            rows += reader_rows(out, f"tiny reader, exported {q}")
        rows += scorer_rows(build_bi_encoder(tmp / "bi"), "tiny bi-encoder, float32")
    for model in sorted((ROOT / "models").glob("*/model.bin")):
        kind = json.loads((model.parent / "manifest.json").read_text())["kind"]
        path, name = model.parent, model.parent.name
        rows += (reader_rows(path, name) if kind == "reader"
                 else scorer_rows(path, name, entailment=kind == "nli"))
    table = [[r["model"], r["asked"], r.get("device", "-"), r.get("compute_type", "-"),
              "yes" if r.get("ok") else r.get("error", "no"),
              f"{r['max_logit_diff']:.4f}" if "max_logit_diff" in r else "-",
              "-" if "same_spans" not in r else ("yes" if r["same_spans"] else "no"),
              f"{r['seconds'] * 1000:.1f} ms" if "seconds" in r else "-"] for r in rows]
    print(info)
    header = ["model", "asked", "device", "compute type", "loaded and read",
              "max |Δ logit| vs CPU", "same best span", "one read, median"]
    print("\nCTranslate2 on each device\n")
    for line in (header, ["---"] * len(header), *table):
        print("| " + " | ".join(line) + " |")
    print(f"wrote {save('cuda', {'info': info, 'rows': rows})}")


if __name__ == "__main__":
    main()
