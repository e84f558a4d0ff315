"""Rebuild the folder that bench/tables-dev.json's questions are about.

Each file in the JSON's "sources" is copied byte-for-byte out of a local mirror of
its repository, at the commit given there:

    git --git-dir=/work/.mirror/<owner>+<name>/repo show <commit>:<path>

(the layout the `fetch` tool leaves). Nothing is downloaded. If a mirror or commit
is missing the script stops and says which one, so it can be fetched first.

    python bench/tables_dev_folder.py [--out DIR] [--mirrors DIR] [--json FILE]

Default output folder: /tmp/tables-dev/folder (flat; file names as in the JSON).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def mirror_dir(mirrors: Path, repo: str) -> Path:
    base = mirrors / repo.replace("/", "+")
    return base / "repo" if (base / "repo").exists() else base


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="/tmp/tables-dev/folder", help="folder to (re)fill")
    ap.add_argument("--mirrors", default="/work/.mirror", help="where owner+name/ mirrors live")
    ap.add_argument("--json", default=str(HERE / "tables-dev.json"), help="question file")
    args = ap.parse_args()

    sources = json.loads(Path(args.json).read_text(encoding="utf-8"))["sources"]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    missing = []
    for name, src in sorted(sources.items()):
        git_dir = mirror_dir(Path(args.mirrors), src["repo"])
        if not git_dir.exists():
            missing.append(f"{src['repo']} (no mirror at {git_dir}; fetch github:{src['repo']})")
            continue
        spec = f"{src['commit']}:{src['path']}"
        res = subprocess.run(["git", f"--git-dir={git_dir}", "show", spec],
                             capture_output=True, check=False)
        if res.returncode != 0:
            missing.append(f"{src['repo']} {spec} ({res.stderr.decode(errors='replace').strip()})")
            continue
        (out / name).write_bytes(res.stdout)
        print(f"{name}: {len(res.stdout):,} bytes from {src['repo']}")
    if missing:
        print("error: could not copy these sources:\n  " + "\n  ".join(missing), file=sys.stderr)
        return 1
    print(f"{len(sources)} files in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
