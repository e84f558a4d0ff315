from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from ragctl.ask.retrieve import Retriever
from ragctl.config import load_settings
from ragctl.errors import AllFilesFailedError, ModelMismatchError
from ragctl.index.indexer import Indexer, IndexOptions, IndexSummary
from ragctl.store.collection import Collection
from tests.conftest import FAKES


def run(paths: list[Path], *, reembed: bool = False, **settings: object) -> IndexSummary:
    settings.setdefault("embedder", "fake-hash")
    s = load_settings(**settings)
    with Collection.open(s, create=True) as c:
        c.lock()
        return Indexer(c, options=IndexOptions(reembed=reembed)).run(paths)


def search(query: str, **kw: object) -> list[str]:
    with Collection.open(load_settings()) as c:
        return [h.text for h in Retriever(c).search(query, **kw)]  # type: ignore[arg-type]


def check_consistent() -> None:
    with Collection.open(load_settings()) as c:
        report = c.doctor(repair=False)
        assert report.problems == []
        db = c.store.db
        # every document's counts match its rows: no half-written file
        for d in c.store.documents():
            n = db.execute("SELECT count(*) FROM passages WHERE document_id=?", [d.id]).fetchone()
            m = db.execute("SELECT count(*) FROM sentences WHERE document_id=?", [d.id]).fetchone()
            assert (n[0], m[0]) == (d.n_passages, d.n_sentences)


def write(path: Path, text: str) -> None:
    path.write_text(text)
    st = path.stat()  # make sure an edit within the same mtime tick is still seen
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    d = tmp_path / "docs"
    d.mkdir()
    write(d / "a.md", "# Cats\n\nCats sleep sixteen hours a day. They purr when happy.\n")
    write(d / "b.txt", "The train to Porto leaves at nine from platform four.")
    return d


def test_first_run_then_nothing_to_do(docs: Path) -> None:
    s = run([docs])
    assert (s.added, s.passages_added, s.skipped) == (2, 2, 0)
    assert search("train Porto", limit=1) == [
        "The train to Porto leaves at nine from platform four."]
    FAKES["fake-hash"].calls = 0
    s = run([docs])
    assert (s.added, s.unchanged, s.changed) == (0, 2, 0)
    check_consistent()


def test_no_path_refreshes_known_roots(docs: Path) -> None:
    run([docs])
    write(docs / "c.txt", "Lemons are yellow.")
    s = run([])
    assert s.added == 1 and s.unchanged == 2


def test_edit_replaces_passages_and_reuses_vectors(docs: Path) -> None:
    run([docs])
    write(docs / "a.md", "# Cats\n\nCats sleep sixteen hours a day. They purr when happy.\n\n"
          "## Dogs\n\nDogs bark at the postman.\n")
    s = run([docs])
    assert (s.updated, s.passages_added, s.passages_removed) == (1, 2, 1)
    assert s.passages_reused_vectors == 1  # the unchanged Cats passage
    assert search("postman bark", limit=1) == ["Dogs bark at the postman."]
    check_consistent()


def test_touch_without_change_only_updates_mtime(docs: Path) -> None:
    run([docs])
    os.utime(docs / "b.txt", ns=(time.time_ns(), time.time_ns() + 10**9))
    s = run([docs])
    assert s.unchanged == 2 and s.changed == 0


def test_delete_and_rename(docs: Path) -> None:
    run([docs])
    (docs / "b.txt").rename(docs / "train.txt")
    (docs / "a.md").unlink()
    FAKES["fake-hash"].texts = 0
    s = run([docs])
    assert (s.moved, s.removed, s.added) == (1, 1, 0)
    assert FAKES["fake-hash"].texts == 0  # nothing re-embedded
    with Collection.open(load_settings()) as c:
        assert [Path(d.path).name for d in c.store.documents()] == ["train.txt"]
    assert search("cats sleep", limit=5) == [
        "The train to Porto leaves at nine from platform four."]
    check_consistent()


def test_removed_root_folder(docs: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    write(other / "x.txt", "Xylophones are loud.")
    run([docs, other])
    for f in other.iterdir():
        f.unlink()
    other.rmdir()
    s = run([])
    assert s.removed == 1


def test_unreadable_changed_file_keeps_old_version(docs: Path) -> None:
    run([docs])
    (docs / "b.txt").write_bytes(b"\x00\x01binary now")
    s = run([docs])
    assert s.skipped == 1
    assert "previously indexed version is kept" in s.warnings[0]["reason"]
    assert search("train Porto", limit=1)[0].startswith("The train to Porto")


def test_model_mismatch_is_an_error_unless_reembed(docs: Path) -> None:
    run([docs])
    with pytest.raises(ModelMismatchError, match="--reembed"):
        run([docs], embedder="fake-hash-32")
    s = run([docs], embedder="fake-hash-32", reembed=True)
    assert s.reembedded == 2
    with Collection.open(load_settings()) as c:
        assert (c.embedder_name, c.dim) == ("fake-hash-32", 32)
    os.environ["RAGCTL_EMBEDDER"] = "fake-hash-32"
    try:
        assert search("train Porto", limit=1)[0].startswith("The train")
        check_consistent()
    finally:
        del os.environ["RAGCTL_EMBEDDER"]


def test_chunker_change_rechunks_everything(docs: Path) -> None:
    run([docs])
    s = run([docs], chunk_words=10)
    assert s.updated == 2


def test_an_index_split_by_an_earlier_version_is_split_again(docs: Path) -> None:
    # how sentences are split changed (list items): the next run reads every file again
    run([docs])
    with Collection.open(load_settings()) as c:
        chunker = json.loads(c.store.get_meta("chunker") or "{}")
        c.store.set_meta(chunker=json.dumps({**chunker, "sentences": 2}, sort_keys=True))
    assert run([docs]).updated == 2
    assert run([docs]).updated == 0


def test_all_files_failing(tmp_path: Path) -> None:
    (tmp_path / "bad.txt").write_bytes(b"\x00" * 10)
    with pytest.raises(AllFilesFailedError):
        run([tmp_path])


def test_journal_is_replayed_after_a_crash(docs: Path) -> None:
    """Simulate a crash after commits but before the HNSW file was saved."""
    run([docs])
    hnsw = Path(os.environ["RAGCTL_HOME"]) / "index" / "default" / "vectors.hnsw"
    stale = hnsw.read_bytes()
    write(docs / "c.txt", "Penguins live in the southern hemisphere.")
    (docs / "b.txt").unlink()
    run([docs])
    hnsw.write_bytes(stale)  # the HNSW file from before the run, as after a kill -9
    with Collection.open(load_settings()) as c:
        c.store.db.execute("INSERT INTO vector_journal (passage_id, op) "
                           "SELECT id, 'add' FROM passages")
        c.store.db.execute("INSERT INTO vector_journal (passage_id, op) VALUES (2, 'delete')")
        c.store.db.conn.commit()
    # search works straight away: the journal is applied in memory
    assert search("penguins", limit=1, mode="vector") == [
        "Penguins live in the southern hemisphere."]
    assert "train" not in " ".join(search("train Porto", mode="vector"))
    with Collection.open(load_settings()) as c:
        report = c.doctor(repair=True)
        assert report.ok and report.info["pending_vector_changes"] == 3
    with Collection.open(load_settings()) as c:
        assert c.store.journal()[1] == {}
    check_consistent()


def test_doctor_rebuilds_missing_or_corrupt_hnsw(docs: Path) -> None:
    run([docs])
    hnsw = Path(os.environ["RAGCTL_HOME"]) / "index" / "default" / "vectors.hnsw"
    hnsw.write_bytes(b"garbage")
    with Collection.open(load_settings()) as c:
        report = c.doctor(repair=False)
        assert report.problems and not report.ok
        report = c.doctor(repair=True)
        assert report.ok and "rebuilt" in report.repaired[0]
    check_consistent()
    hnsw.unlink()
    assert search("train Porto", limit=1, mode="vector")[0].startswith("The train")
    with Collection.open(load_settings()) as c:
        assert any("missing" in p for p in c.doctor(repair=True).problems)
    check_consistent()


def test_second_writer_is_refused(docs: Path) -> None:
    from ragctl.errors import IndexLockedError

    s = load_settings(embedder="fake-hash")
    with Collection.open(s, create=True) as c:
        c.lock()
        with pytest.raises(IndexLockedError):
            run([docs])


@pytest.fixture
def small_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Files over 2 kB are read as a stream of ~500-character blocks, each written as it
    comes."""
    from ragctl.index import indexer, ingest

    monkeypatch.setattr(ingest, "STREAM_BYTES", 2000)
    monkeypatch.setattr(ingest, "BLOCK_CHARS", 500)
    monkeypatch.setattr(indexer, "STREAM_BATCH", 1)


def test_large_text_file_is_streamed_with_exact_offsets(tmp_path: Path,
                                                        small_blocks: None) -> None:
    from ragctl.index.ingest import decode_text

    d = tmp_path / "big"
    d.mkdir()
    paras = [f"Paragraph {k} says that station {k} opens at {k % 12 + 1} o'clock.\r\n"
             f"It is run by keeper number {k}.\r\n\r\n" for k in range(300)]
    f = d / "log.txt"
    f.write_bytes("".join(paras).encode("cp1252"))
    summary = run([d])
    assert summary.added == 1 and summary.passages_added > 20
    check_consistent()
    whole = decode_text(f.read_bytes())
    with Collection.open(load_settings()) as c:
        rows = c.store.db.execute("SELECT start_char, end_char, text FROM sentences").fetchall()
    assert len(rows) == 600
    for start, end, text in rows:
        assert " ".join(whole[start:end].split()) == text
    assert any("keeper number 299" in t for t in search("keeper number 299"))
    assert run([d]).unchanged == 1  # the streamed hash is the file's hash


def test_interrupted_stream_keeps_the_previous_version(tmp_path: Path, small_blocks: None,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    d = tmp_path / "big"
    d.mkdir()
    f = d / "log.txt"
    write(f, "".join(f"Old line {k} about the harbour.\n\n" for k in range(200)))
    first = run([d])
    from ragctl.index import indexer

    calls = {"n": 0}
    real = indexer.Indexer._vectors

    def failing(self: indexer.Indexer, texts: list[str]):  # type: ignore[no-untyped-def]
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt
        return real(self, texts)

    write(f, "".join(f"New line {k} about the airport.\n\n" for k in range(200)))
    with monkeypatch.context() as m, pytest.raises(KeyboardInterrupt):
        m.setattr(indexer.Indexer, "_vectors", failing)
        run([d])
    assert calls["n"] == 3
    check_consistent()
    with Collection.open(load_settings()) as c:
        texts = [r[0] for r in c.store.db.execute("SELECT text FROM passages")]
        assert len(texts) == first.passages_added
        assert all("Old line" in t for t in texts)


def test_large_mail_archive_is_read_message_by_message(tmp_path: Path, small_blocks: None,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from ragctl.index import ingest

    d = tmp_path / "mail"
    d.mkdir()
    parts = []
    for k in range(40):
        body = (f"Delivery {k} of oak planks arrives on dock {k % 7} at {k % 12 + 1} "
                f"o'clock.\nSigned by the harbour master number {k}.\n")
        parts.append(f"From sender{k}@example.org Mon Jan  1 00:00:00 2024\n"
                     f"From: Sender {k} <sender{k}@example.org>\nSubject: Delivery {k}\n\n"
                     f"{body}\n")
        if k == 5:  # a reply quoting message 5 of the archive
            quoted = "".join(f"> {line}\n" for line in body.splitlines())
            parts.append("From ann@example.org Mon Jan  1 01:00:00 2024\n"
                         "From: Ann <ann@example.org>\nSubject: Re: Delivery 5\n\n"
                         "Thanks, the crane will be ready.\n\n"
                         f"On Monday, Sender 5 wrote:\n{quoted}\n")
    f = d / "archive.mbox"
    f.write_text("".join(parts))
    assert f.stat().st_size > ingest.STREAM_BYTES
    held: list[bytes] = []
    real_parse = ingest._parse_mbox
    monkeypatch.setattr(ingest, "_parse_mbox", lambda p, data: held.append(data)
                        or real_parse(p, data))
    summary = run([d])
    assert summary.added == 1 and not held  # never read whole
    check_consistent()
    with Collection.open(load_settings()) as c:
        texts = [r[0] for r in c.store.db.execute("SELECT text FROM passages")]
        places = {r[0] for r in c.store.db.execute("SELECT place FROM passages")}
    assert sum("harbour master number 5." in t for t in texts) == 1  # the quote is gone
    assert any("the crane will be ready" in t for t in texts)
    assert any(p.startswith("#41: Delivery 39") for p in places)
    assert any("harbour master number 39" in t for t in search("harbour master number 39"))
    assert run([d]).unchanged == 1


def test_the_first_of_each_retriever_can_be_kept_whatever_its_fused_rank(tmp_path: Path
                                                                          ) -> None:
    d = tmp_path / "notes"
    d.mkdir()
    for i in range(30):
        write(d / f"n{i:02d}.txt", f"Who wrote note {i}? Anna wrote it, who else wrote it.")
    write(d / "rare.txt", "Zyzzyva is a weevil; the bulletin on beetles, moths, mites, "
          "ants, bees, wasps and flies was compiled by the museum in the spring.")
    run([d])
    question = "Who wrote about the zyzzyva?"
    with Collection.open(load_settings()) as c:
        r = Retriever(c)
        assert r.search(question, limit=1, mode="bm25")[0].path.endswith("rare.txt")
        fused = r.search(question, limit=5)
        assert not any(h.path.endswith("rare.txt") for h in fused)
        first = {r.search(question, limit=1, mode=m)[0].passage_id for m in ("bm25", "vector")}
        kept = r.search(question, limit=5, keep_top=1)
    ids = [h.passage_id for h in kept]
    assert len(kept) == 5 and first <= set(ids) and kept[-1].path.endswith("rare.txt")
    others = [p for p in ids if p not in first]  # the best fused ones fill the other places
    assert others == [h.passage_id for h in fused if h.passage_id not in first][:len(others)]


def test_progress_lines_name_the_indexing_and_its_total_while_the_model_loads(
        docs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # the embedding model loads after the first file is read: its loading is a detail of
    # "indexing", not a phase that would restart the count without its total
    from ragctl.app.progress import RichReporter

    reporter = RichReporter(enabled=True)
    reporter.LINE_FILES = 1
    with Collection.open(load_settings(embedder="fake-hash"), create=True) as c:
        c.lock()
        with reporter:
            Indexer(c, reporter=reporter).run([docs])
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert [line.split(" files")[0] for line in lines] == ["indexing: 1 of 2", "indexing: 2 of 2"]


def test_the_run_time_is_shared_among_named_phases(docs: Path) -> None:
    from ragctl.index.indexer import PHASES, time_line

    s = run([docs])
    phases = s.to_dict()["phases"]
    assert list(phases) == [p.name for p in PHASES]
    assert all(t >= 0 for t in phases.values())
    assert sum(phases.values()) <= s.seconds + 0.01  # each moment counted once
    assert s.embed_seconds == s.phases.embedding
    line = time_line(s.seconds, phases)
    assert all(f"{p.label} " in line for p in PHASES)


def test_ocr_time_is_counted_as_ocr(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ragctl.index import ocr
    from tests.test_ocr import SCANNED, FakeEngine, mixed_pdf, page_image

    class SlowEngine(FakeEngine):
        def read(self, image: object) -> str:
            time.sleep(0.2)
            return self.text

    (tmp_path / "log.pdf").write_bytes(mixed_pdf(page_image(SCANNED)))
    monkeypatch.setattr(ocr, "engine", lambda name="auto": SlowEngine())
    s = run([tmp_path / "log.pdf"])
    assert s.added == 1 and s.phases.ocr >= 0.2  # the sleep, not a speed
    assert sum(t for _, t in s.phases.items()) <= s.seconds + 0.01


def test_progress_lines_come_on_time_during_a_slow_stage(
        docs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # stderr is not a terminal here: a line at least every LINE_SECONDS, even while one
    # slow batch is embedded and nothing advances
    import numpy as np

    from ragctl.app.progress import RichReporter
    from tests.fakes import HashEmbedder

    class SlowEmbedder(HashEmbedder):
        def _embed(self, texts: list[str]) -> np.ndarray:
            time.sleep(0.5)
            return super()._embed(texts)

    reporter = RichReporter(enabled=True)
    reporter.LINE_SECONDS = 0.05
    with Collection.open(load_settings(embedder="fake-hash"), create=True) as c:
        c.lock()
        with reporter:
            Indexer(c, reporter=reporter,
                    embedder_factory=lambda _name: SlowEmbedder()).run([docs])
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    embedding = [line for line in lines if " · embedding " in line]
    assert len(embedding) >= 2, lines
    assert embedding[0].startswith("indexing: 0 of 2 files, 0 passages")
    assert embedding[0].endswith(("a.md", "b.txt"))  # the file the run is on


def test_quiet_progress_prints_no_lines(docs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from ragctl.app.progress import RichReporter

    reporter = RichReporter(enabled=False)
    reporter.LINE_SECONDS = 0.0
    with Collection.open(load_settings(embedder="fake-hash"), create=True) as c:
        c.lock()
        with reporter:
            Indexer(c, reporter=reporter).run([docs])
    assert capsys.readouterr().err == ""
