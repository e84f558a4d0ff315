"""The index embedder's CTranslate2 copy computed as float32, int8 and int8_float32.

Embeds the 1,044 paragraphs of the SQuAD report split three times each way (median
time) and measures retrieval recall@5 of the 5,173 report questions (queries in float32,
as `search` embeds them; and in the same type). Prints a table and writes
bench/results/embedder_types.json. Usage: python bench/embedder_types.py
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import machine, print_table, save, squad_articles


def main() -> None:
    os.environ["HF_HUB_OFFLINE"] = "1"
    from ragctl import models
    from ragctl.models.ct2 import encode, load_ctranslate2, load_tokenizer
    from ragctl.models.embed import FAST_MANIFEST, make_fast_copy

    path = make_fast_copy(models.locate("embedder", "all-MiniLM-L6-v2"),
                          name="all-MiniLM-L6-v2")
    assert path is not None
    manifest = json.loads((path / FAST_MANIFEST).read_text())
    tokenizer = load_tokenizer(path, int(manifest["max_length"]))
    ct2 = load_ctranslate2()
    paragraphs, questions = [], []
    for a in squad_articles("report"):
        for p in a["paragraphs"]:
            questions += [(q["question"], len(paragraphs)) for q in p["qas"]]
            paragraphs.append(p["context"])
    gold = np.array([g for _, g in questions])

    def recall(p: np.ndarray, q: np.ndarray) -> float:
        top = np.argsort(-(q @ p.T), axis=1)[:, :5]
        return float(np.mean([gold[i] in top[i] for i in range(len(gold))]))

    results, vectors = {}, {}
    for kind in ("float32", "int8", "int8_float32"):
        model = ct2.Encoder(str(path), device="cpu", compute_type=kind)
        encode(model, tokenizer, paragraphs[:64], 32)  # warm-up
        times = []
        for _ in range(3):
            t0 = time.perf_counter()
            p = encode(model, tokenizer, paragraphs, 32)
            times.append(time.perf_counter() - t0)
        q = encode(model, tokenizer, [t for t, _ in questions], 64)
        vectors[kind] = (p, q)
        results[kind] = {"seconds_median": sorted(times)[1],
                         "passages_per_s": len(paragraphs) / sorted(times)[1]}
    p32, q32 = vectors["float32"]
    rows = []
    for kind, (p, q) in vectors.items():
        r = results[kind]
        r["recall5_queries_float32"] = recall(p, q32)
        r["recall5_same_type"] = recall(p, q)
        r["min_cosine_to_float32"] = float(np.min(np.sum(p * p32, axis=1)))
        r["speed_ratio"] = r["passages_per_s"] / results["float32"]["passages_per_s"]
        rows.append((kind, f"{r['passages_per_s']:.1f} passages/s ({r['speed_ratio']:.2f}×), "
                     f"recall@5 {100 * r['recall5_queries_float32']:.2f}", ""))
    print_table(f"index embedder, {len(paragraphs)} paragraphs, {len(questions)} questions",
                rows)
    save("embedder_types", {"machine": machine(), "results": results})


if __name__ == "__main__":
    main()
