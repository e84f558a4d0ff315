from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ragctl.index.chunk import Chunk
from ragctl.index.sentences import Span
from ragctl.store.sqlite import MIGRATIONS, Store
from ragctl.store.vectors import VectorIndex


def _chunks(*texts: str) -> list[Chunk]:
    out, pos = [], 0
    for t in texts:
        out.append(Chunk("", pos, pos + len(t), (Span(pos, pos + len(t), t),)))
        pos += len(t) + 1
    return out


def _vecs(n: int, dim: int = 8, seed: int = 0) -> np.ndarray:
    v = np.random.default_rng(seed).normal(size=(n, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def test_migrations_are_idempotent(tmp_path: Path) -> None:
    n = len(MIGRATIONS)
    with Store(tmp_path / "a.db") as s:
        assert s.get_meta("schema_version") == str(n)
    with Store(tmp_path / "a.db") as s:
        assert s.schema_version == n
        assert s.db.execute("SELECT count(*) FROM _ragctl_migrations").fetchone()[0] == n
        assert s.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_replace_document_is_atomic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    s = Store(tmp_path / "a.db")
    kw = dict(path="/x/a.md", format="markdown", title="a", size=1, mtime_ns=1, sha256="h1")
    ids, old = s.replace_document(chunks=_chunks("alpha one", "beta two"),
                                  embeddings=_vecs(2), **kw)
    assert old == [] and len(ids) == 2
    real_insert_all = s.db["sentences"].insert_all.__func__  # type: ignore[attr-defined]

    def boom(self, *a, **k):  # fails half-way through writing the new version
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(type(s.db["sentences"]), "insert_all", boom)
    with pytest.raises(RuntimeError):
        s.replace_document(chunks=_chunks("gamma three"), embeddings=_vecs(1), **kw)
    monkeypatch.setattr(type(s.db["sentences"]), "insert_all", real_insert_all)
    # the old version is intact: passages, sentences, FTS and journal
    assert [r["text"] for r in s.db["passages"].rows] == ["alpha one", "beta two"]
    assert s.count("sentences") == 2
    assert [pid for pid, _ in s.fts_search("beta", 5)] == [ids[1]]
    assert s.journal()[1] == {ids[0]: "add", ids[1]: "add"}
    new, old = s.replace_document(chunks=_chunks("gamma three"), embeddings=_vecs(1), **kw)
    assert old == ids and new[0] > ids[1]  # ids are never reused
    assert s.fts_search("beta", 5) == []
    assert s.journal()[1] == {ids[0]: "delete", ids[1]: "delete", new[0]: "add"}


def test_full_text_search_reads_the_section_heading_too(tmp_path: Path) -> None:
    from ragctl.store import sqlite as store_module

    path = tmp_path / "a.db"
    kw = dict(format="rst", title="PEP 20", size=1, mtime_ns=1, sha256="h")
    poem = "Errors should never pass silently. Unless explicitly silenced."
    with Store(path) as s:
        ids, _ = s.replace_document(path="/x/zen.rst", embeddings=_vecs(1), **kw,
                                    chunks=[Chunk("The Zen of Python", 0, len(poem),
                                                  (Span(0, len(poem), poem),))])
        assert [pid for pid, _ in s.fts_search("zen", 5)] == ids
        assert [pid for pid, _ in s.fts_search("errors", 5)] == ids
        # a page number in the place is not what a question's number is about
        page, _ = s.replace_document(path="/x/report.pdf", embeddings=_vecs(1), **kw,
                                     chunks=[Chunk("p. 12", 0, 9, (Span(0, 9, "Net sales"),))])
        assert s.fts_search("12", 5) == []
        assert [pid for pid, _ in s.fts_search("sales 12", 5)] == page
        # an index made before (full text of the passages' text alone) is upgraded on open,
        # and the upgrade can run again (an interrupted one is simply redone)
        s.db.execute("DELETE FROM _ragctl_migrations WHERE number = 5")
        s.db.table("passages").disable_fts()
        s.db.table("passages").enable_fts(["text"], create_triggers=True)
        s.db.conn.commit()
        assert s.fts_search("zen", 5) == []
    with Store(path) as s:
        assert [pid for pid, _ in s.fts_search("zen", 5)] == ids
        store_module._m005_fts_place(s.db)
        assert [pid for pid, _ in s.fts_search("zen", 5)] == ids
        assert s.fts_problem() is None
        # the triggers follow the place as well as the text
        s.replace_document(path="/x/zen.rst", embeddings=_vecs(1), **kw,
                           chunks=[Chunk("Flat", 0, len(poem), (Span(0, len(poem), poem),))])
        assert s.fts_search("zen", 5) == [] and len(s.fts_search("errors", 5)) == 1


def test_vectors_roundtrip_and_embedding_reuse(tmp_path: Path) -> None:
    s = Store(tmp_path / "a.db")
    vecs = _vecs(3)
    ids, _ = s.replace_document(path="/a", format="text", title="", size=1, mtime_ns=1,
                                sha256="x", chunks=_chunks("one", "two", "three"),
                                embeddings=vecs)
    got_ids, got = next(s.vectors(dim=8))
    assert got_ids.tolist() == ids and np.allclose(got, vecs)
    from ragctl.store.sqlite import text_hash

    reuse = s.embeddings_by_hash([text_hash("two"), text_hash("nope")])
    assert list(reuse) == [text_hash("two")]
    assert np.allclose(np.frombuffer(reuse[text_hash("two")], dtype=np.float32), vecs[1])


def test_vector_index_grows_deletes_and_saves_atomically(tmp_path: Path) -> None:
    vecs = _vecs(3000, dim=16, seed=1)
    vi = VectorIndex(16, capacity=100)
    vi.add(np.arange(1, 3001), vecs)
    assert vi.capacity >= 3000
    labels, sims = vi.search(vecs[41], 5)
    assert labels[0] == 42 and sims[0] == pytest.approx(1.0, abs=1e-4)
    vi.delete([42, 42, 99999])
    labels, _ = vi.search(vecs[41], 5)
    assert 42 not in labels.tolist()
    path = tmp_path / "v.hnsw"
    vi.save(path)
    assert not path.with_name("v.hnsw.tmp").exists()
    back = VectorIndex.load(path, 16)
    assert not back.is_live(42) and back.is_live(43)
    assert back.search(vecs[9], 1)[0].tolist() == [10]


def test_search_with_fewer_elements_than_k() -> None:
    vi = VectorIndex(8)
    vi.add(np.array([5, 6]), _vecs(2))
    labels, _ = vi.search(_vecs(1, seed=3)[0], 10)
    assert sorted(labels.tolist()) == [5, 6]


def test_a_large_index_is_saved_without_a_second_copy(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from ragctl.store import vectors

    monkeypatch.setattr(vectors, "ADOPT_BYTES", 0)  # every index counts as large
    vi = VectorIndex(8, capacity=16)
    rng = np.random.default_rng(0)
    data = rng.normal(size=(50, 8)).astype(np.float32)
    vi.reserve(50)
    vi.add(np.arange(50), data)
    vi.save(tmp_path / "v.hnsw")
    assert vi.usable and vi.element_count == 50  # the copy read back is the index now
    labels, _ = vi.search(data[7], 1)
    assert labels[0] == 7
    vi.add(np.array([50]), data[:1])  # and it still takes new vectors
    assert vi.element_count == 51


def _swap_embeddings(s: Store, a: int, b: int) -> None:
    """Two passages' stored vectors swapped behind the store's back."""
    ea, eb = (s.db.execute("SELECT embedding FROM passages WHERE id = ?", [i]).fetchone()[0]
              for i in (a, b))
    s.db.execute("UPDATE passages SET embedding = ? WHERE id = ?", [eb, a])
    s.db.execute("UPDATE passages SET embedding = ? WHERE id = ?", [ea, b])
    s.db.conn.commit()


def test_an_older_index_gets_its_vector_checks_on_open(tmp_path: Path) -> None:
    """Schema 6 adds a check tying each stored vector to its passage's text; an index made
    before gets it from the vectors it holds, in place."""
    from ragctl.store.sqlite import text_hash, vector_check

    path = tmp_path / "a.db"
    with Store(path) as s:
        ids, _ = s.replace_document(path="/a", format="text", title="", size=1, mtime_ns=1,
                                    sha256="x", chunks=_chunks("one", "two", "three"),
                                    embeddings=_vecs(3))
        assert s.damaged_vectors() == []
        s.db.execute("DELETE FROM _ragctl_migrations WHERE number = 6")
        s.db.execute("ALTER TABLE passages DROP COLUMN vec_check")  # as schema 5 made it
        s.db.conn.commit()
    with Store(path) as s:
        assert s.schema_version == len(MIGRATIONS)
        rows = s.db.execute("SELECT hash, embedding, vec_check FROM passages").fetchall()
        assert [c for _, _, c in rows] == [vector_check(h, e) for h, e, _ in rows]
        assert rows[0][0] == text_hash("one") and s.damaged_vectors() == []
        _swap_embeddings(s, ids[0], ids[2])
        assert s.damaged_vectors() == [ids[0], ids[2]]
        # a damaged vector is never reused for a new passage of the same text
        assert s.embeddings_by_hash([text_hash("one"), text_hash("two")]).keys() == \
            {text_hash("two")}
        s.set_embeddings([ids[0], ids[2]], _vecs(3)[[0, 2]])
        assert s.damaged_vectors() == []
        assert s.journal()[1][ids[0]] == "add"  # for the HNSW file


def test_text_changed_on_disk_is_found(tmp_path: Path) -> None:
    """A passage's text, or one of its sentences, changed behind the store's back (same
    length, even into bytes that are not UTF-8) no longer matches its recorded SHA-256."""
    s = Store(tmp_path / "a.db")
    ids, _ = s.replace_document(path="/a", format="text", title="", size=1, mtime_ns=1,
                                sha256="x", chunks=_chunks("the boiler is serviced in October",
                                                           "the rent is 900 euros"),
                                embeddings=_vecs(2))
    assert s.damaged_texts() == []
    s.db.execute("UPDATE passages SET text = 'the boiler is servXXXXX in October' "
                 "WHERE id = ?", [ids[0]])
    s.db.conn.commit()
    assert s.damaged_texts() == [ids[0]]
    assert s.paths_of(s.damaged_texts()) == {"/a": [ids[0]]}
    s.db.execute("UPDATE passages SET text = 'the boiler is serviced in October' "
                 "WHERE id = ?", [ids[0]])
    s.db.execute("UPDATE sentences SET text = CAST(X'7468652072656e742069732039ff3020657572' "
                 "|| X'6f73' AS TEXT) WHERE passage_id = ?", [ids[1]])
    s.db.conn.commit()
    assert s.damaged_texts() == [ids[1]]


def test_a_full_disk_names_the_disk_and_keeps_what_was_there(tmp_path: Path) -> None:
    """SQLite's own SQLITE_FULL (the database may not grow): one error that names the
    disk, the transaction rolled back, and the run still marked failed."""
    from ragctl.errors import DiskFullError

    s = Store(tmp_path / "a.db")
    kw: dict[str, Any] = dict(path="/x/a.md", format="markdown", title="a", size=1,
                              mtime_ns=1, sha256="h1")
    ids, _ = s.replace_document(chunks=_chunks("alpha one", "beta two"), embeddings=_vecs(2),
                                **kw)
    run = s.start_run()
    pages = s.db.execute("PRAGMA page_count").fetchone()[0]
    s.db.execute(f"PRAGMA max_page_count = {pages}")
    many = _chunks(*(f"gamma {k} " + "word " * 150 for k in range(40)))
    with pytest.raises(DiskFullError, match=r"the disk holding .* is full \(ENOSPC / SQLITE"):
        s.replace_document(chunks=many, embeddings=_vecs(40), **kw)
    assert [r["text"] for r in s.db["passages"].rows] == ["alpha one", "beta two"]
    assert [pid for pid, _ in s.fts_search("beta", 5)] == [ids[1]]
    with pytest.raises(DiskFullError):  # no room for the summary: the status at least
        s.finish_run(run, "failed", {"big": "x" * 50_000})
    assert s.last_run()["status"] == "failed"  # type: ignore[index]
    s.log_answer("q?", "a", False, {"big": "x" * 50_000})  # an answer given is not undone
    assert s.logs() == []
