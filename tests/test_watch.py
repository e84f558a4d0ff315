"""`ragctl watch`: real filesystem events (watchdog) keep the index current."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from ragctl.config import load_settings
from ragctl.store.collection import Collection


def _paths() -> dict[str, int]:
    with Collection.open(load_settings()) as c:
        return {Path(d.path).name: d.n_passages for d in c.store.documents()}


def test_watch_follows_creates_edits_moves_deletes_and_atomic_saves(
        ragctl_home: Path, fake_embedder: str, tmp_path: Path) -> None:
    from ragctl.index.watch import watch

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\nThe first note about the harbour.\n")
    lines: list[str] = []
    runs: list[object] = []
    stop = threading.Event()
    t = threading.Thread(target=watch, args=(load_settings(), [docs]),
                         kwargs={"debounce": 0.3, "say": lines.append, "stop": stop,
                                 "on_run": runs.append}, daemon=True)
    t.start()

    def settle(n: int) -> None:
        deadline = time.monotonic() + 30
        while len(runs) < n and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(runs) >= n, lines

    try:
        settle(1)
        assert _paths() == {"a.md": 1}
        (docs / "b.txt").write_text("The ferry to Lisbon leaves at noon.")
        settle(2)
        assert set(_paths()) == {"a.md", "b.txt"}
        # an editor's atomic save: write a temporary file, rename it over the old one
        tmp = docs / ".b.txt.swp"
        tmp.write_text("The ferry to Lisbon leaves at one.")
        os.replace(tmp, docs / "b.txt")
        settle(3)
        with Collection.open(load_settings()) as c:
            assert any("at one" in h for h in [p.text for p in c.store.passages(
                c.store.passage_ids()).values()])
        os.rename(docs / "a.md", docs / "c.md")
        settle(4)
        assert set(_paths()) == {"b.txt", "c.md"}
        (docs / "b.txt").unlink()
        settle(5)
        assert set(_paths()) == {"c.md"}
    finally:
        stop.set()
        t.join(timeout=10)
    assert any(line.startswith("changed: ") for line in lines)
    assert any(line.startswith("index: ") for line in lines)


def test_watch_needs_something_to_watch(ragctl_home: Path, fake_embedder: str) -> None:
    from ragctl.errors import RagctlError
    from ragctl.index.watch import watch

    with pytest.raises(RagctlError):
        watch(load_settings(), [], say=print)
