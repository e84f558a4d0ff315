"""Put together the folder of the real-document benchmark's test split.

bench/realdocs-test.json names, for each folder of the split, a public repository (or a
list of them), the commit its files were taken at, and the files: each is copied as it is
in that commit (a file stored gzipped is written uncompressed), from a local git directory
of the repository (`--repo owner/name=PATH`, e.g. a mirror) or from a shallow clone the
script makes (needs the network; ragctl itself never does).

    python bench/realdocs_test_folder.py OUT [--repo rust-lang/rfcs=/path/to/repo.git ...]
    RAGCTL_HOME=H ragctl index OUT
    python bench/realdocs.py --home H --questions bench/realdocs-test.json
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import ROOT

QUESTIONS = ROOT / "bench" / "realdocs-test.json"


def _git_dir(repo: str, commit: str, given: dict[str, str], tmp: Path) -> Path:
    if repo in given:
        return Path(given[repo])
    dest = tmp / repo.replace("/", "+")
    subprocess.run(["git", "clone", "--quiet", "--filter=blob:none", "--no-checkout",
                    f"https://github.com/{repo}.git", str(dest)], check=True)
    return dest / ".git"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--questions", type=Path, default=QUESTIONS)
    ap.add_argument("--repo", action="append", default=[], metavar="OWNER/NAME=PATH",
                    help="a local git directory of a source repository")
    args = ap.parse_args()
    given = dict(r.split("=", 1) for r in args.repo)
    sources = json.loads(args.questions.read_text())["sources"]
    n = 0
    with tempfile.TemporaryDirectory() as tmp:
        gits: dict[str, Path] = {}
        for folder, entries in sources.items():
            for src in entries if isinstance(entries, list) else [entries]:
                if src["repo"] not in gits:
                    gits[src["repo"]] = _git_dir(src["repo"], src["commit"], given, Path(tmp))
                for path in src["files"]:
                    data = subprocess.run(["git", f"--git-dir={gits[src['repo']]}", "show",
                                           f"{src['commit']}:{path}"], check=True,
                                          capture_output=True).stdout
                    name = Path(path).name
                    if name.endswith(".gz"):  # stored compressed in its repository
                        import gzip

                        data, name = gzip.decompress(data), name[:-3]
                    dest = args.out / folder / name
                    dest.parent.mkdir(parents=True, exist_ok=True)
                    dest.write_bytes(data)
                    n += 1
    print(f"{n} files in {args.out}")


if __name__ == "__main__":
    main()
