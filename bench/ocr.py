"""OCR engines on scanned pages made from real text: character error rate and seconds.

Each page is three or four SQuAD paragraphs (``--split dev`` to choose, ``report`` for the
README) typeset in DejaVu Serif 11 pt on an A4 page, then degraded as a scanner and a
photocopier would: "clean" (300 dpi, as rendered), "scan" (300 dpi, skewed up to 1.5°,
grey noise, slight blur, JPEG at quality 60), "fax" (the same at 200 dpi, stronger noise).
CER = edit distance / reference length, whitespace normalised. Prints a table and writes
bench/results/ocr-<split>.json.
Usage: python bench/ocr.py [--split dev|report] [--pages 6] [--engines rapidocr,tesseract]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import machine, print_table, save, squad_articles

FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSerif.ttf"
CONDITIONS = {"clean": (300, 0.0, 0), "scan": (300, 1.5, 14), "fax": (200, 1.5, 24)}


def page_texts(split: str, pages: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    paragraphs = [p["context"] for a in squad_articles(split) for p in a["paragraphs"]]
    rng.shuffle(paragraphs)
    out, i = [], 0
    while len(out) < pages:
        words, chosen = 0, []
        while words < 420 and i < len(paragraphs):
            chosen.append(paragraphs[i])
            words += len(paragraphs[i].split())
            i += 1
        out.append("\n\n".join(chosen))
    return out


def render(text: str, dpi: int, skew: float, noise: int, seed: int) -> tuple[Any, str]:
    """A4 page image of ``text``, degraded, and the text that fitted on the page."""
    import io

    import numpy as np
    from PIL import Image, ImageDraw, ImageFilter, ImageFont

    rng = random.Random(seed)
    w, h = round(8.27 * dpi), round(11.69 * dpi)
    font = ImageFont.truetype(FONT, round(11 / 72 * dpi))
    img = Image.new("L", (w, h), 255)
    draw = ImageDraw.Draw(img)
    margin = dpi
    avg = font.getlength("abcdefghijklmnopqrstuvwxyz") / 26
    width = int((w - 2 * margin) / avg)
    y = margin
    line_h = round(11 / 72 * dpi * 1.35)
    drawn: list[str] = []
    for para in text.split("\n\n"):
        for line in textwrap.wrap(para, width=width):
            while font.getlength(line) > w - 2 * margin and " " in line:
                line = line.rsplit(" ", 1)[0]  # rare: a line of wide letters
            if y + line_h > h - margin:
                break
            draw.text((margin, y), line, font=font, fill=0)
            drawn.append(line)
            y += line_h
        y += line_h // 2
    if skew:
        img = img.rotate(rng.uniform(-skew, skew), resample=Image.Resampling.BICUBIC,
                         fillcolor=255, expand=False)
    if noise:
        arr = np.asarray(img).astype(np.float32)
        arr += np.random.default_rng(seed).normal(0, noise, arr.shape)
        img = Image.fromarray(np.clip(arr, 0, 255).astype(np.uint8))
        img = img.filter(ImageFilter.GaussianBlur(0.6))
        buf = io.BytesIO()
        img.save(buf, format="JPEG", quality=60)
        img = Image.open(io.BytesIO(buf.getvalue()))
        img.load()
    return img, " ".join(drawn)


def cer(ref: str, hyp: str) -> float:
    from rapidfuzz.distance import Levenshtein

    ref, hyp = " ".join(ref.split()), " ".join(hyp.split())
    return Levenshtein.distance(ref, hyp) / max(len(ref), 1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--split", default="dev", choices=["dev", "report"])
    ap.add_argument("--pages", type=int, default=6)
    ap.add_argument("--engines", default="rapidocr,tesseract")
    args = ap.parse_args()
    from ragctl.index import ocr

    texts = page_texts(args.split, args.pages)
    results: dict[str, Any] = {}
    rows = []
    for name in args.engines.split(","):
        t0 = time.perf_counter()
        eng = ocr.engine(name)
        load = time.perf_counter() - t0
        assert eng is not None
        for cond, (dpi, skew, noise) in CONDITIONS.items():
            errs, secs = [], []
            for k, text in enumerate(texts):
                img, shown = render(text, dpi, skew, noise, seed=k)
                t0 = time.perf_counter()
                out = eng.read(img)
                secs.append(time.perf_counter() - t0)
                errs.append(cer(shown, out))
            key = f"{name}/{cond}"
            results[key] = {"cer_mean": statistics.mean(errs), "cer_median":
                            statistics.median(errs), "cer_max": max(errs),
                            "seconds_median": statistics.median(secs), "load_s": load,
                            "dpi": dpi, "pages": len(texts)}
            rows.append((f"{key} ({dpi} dpi) CER mean / max",
                         f"{100 * statistics.mean(errs):.2f}% / {100 * max(errs):.2f}%", ""))
            rows.append((f"{key} s/page (median)", f"{statistics.median(secs):.2f}", ""))
            print(f"{key}: CER {100 * statistics.mean(errs):.2f}%  "
                  f"{statistics.median(secs):.2f} s/page", flush=True)
    print_table(f"OCR on {len(texts)} rendered pages ({args.split} split)", rows)
    save(f"ocr-{args.split}", {"machine": machine(), "split": args.split, "results": results})


if __name__ == "__main__":
    main()
