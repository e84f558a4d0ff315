"""OCR on photographed receipts: the share of their words read right, and seconds.

The receipt photos of the development sets (their folders as ``bench/benchmark.py
folders`` builds them under ``--root``), each transcribed by hand in
bench/data/ocr-photos/. A word counts as read when the OCR's text holds it, written as the
transcription writes it (each of the text's words counts once). Three ways of telling ink
from paper on a photo: Tesseract's global threshold, the local one, and the one ragctl
uses (both, the reading with more words read surely kept). Prints a table and writes
bench/results/ocr-photos.json.
Usage: python bench/ocr_photos.py [--root /tmp/bench]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import machine, print_table, save

DATA = Path(__file__).resolve().parent / "data" / "ocr-photos"
PHOTOS = {"receipt.jpg": "forms-dev/docs/forms/receipt.jpg",
          "logans-receipt.jpg": "handtrial-dev/docs/handtrial/logans-receipt.jpg",
          "petrol-receipt.jpg": "handtrial-dev/docs/handtrial/petrol-receipt.jpg",
          "clachan-receipt.jpg": "handtrial-dev/docs/handtrial/clachan-receipt.jpg"}


def words_read(truth: str, text: str) -> int:
    """How many of the transcription's words the OCR's text holds, each of its words
    matched once."""
    got = Counter(text.split())
    hit = 0
    for w in truth.split():
        if got[w] > 0:
            got[w] -= 1
            hit += 1
    return hit


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", type=Path, default=Path("/tmp/bench"))
    args = ap.parse_args()
    from PIL import Image

    from ragctl.index import ocr

    engine = ocr.Tesseract()
    ways = {"global": (False,), "local": (True,), "surer of both": ocr.PHOTO_THRESHOLDS}
    results: dict[str, Any] = {}
    rows = []
    for way, thresholds in ways.items():
        ocr.PHOTO_THRESHOLDS = thresholds
        hits = total = 0
        secs = []
        per: dict[str, float] = {}
        for name, rel in PHOTOS.items():
            path = args.root / rel
            if not path.exists():
                sys.exit(f"{path} is missing: build the folders with bench/benchmark.py folders")
            truth = (DATA / f"{name}.txt").read_text(encoding="utf-8")
            image = ocr.flattened(Image.open(path))
            t0 = time.perf_counter()
            text = engine.read(image)
            secs.append(time.perf_counter() - t0)
            hit = words_read(truth, text)
            per[name] = round(hit / len(truth.split()), 3)
            hits += hit
            total += len(truth.split())
        results[way] = {"words_read": hits, "words": total, "share": round(hits / total, 3),
                        "per_photo": per, "seconds_median": round(statistics.median(secs), 2)}
        rows.append((f"{way}: words read", f"{hits} of {total} ({100 * hits / total:.0f}%)",
                     ""))
        rows.append((f"{way}: s/photo (median)", f"{statistics.median(secs):.2f}", ""))
        print(f"{way}: {hits}/{total} {per}", flush=True)
    print_table(f"OCR on {len(PHOTOS)} photographed receipts (dev)", rows)
    save("ocr-photos", {"machine": machine(), "results": results})


if __name__ == "__main__":
    main()
