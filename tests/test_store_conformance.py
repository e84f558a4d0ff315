"""One set of cases for every store backend, the way haystack's document-store test
mixins run one suite against each document store: what :class:`ragctl.store.base.Collection`
and :class:`ragctl.store.base.Store` promise, checked against a local SQLite index and a
PostgreSQL one alike.

Each case takes the ``backend`` it runs on (a :class:`Backend`: its name and what it can
do) and an index made through the real :class:`ragctl.index.indexer.Indexer`. A case one
backend does not support by design is skipped with the reason, never left out. The
PostgreSQL half is marked ``pg`` and shares the server of ``tests/test_pgstore.py``; the
SQLite half needs no server: ``pytest -m "not pg" tests/test_store_conformance.py``.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from pathlib import Path

import pytest

from ragctl.ask.retrieve import Retriever
from ragctl.config import Settings, load_settings
from ragctl.errors import IndexLockedError, IndexNotFoundError
from ragctl.index.doctor import check_index
from ragctl.index.indexer import IndexOptions, index_paths
from ragctl.store import base
from ragctl.store.collection import (
    BACKENDS,
    Collection,
    exists,
    index_logs,
    index_status,
    status,
)
from tests.test_pgstore import _write_corpus, pg_server, pg_url  # noqa: F401  (fixtures)


@dataclass(frozen=True)
class Backend:
    """One store backend and what it can do (the cases skip on what it cannot)."""

    name: str
    shared_writers: bool  # several writers at once, each claiming the files it reads
    vector_file: bool  # an HNSW file beside the store (else the store keeps its own)
    fts_can_disagree: bool  # a full-text index apart from the text, which can fall behind
    checks_texts: bool  # doctor compares each passage's text with its recorded SHA-256

    def lacks(self, what: bool, reason: str) -> None:
        if not what:
            pytest.skip(f"{self.name}: {reason}")


SQLITE = Backend("sqlite", shared_writers=False, vector_file=True, fts_can_disagree=True,
                 checks_texts=True)
POSTGRES = Backend("postgres", shared_writers=True, vector_file=False,
                   fts_can_disagree=False, checks_texts=False)


@pytest.fixture(params=[pytest.param(SQLITE, id="sqlite"),
                        pytest.param(POSTGRES, id="postgres", marks=pytest.mark.pg)])
def backend(request: pytest.FixtureRequest) -> Backend:
    return request.param


@pytest.fixture
def settings(backend: Backend, request: pytest.FixtureRequest, fake_embedder: str
             ) -> Settings:
    """The settings of a fresh index (not made yet) on ``backend``."""
    if backend is POSTGRES:
        return load_settings(store=request.getfixturevalue("pg_url"))
    return load_settings()


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    _write_corpus(tmp_path / "docs")
    return (tmp_path / "docs").resolve()


@pytest.fixture
def indexed(settings: Settings, docs: Path) -> Settings:
    """The settings of an index holding the three documents of ``docs``."""
    summary, failed = index_paths(settings, [docs])
    assert failed is None and summary.added == 3
    return settings


def _path(docs: Path, name: str) -> str:
    return str(docs / name)


def _top(c: Collection, query: str, mode: str = "hybrid") -> str:
    hits = Retriever(c).search(query, limit=3, mode=mode)
    return Path(hits[0].path).name


# ----------------------------------------------------------------------- the protocol

def test_both_backends_are_listed() -> None:
    assert {cls.__name__ for cls in BACKENDS} == {"SqliteCollection", "PgCollection"}


def test_an_open_index_has_every_member_of_the_protocols(indexed: Settings) -> None:
    def members(proto: type) -> set[str]:
        names = {n for n in vars(proto) if not n.startswith("_")}
        names |= set(inspect.get_annotations(proto))
        return names | {"__enter__", "__exit__"} if proto is base.Collection else names

    with Collection.open(indexed) as c:
        assert not [n for n in members(base.Collection) if not hasattr(c, n)]
        assert not [n for n in members(base.Store) if not hasattr(c.store, n)]
        claims = c.claims()
        assert not [n for n in members(base.Claims) if not hasattr(claims, n)]


def test_a_missing_index_is_not_found_nor_made(settings: Settings) -> None:
    assert not exists(settings)
    with pytest.raises(IndexNotFoundError):
        Collection.open(settings)
    assert not exists(settings)


def test_indexing_nothing_leaves_no_index(settings: Settings, tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    summary, _ = index_paths(settings, [tmp_path / "empty"])
    assert summary.added == 0 and not exists(settings)


def test_an_open_index_says_what_it_is(indexed: Settings, backend: Backend) -> None:
    assert exists(indexed)
    with Collection.open(indexed) as c:
        assert c.name == "default" and c.writable
        assert c.embedder_name == "fake-hash" and c.dim == 64
        assert c.location and "s3cret-pw" not in c.location
        assert (c.dir is not None) == backend.vector_file
        assert all(n >= 0 for n in c.bytes_on_disk().values()) and c.bytes_on_disk()


# ----------------------------------------------------------------------- documents

def test_indexed_documents_passages_and_sentences_are_counted(indexed: Settings,
                                                             docs: Path) -> None:
    with Collection.open(indexed) as c:
        store = c.store
        documents = store.documents()
        assert [Path(d.path).name for d in documents] == ["boiler.md", "lease.txt", "trip.txt"]
        assert store.count("documents") == 3
        assert store.count("passages") == sum(d.n_passages for d in documents) >= 3
        assert store.count("sentences") == sum(d.n_sentences for d in documents)
        assert store.roots() == [str(docs)]
        assert sum(store.format_counts().values()) == 3
        doc = store.document(_path(docs, "trip.txt"))
        assert doc is not None and doc.n_passages >= 1
        ids = store.passage_ids()
        passages = store.passages(ids)
        assert sorted(passages) == ids
        sentences = store.sentences_of(ids)
        assert all(sentences[i] for i in ids)
        assert len(store.sentence_rows()) == store.count("sentences")


def test_an_edited_moved_and_removed_file(indexed: Settings, docs: Path) -> None:
    again, _ = index_paths(indexed, [docs])
    assert again.unchanged == 3 and again.added == 0
    (docs / "trip.txt").write_text("The train to Lyon now leaves at 08:15 from platform 9.")
    (docs / "boiler.md").rename(docs / "heating.md")
    (docs / "lease.txt").unlink()
    s, _ = index_paths(indexed, [docs])
    assert (s.updated, s.moved, s.removed) == (1, 1, 1)
    with Collection.open(indexed) as c:
        documents = c.store.documents()
        assert [Path(d.path).name for d in documents] == ["heating.md", "trip.txt"]
        assert c.store.count("passages") == sum(d.n_passages for d in documents)
        assert c.store.count("sentences") == sum(d.n_sentences for d in documents)
        hits = Retriever(c).search("what platform does the Lyon train leave from", limit=3)
        assert "platform 9" in hits[0].text
        assert c.doctor(repair=False).problems == []


def test_a_removed_document_is_never_ranked(indexed: Settings, docs: Path) -> None:
    with Collection.open(indexed) as c:
        c.lock()
        doc = c.store.document(_path(docs, "trip.txt"))
        assert doc is not None
        gone = c.store.delete_document(doc.id)
        assert len(gone) == doc.n_passages and c.store.document(doc.path) is None
        assert c.store.count("documents") == 2
        c.forget_vectors()  # the vectors are brought up to date from the store
        c.settle_vectors()
        qvec = Retriever(c).embedder.embed(["train to Lyon platform"])[0]
        ranking = c.ranked(qvec, "train Lyon platform", c.store.count("passages"), "hybrid")
        assert ranking.vector and not set(gone) & set(ranking.vector + ranking.bm25)
        assert c.doctor(repair=False).problems == []


def test_skipped_files_are_recorded_and_forgotten(indexed: Settings) -> None:
    with Collection.open(indexed) as c:
        c.store.record_skip("/x/a.bin", size=3, mtime_ns=1, reason="unknown format",
                            readers="1")
        c.store.record_skip("/x/b.pdf", size=4, mtime_ns=2, reason="first page only",
                            readers="1", partial=True)
        skips = c.store.skips()
        assert set(skips) == {"/x/a.bin", "/x/b.pdf"} and skips["/x/a.bin"]["size"] == 3
        assert bool(skips["/x/b.pdf"]["partial"]) and not skips["/x/a.bin"]["partial"]
        info = status(c)
        assert (info["skipped"], info["read_in_part"]) == (1, 1)
        c.store.forget_skips(["/x/a.bin", "/x/b.pdf"])
        assert c.store.skips() == {}


# ----------------------------------------------------------------------- searching

@pytest.mark.parametrize("mode", ["hybrid", "vector", "bm25"])
def test_search_finds_the_document(indexed: Settings, mode: str) -> None:
    with Collection.open(indexed) as c:
        assert _top(c, "train to Lyon platform", mode) == "trip.txt"
        assert _top(c, "boiler service Hansen Heating", mode) == "boiler.md"


def test_ranked_gives_the_vector_and_the_full_text_rankings(indexed: Settings,
                                                           docs: Path) -> None:
    with Collection.open(indexed) as c:
        n = c.store.count("passages")
        qvec = Retriever(c).embedder.embed(["deposit of the lease"])[0]
        both = c.ranked(qvec, "deposit of the lease", n, "hybrid")
        assert isinstance(both, base.Ranking)
        assert sorted(both.vector) == c.store.passage_ids()  # depth covers them all
        lease = {p.id for p in c.store.passages(c.store.passage_ids()).values()
                 if p.path == _path(docs, "lease.txt")}
        assert both.bm25 and both.bm25[0] in lease and both.vector[0] in lease
        if both.fused is not None:  # fused by the store itself
            assert max(both.fused, key=lambda i: both.fused[i]) in lease
        vector = c.ranked(qvec, "deposit of the lease", n, "vector")
        assert vector.bm25 == [] and set(vector.vector) == set(both.vector)
        assert vector.vector[0] == both.vector[0]
        bm25 = c.ranked(None, "deposit of the lease", n, "bm25")
        assert bm25.vector == [] and bm25.bm25 == both.bm25
        assert [i for i, _ in c.store.fts_search("deposit", 5)] == \
            c.ranked(None, "deposit", 5, "bm25").bm25


def test_sentences_like_matches_inside_one_document(indexed: Settings, docs: Path) -> None:
    with Collection.open(indexed) as c:
        found = c.store.sentences_like(_path(docs, "boiler.md"), ["% by %", "%LYON%"])
        assert len(found) == 1
        assert found[0].text.startswith("The boiler was serviced by Hansen Heating")


def test_passages_mentioning_every_word_of_a_name(indexed: Settings, docs: Path) -> None:
    with Collection.open(indexed) as c:
        found = c.store.mentioning(["Hansen", "Heating"], 10)
        assert [Path(path).name for _, path in found] == ["boiler.md"]
        assert c.store.mentioning(["hansen", "plumbing"], 10) == []
        assert c.store.mentioning([], 10) == []


def test_a_document_s_fields_are_stored_renewed_and_removed(indexed: Settings,
                                                           docs: Path) -> None:
    note = docs / "memo.txt"
    note.write_text("Subject: Roof repair\nFrom: Ann Lopes <ann@example.org>\n\n"
                    "The roofer comes on Monday to fix the gutter.\n")
    index_paths(indexed, [docs])
    with Collection.open(indexed) as c:
        fields = c.store.document_fields(str(note))
        assert [(f.name, f.value) for f in fields] == [("subject", "Roof repair"),
                                                       ("sender", "Ann Lopes")]
        sender = fields[1]
        assert note.read_text()[sender.start_char:sender.end_char] == "Ann Lopes"
        s = c.store.sentence_at(str(note), sender.place, sender.start_char)
        assert s is not None and "Ann Lopes" in s.text
        assert c.store.sentence_at(str(note), "no such place", sender.start_char) is None
        assert c.store.document_fields(_path(docs, "lease.txt")) == []
    note.write_text("Subject: Roof done\n\nThe gutter is fixed.\n")
    index_paths(indexed, [docs])
    with Collection.open(indexed) as c:
        assert [f.value for f in c.store.document_fields(str(note))] == ["Roof done"]
    note.unlink()
    index_paths(indexed, [docs])
    with Collection.open(indexed) as c:
        assert c.store.document_fields(str(note)) == [] and c.store.count("fields") == 0


def test_the_stamp_changes_when_another_process_commits(indexed: Settings,
                                                        docs: Path) -> None:
    with Collection.open(indexed) as c:
        before = c.stamp()
        assert c.stamp() == before
        (docs / "new.txt").write_text("The car was washed on Sunday morning.")
        s, _ = index_paths(indexed, [docs])
        assert s.added == 1
        assert c.stamp() != before


# ----------------------------------------------------------------------- vectors

def test_vectors_follow_the_store(indexed: Settings, backend: Backend) -> None:
    with Collection.open(indexed) as c:
        c.lock()
        n = c.store.count("passages")
        dim = c.dim
        assert dim is not None
        stored = sum(len(ids) for ids, _ in c.store.vectors(dim=dim))
        assert stored == n and c.store.bad_vector_count(dim) == 0
        if backend.vector_file:
            vi = c.vectors()
            assert vi is not None and vi.element_count == n and c.loaded_vectors is vi
            check, path = c.file_check(), c.hnsw_path
            assert check is not None and path is not None and check.matches(path)
        else:  # the store keeps its own vector index: nothing to load or save
            assert c.vectors() is None and c.loaded_vectors is None
            assert c.file_check() is None and c.hnsw_path is None
        c.save_vectors()
        c.settle_vectors()
        c.rebuild_vectors(save=True)
        assert _top(c, "train to Lyon platform", "vector") == "trip.txt"
        assert c.doctor(repair=False).problems == []


def test_reembedding_with_another_model(indexed: Settings, docs: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAGCTL_EMBEDDER", "fake-hash-32")
    other = indexed.replace(embedder="fake-hash-32")
    s, _ = index_paths(other, [docs], options=IndexOptions(reembed=True))
    with Collection.open(other) as c:
        assert s.reembedded == c.store.count("passages")
        assert c.embedder_name == "fake-hash-32" and c.dim == 32
        assert _top(c, "train to Lyon platform", "vector") == "trip.txt"
        assert c.doctor(repair=False).problems == []


# ----------------------------------------------------------------------- doctor

def test_doctor_on_a_sound_index_reports_no_problems(indexed: Settings) -> None:
    with Collection.open(indexed) as c:
        report = c.doctor(repair=False)
        assert isinstance(report, base.DoctorReport)
        assert report.problems == [] and report.repaired == [] and report.ok
        assert report.info["documents"] == 3
        assert report.info["passages"] == c.store.count("passages")
        assert report.info["embedder"] == "fake-hash" and report.info["dim"] == 64
        assert c.doctor(full=True).problems == []
    assert check_index(indexed).problems == []
    assert index_status(indexed)["damaged"] == []


def test_doctor_finds_and_rebuilds_a_damaged_full_text_index(indexed: Settings,
                                                             backend: Backend) -> None:
    backend.lacks(backend.fts_can_disagree, "the full text is a generated column of the "
                  "passages, which cannot disagree with their text")
    with Collection.open(indexed) as c:
        db = c.store.db
        db.execute("INSERT INTO passages_fts(passages_fts, rowid, text) "
                   "SELECT 'delete', id, text FROM passages WHERE text LIKE '%deposit%'")
        db.conn.commit()
        assert c.store.fts_search("deposit", 5) == []
        report = c.doctor(repair=False)
        assert any("full-text index" in p for p in report.problems)
        c.lock()
        report = c.doctor()
        assert "rebuilt the full-text index" in report.repaired
        assert _top(c, "rent deposit", "bm25") == "lease.txt"


def test_doctor_finds_and_rereads_a_passage_whose_text_changed(indexed: Settings,
                                                               backend: Backend) -> None:
    backend.lacks(backend.checks_texts, "doctor does not (yet) compare a passage's text "
                  "with its recorded SHA-256 (see docs/store.md)")
    with Collection.open(indexed) as c:
        db = c.store.db
        db.execute("UPDATE sentences SET text = 'The lease ends in 1999.' "
                   "WHERE text LIKE 'The apartment lease ends%'")
        db.conn.commit()
        report = c.doctor(repair=False)
        assert any("hold other text than was indexed" in p for p in report.problems)
    report = check_index(indexed)  # the write path reads lease.txt again
    assert any("read 1 documents again" in r for r in report.repaired), report
    assert check_index(indexed, repair=False).problems == []


def test_doctor_closes_runs_left_running_by_a_killed_writer(indexed: Settings) -> None:
    with Collection.open(indexed) as killed:
        killed.store.start_run()  # then its process "dies": the run is never finished
    with Collection.open(indexed) as c:
        assert c.store.stale_runs() == 1
        report = c.doctor(repair=False)
        assert any("left 'running'" in p for p in report.problems)
        assert status(c)["last_run"]["status"] == "interrupted"  # as shown meanwhile
        report = c.doctor()
        assert any("marked 1 runs as interrupted" in r for r in report.repaired)
        assert c.store.stale_runs() == 0 and c.doctor(repair=False).problems == []
        last = c.store.last_run()
        assert last is not None and last["status"] == "interrupted"
    with Collection.open(indexed) as killed:
        killed.store.start_run()
    with Collection.open(indexed) as c:
        assert c.store.stale_runs() == 1
        c.lock()  # a writer closes them too before it writes
        assert c.store.stale_runs() == 0


# ----------------------------------------------------------------------- runs, writers

def test_runs_are_recorded(indexed: Settings) -> None:
    with Collection.open(indexed) as c:
        last = c.store.last_run()
        assert last is not None and last["status"] == "ok"
        assert last["summary"]["added"] == 3 and last["finished"]
        c.lock()
        run = c.store.start_run()
        assert run > last["id"] and c.store.last_run()["status"] == "running"
        c.store.finish_run(run, "ok", {"added": 0, "note": "by hand"})
        last = c.store.last_run()
        assert last is not None and last["id"] == run
        assert last["status"] == "ok" and last["summary"]["note"] == "by hand"
    info = index_status(indexed)
    assert info["last_run"]["id"] == run and info["documents"] == 3
    assert info["embedder"] == "fake-hash" and not info["read_only"]


def test_status_of_an_index(indexed: Settings, docs: Path) -> None:
    with Collection.open(indexed) as c:
        info = status(c)
        assert info["index"] == "default" and info["path"] == c.location
        assert (info["documents"], info["passages"], info["sentences"]) == \
            (3, c.store.count("passages"), c.store.count("sentences"))
        assert info["roots"] == [str(docs)] and info["dim"] == 64
        assert info["damaged"] == [] and info["pending_vector_changes"] == 0
        assert info["total_bytes"] == sum(info["bytes_on_disk"].values()) > 0


def test_one_writer_at_a_time(indexed: Settings, backend: Backend) -> None:
    backend.lacks(not backend.shared_writers, "several writers may write at once (each "
                  "file under its own claim); see test_claims_keep_writers_apart")
    with Collection.open(indexed) as first, Collection.open(indexed) as second:
        first.lock()
        assert second.writer_active() and not first.writer_active()
        with pytest.raises(IndexLockedError):
            second.lock()
        claims = first.claims()
        assert not claims.shared and claims.take("/x") and claims.take("/x")
        claims.release_all()
        first.unlock()
        second.lock()  # free again
        assert first.writer_active()


def test_claims_keep_writers_apart(indexed: Settings, backend: Backend) -> None:
    backend.lacks(backend.shared_writers, "one writer at a time (the writer's lock): "
                  "there is no other writer to share files with")
    with Collection.open(indexed) as first, Collection.open(indexed) as second:
        first.lock()
        second.lock()  # no index-wide lock
        mine, theirs = first.claims(), second.claims()
        assert mine.shared and theirs.shared
        assert mine.take("/x/a.txt") and not theirs.take("/x/a.txt")
        assert theirs.take("/x/b.txt")
        mine.release_all()
        assert theirs.take("/x/a.txt", wait=True)
        theirs.release_all()
        second.store.start_run()
        assert first.writer_active()  # a run of another connection is under way


# ----------------------------------------------------------------------- the log

def test_the_answer_log(indexed: Settings) -> None:
    with Collection.open(indexed) as c:
        c.store.log_answer("When does the lease end?", "31 March 2027 [1]", False,
                           {"sources": [{"path": "lease.txt"}]})
        c.store.log_answer("Who painted the boiler?", "", True, {"sources": []})
        logs = c.store.logs(10)
        assert [r["question"] for r in logs] == ["Who painted the boiler?",
                                                 "When does the lease end?"]
        assert logs[0]["abstained"] is True and logs[1]["abstained"] is False
        assert logs[1]["result"] == {"sources": [{"path": "lease.txt"}]}
        assert [r["question"] for r in c.store.logs(10, query="lease")] == \
            ["When does the lease end?"]
        assert len(c.store.logs(1)) == 1
    assert [r["answer"] for r in index_logs(indexed, query="2027")] == ["31 March 2027 [1]"]
