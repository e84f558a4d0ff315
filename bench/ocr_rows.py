"""What reading a scanned receipt in rows costs: seconds per image of Tesseract's plain
page reading (as ``index`` read images before readers 9) against the reading ``index``
does now (small text enlarged; a page of short lines read also as sparse text and put in
rows: :class:`ragctl.index.ocr.Tesseract`), one image after the other, interleaved.

    python bench/ocr_rows.py FOLDER [-n 10]   # FOLDER: images of receipts, invoices, forms

Prints a table (medians and their ratio) and writes bench/results/ocr-rows.json.
"""

from __future__ import annotations

import argparse
import io
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import median, print_table, save


def plain(image: object) -> str:
    """Tesseract's own text of the page, at its size (the reading before readers 9)."""
    buf = io.BytesIO()
    image.convert("L").save(buf, format="PNG")  # type: ignore[attr-defined]
    return subprocess.run(["tesseract", "stdin", "stdout", "-l", "eng", "--psm", "3"],
                          input=buf.getvalue(), capture_output=True, check=True
                          ).stdout.decode(errors="replace")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", type=Path)
    ap.add_argument("-n", type=int, default=10, help="images (the first N by name)")
    ap.add_argument("--name", default="ocr-rows")
    args = ap.parse_args()
    from PIL import Image

    from ragctl.index.ocr import Tesseract, flattened

    files = sorted(p for p in args.folder.rglob("*")
                   if p.suffix.lower() in (".png", ".jpg", ".jpeg"))[:args.n]
    engine = Tesseract()
    rows = []
    for path in files:
        image = flattened(Image.open(path))
        t = time.perf_counter()
        before = plain(image)
        t1 = time.perf_counter()
        now = engine.read(image)
        t2 = time.perf_counter()
        rows.append({"file": path.name, "pixels": image.width * image.height,
                     "before_s": round(t1 - t, 2), "now_s": round(t2 - t1, 2),
                     "before_words": len(before.split()), "now_words": len(now.split())})
        print(f"{path.name}: {t1 - t:.1f} s → {t2 - t1:.1f} s", file=sys.stderr)
    b, n = median([r["before_s"] for r in rows]), median([r["now_s"] for r in rows])
    words_b = median([r["before_words"] for r in rows])
    words_n = median([r["now_words"] for r in rows])
    print_table(f"Reading {len(rows)} images of {args.folder.name}", [
        ("seconds per image, before (median)", f"{b:.1f}", ""),
        ("seconds per image, now (median)", f"{n:.1f}", ""),
        ("ratio now / before", f"{n / b:.2f}", ""),
        ("words per image, before → now (median)", f"{words_b:.0f} → {words_n:.0f}", "")])
    print(f"wrote {save(args.name, {'folder': str(args.folder), 'images': rows})}")


if __name__ == "__main__":
    main()
