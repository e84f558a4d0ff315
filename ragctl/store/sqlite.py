"""Stage 5b: the SQLite store of one index (documents, passages, sentences, vectors).

Written through sqlite-utils, in WAL mode, with numbered migrations. Every vector is
kept as a float32 blob so the HNSW file can be rebuilt without re-embedding, and every
change to the set of passages is journalled in ``vector_journal`` in the same
transaction, so the HNSW file can be brought up to date after a crash. Each passage
keeps the SHA-256 of its text (``hash``) and a check tying its vector to that text
(``vec_check``), so that ``doctor`` can find either changed on disk. A full disk is
:class:`DiskFullError`, never a damaged database.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import logging
import os
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import sqlite_utils

from ragctl.errors import DamagedIndexError, DiskFullError, RagctlError
from ragctl.records import Chunk, DocField, Passage, Sentence

logger = logging.getLogger("ragctl.store")

SCHEMA_VERSION_KEY = "schema_version"
SQLITE_FULL = 13  # "database or disk is full"


def now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def vector_check(text_sha: str, embedding: bytes) -> str:
    """What ties a stored vector to its passage: a hash of the passage text's SHA-256 and
    the vector's bytes. A vector swapped with another passage's, or changed on disk, no
    longer matches it (``doctor`` checks every one)."""
    return hashlib.blake2b(text_sha.encode("ascii", "replace") + bytes(embedding),
                           digest_size=16).hexdigest()


def _vector_check_sql(text_sha: Any, embedding: Any) -> str | None:
    if text_sha is None or embedding is None:
        return None
    return vector_check(str(text_sha), bytes(embedding))


def _functions(db: sqlite_utils.Database) -> None:
    """SQL functions the statements here use (``ragctl_vec_check(hash, embedding)``)."""
    db.conn.create_function("ragctl_vec_check", 2, _vector_check_sql, deterministic=True)


def disk_full(error: BaseException) -> bool:
    """Whether ``error`` is SQLite's "database or disk is full" (or the OS's ENOSPC)."""
    import errno
    import sqlite3

    if isinstance(error, sqlite3.OperationalError):
        return getattr(error, "sqlite_errorcode", None) == SQLITE_FULL \
            or "database or disk is full" in str(error)
    return isinstance(error, OSError) and error.errno in (errno.ENOSPC, errno.EDQUOT)


def disk_full_error(folder: Path | str) -> DiskFullError:
    return DiskFullError(f"the disk holding {folder} is full (ENOSPC / SQLITE_FULL): free "
                         "space and run again; what was committed before is kept")


@contextmanager
def naming_a_full_disk(folder: Path | str) -> Iterator[None]:
    """SQLite's "database or disk is full" inside becomes :class:`DiskFullError`, which
    names the disk (not a damaged database)."""
    import sqlite3

    try:
        yield
    except sqlite3.OperationalError as e:
        if disk_full(e):
            raise disk_full_error(folder) from None
        raise


IN_BATCH = 500  # values bound in one "IN (...)": under SQLite's limit on parameters

T = TypeVar("T")


def in_parts(values: Iterable[T]) -> Iterator[tuple[list[T], str]]:
    """``values`` in parts of :data:`IN_BATCH`, each with its "?,?,…" placeholders."""
    values = list(values)
    for i in range(0, len(values), IN_BATCH):
        part = values[i:i + IN_BATCH]
        yield part, ",".join("?" * len(part))


# ----------------------------------------------------------------------- migrations

def _m001_initial(db: sqlite_utils.Database) -> None:
    db.executescript("""
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);
        CREATE TABLE roots (path TEXT PRIMARY KEY, added TEXT);
        CREATE TABLE documents (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            path TEXT NOT NULL UNIQUE,
            format TEXT NOT NULL,
            title TEXT,
            size INTEGER NOT NULL,
            mtime_ns INTEGER NOT NULL,
            sha256 TEXT NOT NULL,
            n_passages INTEGER NOT NULL,
            n_sentences INTEGER NOT NULL,
            indexed_at TEXT NOT NULL
        );
        CREATE INDEX documents_sha256 ON documents(sha256);
        CREATE TABLE passages (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            document_id INTEGER NOT NULL REFERENCES documents(id),
            seq INTEGER NOT NULL,
            place TEXT NOT NULL,
            start_char INTEGER NOT NULL,
            end_char INTEGER NOT NULL,
            text TEXT NOT NULL,
            n_words INTEGER NOT NULL,
            hash TEXT NOT NULL,
            embedding BLOB NOT NULL
        );
        CREATE INDEX passages_document ON passages(document_id);
        CREATE INDEX passages_hash ON passages(hash);
        CREATE TABLE sentences (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            passage_id INTEGER NOT NULL REFERENCES passages(id),
            document_id INTEGER NOT NULL REFERENCES documents(id),
            seq INTEGER NOT NULL,
            start_char INTEGER NOT NULL,
            end_char INTEGER NOT NULL,
            text TEXT NOT NULL
        );
        CREATE INDEX sentences_passage ON sentences(passage_id);
        CREATE TABLE vector_journal (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            passage_id INTEGER NOT NULL,
            op TEXT NOT NULL CHECK (op IN ('add', 'delete'))
        );
        CREATE TABLE runs (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            started TEXT NOT NULL,
            finished TEXT,
            status TEXT NOT NULL,
            summary TEXT
        );
    """)
    db.table("passages").enable_fts(["text"], create_triggers=True,
                              tokenize="porter unicode61 remove_diacritics 2")


def _m002_sentence_raw(db: sqlite_utils.Database) -> None:
    """The source text of a sentence when it differs from its normalized text (NULL when
    the same), so offsets inside a sentence resolve to the source."""
    db.execute("ALTER TABLE sentences ADD COLUMN raw TEXT")


def _m003_log(db: sqlite_utils.Database) -> None:
    """Every question asked and what ragctl answered (``ragctl logs``)."""
    db.execute("CREATE TABLE log (id INTEGER PRIMARY KEY AUTOINCREMENT, asked TEXT NOT NULL, "
               "question TEXT NOT NULL, answer TEXT NOT NULL, abstained INTEGER NOT NULL, "
               "result TEXT NOT NULL)")


def _m004_skips(db: sqlite_utils.Database) -> None:
    """Files that could not be read (or were read in part: pages of a scan without OCR),
    so that the next run says "skipped as before" instead of reading and warning again,
    and reads them again when what it can read changed (an OCR engine was installed)."""
    db.execute("CREATE TABLE skips (path TEXT PRIMARY KEY, size INTEGER NOT NULL, "
               "mtime_ns INTEGER NOT NULL, reason TEXT NOT NULL, readers TEXT NOT NULL, "
               "partial INTEGER NOT NULL DEFAULT 0)")


def _m005_fts_place(db: sqlite_utils.Database) -> None:
    """Full-text search over a passage's place (its section's headings, a mail's subject)
    as well as its text: the aphorisms under "The Zen of Python" never say "Zen". Safe to
    run again if interrupted (the search index is rebuilt from the passages)."""
    db.table("passages").enable_fts(["place", "text"], create_triggers=True, replace=True,
                                    tokenize="porter unicode61 remove_diacritics 2")


def _m006_vector_check(db: sqlite_utils.Database) -> None:
    """Each passage's :func:`vector_check`, so that ``doctor`` can tell a stored vector
    that is not its passage's (an existing index gets it from the vectors it holds now:
    the best that can be done). About 40 s per million passages, once."""
    db.execute("ALTER TABLE passages ADD COLUMN vec_check TEXT")
    db.execute("UPDATE passages SET vec_check = ragctl_vec_check(hash, embedding)")


def _m007_fields(db: sqlite_utils.Database) -> None:
    """A document's own fields (author, sender, date, title, subject, status) with the
    source offsets of their value, read when it is indexed (an existing index gets them
    when its files are read again, once: the readers' version in the chunker settings)."""
    db.execute("CREATE TABLE fields (id INTEGER PRIMARY KEY AUTOINCREMENT, "
               "document_id INTEGER NOT NULL REFERENCES documents(id), name TEXT NOT NULL, "
               "value TEXT NOT NULL, place TEXT NOT NULL, start_char INTEGER NOT NULL, "
               "end_char INTEGER NOT NULL)")
    db.execute("CREATE INDEX fields_document ON fields(document_id)")


MIGRATIONS: list[Callable[[sqlite_utils.Database], None]] = [
    _m001_initial, _m002_sentence_raw, _m003_log, _m004_skips, _m005_fts_place,
    _m006_vector_check, _m007_fields]


def migrate(db: sqlite_utils.Database) -> int:
    """Apply the numbered migrations not applied yet; returns the schema version."""
    _functions(db)
    db.execute("CREATE TABLE IF NOT EXISTS _ragctl_migrations "
               "(number INTEGER PRIMARY KEY, name TEXT, applied TEXT)")
    done = {r[0] for r in db.execute("SELECT number FROM _ragctl_migrations").fetchall()}
    for number, step in enumerate(MIGRATIONS, start=1):
        if number in done:
            continue
        with db.atomic():
            step(db)
            db.table("_ragctl_migrations").insert(
                {"number": number, "name": step.__name__, "applied": now()})
            db.table("meta").upsert({"key": SCHEMA_VERSION_KEY, "value": str(number)}, pk="key")
    return len(MIGRATIONS)


# --------------------------------------------------------------------------- records

@dataclass(frozen=True)
class DocumentRecord:
    id: int
    path: str
    format: str
    title: str
    size: int
    mtime_ns: int
    sha256: str
    n_passages: int
    n_sentences: int
    indexed_at: str


def _doc(row: dict[str, Any]) -> DocumentRecord:
    return DocumentRecord(**{k: row[k] for k in DocumentRecord.__dataclass_fields__})


class Store:
    """One index's SQLite database: private to its owner (0600), in WAL mode, migrated on
    open; or, with ``readonly`` (a backup, a shared copy, read-only media), opened
    read-only and never changed."""

    def __init__(self, path: Path, *, readonly: bool = False) -> None:
        import sqlite3

        self.path = path
        self.readonly = readonly
        # why the newest committed changes cannot be read here (None when they can)
        self.unread_changes: str | None = None
        try:
            if readonly:
                conn, self.unread_changes = _read_only(path)
                self.db = sqlite_utils.Database(conn)
                _functions(self.db)
                self.schema_version = int(self.get_meta(SCHEMA_VERSION_KEY) or 0)
                if self.unread_changes:
                    logger.warning("%s", self.unread_changes)
            else:
                path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
                new = not path.exists()
                self.db = sqlite_utils.Database(path)
                if new:
                    os.chmod(path, 0o600)
                self.db.execute("PRAGMA busy_timeout = 10000")
                self.db.enable_wal()
                self.db.execute("PRAGMA synchronous = NORMAL")
                self.db.execute("PRAGMA foreign_keys = ON")
                self.schema_version = migrate(self.db)
        except sqlite3.DatabaseError as e:
            if disk_full(e):
                raise disk_full_error(path.parent) from None
            raise DamagedIndexError(
                f"the index database {path} is damaged or is not a ragctl index ({e}); "
                "run: ragctl doctor") from None
        if self.schema_version < len(MIGRATIONS):
            raise RagctlError(
                f"the index {path.parent.name!r} was made by an older ragctl and is "
                "read-only here; open it once where it can be written to upgrade it")

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One transaction (a savepoint inside another); a full disk rolls it back and
        raises :class:`DiskFullError`."""
        with naming_a_full_disk(self.path.parent), self.db.atomic():
            yield

    # ------------------------------------------------------------------ meta
    def get_meta(self, key: str, default: str | None = None) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", [key]).fetchone()
        return row[0] if row else default

    def set_meta(self, **values: Any) -> None:
        with self.transaction():
            self.db.table("meta").upsert_all(
                [{"key": k, "value": v if isinstance(v, str) else json.dumps(v)}
                 for k, v in values.items()], pk="key")

    def meta(self) -> dict[str, str]:
        return {r["key"]: r["value"] for r in self.db.table("meta").rows}

    # ------------------------------------------------------------------ roots
    def add_root(self, path: str) -> None:
        self.db.table("roots").insert({"path": path, "added": now()}, pk="path", ignore=True)

    def roots(self) -> list[str]:
        return [r["path"] for r in self.db.table("roots").rows_where(order_by="path")]

    # ------------------------------------------------------------------ documents
    def document(self, path: str) -> DocumentRecord | None:
        rows = list(self.db.table("documents").rows_where("path = ?", [path], limit=1))
        return _doc(rows[0]) if rows else None

    def documents(self, under: str | None = None) -> list[DocumentRecord]:
        if under is None:
            return [_doc(r) for r in self.db.table("documents").rows_where(order_by="path")]
        prefix = under.rstrip("/") + "/"
        return [_doc(r) for r in self.db.table("documents").rows_where(
            "path = ? OR substr(path, 1, ?) = ?", [under, len(prefix), prefix],
            order_by="path")]

    def documents_by_sha(self, sha: str) -> list[DocumentRecord]:
        return [_doc(r) for r in self.db.table("documents").rows_where("sha256 = ?", [sha])]

    def touch_document(self, doc_id: int, *, size: int, mtime_ns: int) -> None:
        with self.transaction():
            self.db.table("documents").update(doc_id, {"size": size, "mtime_ns": mtime_ns})

    def move_document(self, doc_id: int, *, path: str, size: int, mtime_ns: int) -> None:
        """A renamed file: keep its passages and vectors, change its path."""
        with self.transaction():
            self.db.table("documents").update(doc_id, {"path": path, "size": size,
                                                 "mtime_ns": mtime_ns, "indexed_at": now()})

    def _delete_document_rows(self, doc_id: int) -> list[int]:
        ids = [r[0] for r in self.db.execute(
            "SELECT id FROM passages WHERE document_id = ?", [doc_id]).fetchall()]
        self.db.execute("DELETE FROM sentences WHERE document_id = ?", [doc_id])
        self.db.execute("DELETE FROM fields WHERE document_id = ?", [doc_id])
        self.db.execute("DELETE FROM passages WHERE document_id = ?", [doc_id])
        self.db.execute("DELETE FROM documents WHERE id = ?", [doc_id])
        if ids:
            self.db.table("vector_journal").insert_all(
                {"passage_id": i, "op": "delete"} for i in ids)
        return ids

    def delete_document(self, doc_id: int) -> list[int]:
        """Remove a document, its passages and sentences; returns the passage ids."""
        with self.transaction():
            return self._delete_document_rows(doc_id)

    def replace_document(self, *, path: str, format: str, title: str, size: int,
                         mtime_ns: int, sha256: str, chunks: Sequence[Chunk],
                         embeddings: np.ndarray, fields: Sequence[DocField] = ()
                         ) -> tuple[list[int], list[int]]:
        """Write one file's new state in one transaction; returns (new ids, old ids).

        Inside a transaction of the caller's this joins it (a savepoint), so several
        files can be committed together and each is still all-old or all-new.
        """
        with self.writing_document(path=path, format=format, title=title, size=size,
                                   mtime_ns=mtime_ns, sha256=sha256) as writer:
            writer.add(chunks, embeddings)
            writer.add_fields(fields)
        return writer.ids, writer.old_ids

    @contextmanager
    def writing_document(self, *, path: str, format: str, title: str, size: int,
                         mtime_ns: int, sha256: str) -> Iterator[DocumentWriter]:
        """Replace one file's rows part by part (a file read as a stream), all in one
        transaction: an exception inside leaves the previous version untouched."""
        with self.transaction():
            old = self.document(path)
            old_ids = self._delete_document_rows(old.id) if old is not None else []
            doc_id = _pk(self.db.table("documents").insert({
                "path": path, "format": format, "title": title, "size": size,
                "mtime_ns": mtime_ns, "sha256": sha256, "n_passages": 0,
                "n_sentences": 0, "indexed_at": now(),
            }).last_pk)
            writer = DocumentWriter(self, doc_id, old_ids)
            yield writer
            self.db.execute("UPDATE documents SET n_passages = ?, n_sentences = ? WHERE id = ?",
                            [len(writer.ids), writer.n_sentences, doc_id])

    # ------------------------------------------------------------------ skipped files
    def skips(self) -> dict[str, dict[str, Any]]:
        """path → {size, mtime_ns, reason, readers, partial} of the files skipped (or read
        in part) by earlier runs."""
        return {r["path"]: r for r in self.db.table("skips").rows}

    def record_skip(self, path: str, *, size: int, mtime_ns: int, reason: str,
                    readers: str, partial: bool = False) -> None:
        with self.transaction():
            self.db.table("skips").upsert(
                {"path": path, "size": size, "mtime_ns": mtime_ns, "reason": reason,
                 "readers": readers, "partial": int(partial)}, pk="path")

    def forget_skips(self, paths: Iterable[str]) -> None:
        with self.transaction():
            for part, marks in in_parts(paths):
                self.db.execute(f"DELETE FROM skips WHERE path IN ({marks})", part)

    # ------------------------------------------------------------------ passages
    def count(self, table: str) -> int:
        return int(self.db.execute(f"SELECT count(*) FROM [{table}]").fetchone()[0])

    def passage_ids(self) -> list[int]:
        return [r[0] for r in self.db.execute("SELECT id FROM passages ORDER BY id")]

    def embeddings_by_hash(self, hashes: Iterable[str]) -> dict[str, bytes]:
        """Stored vectors of passages with these texts (reused instead of re-embedding);
        never a vector that no longer matches its :func:`vector_check`."""
        found: dict[str, bytes] = {}
        for part, marks in in_parts(set(hashes)):
            for h, blob, check in self.db.execute(
                    f"SELECT hash, embedding, vec_check FROM passages WHERE hash IN ({marks})",
                    part):
                if h not in found and (check is None or vector_check(h, blob) == check):
                    found[h] = blob
        return found

    def vectors(self, ids: Sequence[int] | None = None, *, dim: int,
                batch: int = 5000) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """(ids, vectors) in batches, for all passages or the given ids."""
        if ids is None:
            last = -1
            while True:
                rows = self.db.execute(
                    "SELECT id, embedding FROM passages WHERE id > ? ORDER BY id LIMIT ?",
                    [last, batch]).fetchall()
                if not rows:
                    return
                last = rows[-1][0]
                yield _unpack(rows, dim)
        else:
            for part, marks in in_parts(ids):
                rows = self.db.execute(
                    f"SELECT id, embedding FROM passages WHERE id IN ({marks})", part
                ).fetchall()
                if rows:
                    yield _unpack(rows, dim)

    def passages(self, ids: Sequence[int]) -> dict[int, Passage]:
        out: dict[int, Passage] = {}
        for part, marks in in_parts(int(x) for x in ids):
            for r in self.db.query(
                f"SELECT p.id, p.document_id, d.path, d.title, p.place, p.start_char, "
                f"p.end_char, p.text FROM passages p JOIN documents d ON d.id = p.document_id "
                f"WHERE p.id IN ({marks})", part):
                out[r["id"]] = Passage(**r)
        return out

    def sentences_of(self, passage_ids: Sequence[int]) -> dict[int, list[Sentence]]:
        """The sentences of these passages, in document order, keyed by passage id."""
        out: dict[int, list[Sentence]] = {int(p): [] for p in passage_ids}
        for part, marks in in_parts(out):
            for r in self.db.query(
                f"SELECT s.id, s.passage_id, s.seq, d.path, d.title, p.place, s.start_char, "
                f"s.end_char, s.text, s.raw FROM sentences s "
                f"JOIN passages p ON p.id = s.passage_id JOIN documents d ON d.id = s.document_id "
                f"WHERE s.passage_id IN ({marks}) "
                f"ORDER BY s.passage_id, s.seq", part):
                out[r["passage_id"]].append(Sentence(**r))
        return out

    def sentences_like(self, path: str, patterns: Sequence[str], limit: int = 50
                       ) -> list[Sentence]:
        """Sentences of the document at ``path`` whose text is LIKE one of ``patterns``
        (case-insensitive), in document order."""
        if not patterns:
            return []
        where = " OR ".join("s.text LIKE ?" for _ in patterns)
        return [Sentence(**r) for r in self.db.query(
            f"SELECT s.id, s.passage_id, s.seq, d.path, d.title, p.place, s.start_char, "
            f"s.end_char, s.text, s.raw FROM documents d "
            f"JOIN passages p ON p.document_id = d.id JOIN sentences s ON s.passage_id = p.id "
            f"WHERE d.path = ? AND ({where}) ORDER BY s.passage_id, s.seq LIMIT ?",
            [path, *patterns, int(limit)])]

    def document_fields(self, path: str) -> list[DocField]:
        """The fields the document at ``path`` states about itself, in document order."""
        return [DocField(**r) for r in self.db.query(
            "SELECT f.name, f.value, f.place, f.start_char, f.end_char FROM fields f "
            "JOIN documents d ON d.id = f.document_id WHERE d.path = ? ORDER BY f.id", [path])]

    def sentence_at(self, path: str, place: str, start_char: int) -> Sentence | None:
        """The sentence of the document at ``path`` whose source offsets, in the section at
        ``place``, hold ``start_char`` (a field's line)."""
        rows = list(self.db.query(
            "SELECT s.id, s.passage_id, s.seq, d.path, d.title, p.place, s.start_char, "
            "s.end_char, s.text, s.raw FROM documents d "
            "JOIN passages p ON p.document_id = d.id JOIN sentences s ON s.passage_id = p.id "
            "WHERE d.path = ? AND p.place = ? AND s.start_char <= ? AND s.end_char > ? "
            "ORDER BY s.passage_id, s.seq LIMIT 1", [path, place, start_char, start_char]))
        return Sentence(**rows[0]) if rows else None

    def sentence_rows(self) -> list[tuple[int, int, str]]:
        """(id, passage id, text) of every sentence."""
        return [(int(r[0]), int(r[1]), str(r[2])) for r in
                self.db.execute("SELECT id, passage_id, text FROM sentences")]

    def format_counts(self) -> dict[str, int]:
        """Documents per format, most common first."""
        return {r[0]: int(r[1]) for r in self.db.execute(
            "SELECT format, count(*) FROM documents GROUP BY format ORDER BY 2 DESC")}

    def fts_search(self, query: str, limit: int) -> list[tuple[int, float]]:
        """BM25 over passages: (passage id, bm25 score where higher is better)."""
        terms = [t for t in re.findall(r"\w+", query.lower()) if len(t) > 1 or t.isdigit()]
        if not terms:
            return []
        # a number is looked for in the text alone: a place's numbers are page and section
        # numbers ("p. 12"), not what a question's "12" is about
        match = " OR ".join(("text : " if t.isdigit() else "") + '"' + t.replace('"', '""') + '"'
                            for t in dict.fromkeys(terms))
        rows = self.db.execute(
            "SELECT rowid, bm25(passages_fts) AS score FROM passages_fts "
            "WHERE passages_fts MATCH ? ORDER BY score LIMIT ?", [match, limit]).fetchall()
        return [(int(r[0]), -float(r[1])) for r in rows]

    def mentioning(self, words: Sequence[str], limit: int) -> list[tuple[int, str]]:
        """Passages whose place or text holds every one of ``words`` (stemmed as the search
        stems them), best BM25 first: (passage id, its document's path)."""
        terms = [t for w in words for t in re.findall(r"\w+", w.lower())]
        if not terms:
            return []
        match = " AND ".join('"' + t + '"' for t in dict.fromkeys(terms))
        rows = self.db.execute(
            "SELECT f.rowid, d.path FROM passages_fts f JOIN passages p ON p.id = f.rowid "
            "JOIN documents d ON d.id = p.document_id WHERE passages_fts MATCH ? "
            "ORDER BY bm25(passages_fts) LIMIT ?", [match, int(limit)]).fetchall()
        return [(int(r[0]), str(r[1])) for r in rows]

    def has_table(self, table: str) -> bool:
        return bool(self.db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND "
                                    "name = ?", [table]).fetchone())

    def dump(self, table: str, columns: Sequence[str], *, batch: int = 2000
             ) -> Iterator[list[tuple[Any, ...]]]:
        """Every row of ``table`` (``columns`` only), in parts of ``batch``, by rowid
        (``ragctl copy``)."""
        known = {r[1] for r in self.db.execute(f"PRAGMA table_info([{table}])")}
        if not known or not set(columns) <= known:
            raise ValueError(f"unknown table or columns: {table} {columns}")
        cols = ", ".join(f"[{c}]" for c in columns)
        last = -1
        while True:
            rows = self.db.execute(f"SELECT rowid, {cols} FROM [{table}] WHERE rowid > ? "
                                   "ORDER BY rowid LIMIT ?", [last, batch]).fetchall()
            if not rows:
                return
            last = rows[-1][0]
            yield [tuple(r[1:]) for r in rows]

    # ------------------------------------------------------------------ re-embedding
    def passage_titles(self, after: int, limit: int) -> list[tuple[int, str, str]]:
        """(id, document title, text) of up to ``limit`` passages with ids above
        ``after``, in id order."""
        return [(int(r[0]), str(r[1] or ""), str(r[2])) for r in self.db.execute(
            "SELECT p.id, d.title, p.text FROM passages p JOIN documents d "
            "ON d.id = p.document_id WHERE p.id > ? ORDER BY p.id LIMIT ?", [after, limit])]

    def passage_texts(self, after: int, limit: int) -> list[tuple[int, str]]:
        """(id, text) of up to ``limit`` passages with ids above ``after``, in id order."""
        return [(int(r[0]), str(r[1])) for r in self.db.execute(
            "SELECT id, text FROM passages WHERE id > ? ORDER BY id LIMIT ?", [after, limit])]

    def start_staging(self) -> None:
        """An empty table for new embeddings, swapped in by :meth:`swap_in_staged`."""
        self.db.execute("CREATE TABLE IF NOT EXISTS reembed_staging "
                        "(passage_id INTEGER PRIMARY KEY, embedding BLOB NOT NULL)")
        with self.transaction():
            self.db.execute("DELETE FROM reembed_staging")

    def stage_embeddings(self, ids: Sequence[int], vectors: np.ndarray) -> None:
        with self.transaction():
            self.db.table("reembed_staging").insert_all(
                {"passage_id": int(i), "embedding": np.asarray(v, dtype=np.float32).tobytes()}
                for i, v in zip(ids, vectors, strict=True))

    def swap_in_staged(self, **meta: Any) -> None:
        """Every passage takes its staged embedding, in one transaction with ``meta``."""
        with self.transaction():
            self.db.execute("UPDATE passages SET embedding = (SELECT s.embedding FROM "
                            "reembed_staging s WHERE s.passage_id = passages.id)")
            self.db.execute("UPDATE passages SET vec_check = ragctl_vec_check(hash, embedding)")
            self.db.execute("DELETE FROM reembed_staging")
            self.db.execute("DELETE FROM vector_journal")
            self.set_meta(**meta)

    # ------------------------------------------------------------------ checks
    def data_version(self) -> int:
        """Changes when another connection commits (SQLite's ``PRAGMA data_version``)."""
        return int(self.db.execute("PRAGMA data_version").fetchone()[0])

    def integrity(self, *, quick: bool = False) -> str:
        """SQLite's integrity check: "ok", or what it found (a database too damaged to
        check says why)."""
        import sqlite3

        try:
            rows = self.db.execute(f"PRAGMA {'quick' if quick else 'integrity'}_check"
                                   ).fetchall()
        except sqlite3.DatabaseError as e:
            return str(e)
        found = "; ".join(str(r[0]) for r in rows[:3])
        return found or "ok"

    def fts_problem(self) -> str | None:
        """Why the full-text index does not match the passages, or None (FTS5's
        integrity check against the content table, rank = 1)."""
        import sqlite3

        indexed = int(self.db.execute("SELECT count(*) FROM passages_fts_docsize")
                      .fetchone()[0])
        passages = self.count("passages")
        if indexed != passages:
            return f"{indexed} passages indexed for full-text search of {passages}"
        if self.readonly:  # the check below is a write statement to SQLite
            return None
        try:
            self.db.execute("INSERT INTO passages_fts(passages_fts, rank) "
                            "VALUES('integrity-check', 1)")
        except sqlite3.DatabaseError as e:
            return str(e)
        return None

    def rebuild_fts(self) -> None:
        with self.transaction():
            self.db.execute("INSERT INTO passages_fts(passages_fts) VALUES('rebuild')")

    def orphan_count(self) -> int:
        """Passages whose document is gone."""
        return int(self.db.execute("SELECT count(*) FROM passages WHERE document_id NOT IN "
                                   "(SELECT id FROM documents)").fetchone()[0])

    def remove_orphans(self) -> int:
        """Delete orphaned passages and sentences (journalled); returns how many passages."""
        with self.transaction():
            self.db.execute("DELETE FROM sentences WHERE document_id NOT IN "
                            "(SELECT id FROM documents)")
            ids = [r[0] for r in self.db.execute(
                "SELECT id FROM passages WHERE document_id NOT IN (SELECT id FROM documents)")]
            self.db.execute("DELETE FROM passages WHERE document_id NOT IN "
                            "(SELECT id FROM documents)")
            self.db.table("vector_journal").insert_all(
                {"passage_id": i, "op": "delete"} for i in ids)
        return len(ids)

    def damaged_texts(self, *, batch: int = 2000) -> list[int]:
        """Passages whose text, or the text of whose sentences, is no longer the text they
        were indexed with: its SHA-256 is kept with each passage (``hash``), and a
        passage's text is its sentences joined by spaces. Read as bytes, so that text
        garbled into invalid UTF-8 is found too."""
        bad: list[int] = []
        last = -1
        while True:
            rows = self.db.execute(
                "SELECT id, CAST(text AS BLOB), CAST(hash AS BLOB) FROM passages "
                "WHERE id > ? ORDER BY id LIMIT ?", [last, batch]).fetchall()
            if not rows:
                return bad
            first, last = rows[0][0], rows[-1][0]
            joined: dict[int, list[bytes]] = {}
            for pid, text in self.db.execute(
                    "SELECT passage_id, CAST(text AS BLOB) FROM sentences WHERE passage_id "
                    "BETWEEN ? AND ? ORDER BY passage_id, seq", [first, last]):
                joined.setdefault(int(pid), []).append(bytes(text or b""))
            for pid, text, recorded in rows:
                recorded = bytes(recorded or b"")
                if hashlib.sha256(bytes(text or b"")).hexdigest().encode() != recorded or \
                        hashlib.sha256(b" ".join(joined.get(int(pid), []))).hexdigest() \
                        .encode() != recorded:
                    bad.append(int(pid))

    def damaged_vectors(self, *, batch: int = 2000) -> list[int]:
        """Passages whose stored vector no longer matches its :func:`vector_check` (a
        vector swapped with another passage's, or changed on disk)."""
        bad: list[int] = []
        last = -1
        while True:
            rows = self.db.execute(
                "SELECT id, CAST(hash AS BLOB), embedding, vec_check FROM passages "
                "WHERE id > ? ORDER BY id LIMIT ?", [last, batch]).fetchall()
            if not rows:
                return bad
            last = rows[-1][0]
            for pid, h, blob, check in rows:
                if check is not None and (blob is None or vector_check(
                        bytes(h or b"").decode("ascii", "replace"), bytes(blob)) != check):
                    bad.append(int(pid))

    def paths_of(self, passage_ids: Iterable[int]) -> dict[str, list[int]]:
        """The documents these passages belong to: path → passage ids."""
        out: dict[str, list[int]] = {}
        for part, marks in in_parts(int(i) for i in passage_ids):
            for pid, path in self.db.execute(
                    f"SELECT p.id, d.path FROM passages p JOIN documents d "
                    f"ON d.id = p.document_id WHERE p.id IN ({marks}) ORDER BY d.path, p.id",
                    part):
                out.setdefault(str(path), []).append(int(pid))
        return out

    def text_rows(self, passage_ids: Iterable[int]) -> list[tuple[int, str, str]]:
        """(id, text, hash) of these passages."""
        out: list[tuple[int, str, str]] = []
        for part, marks in in_parts(int(i) for i in passage_ids):
            out += [(int(r[0]), str(r[1]), str(r[2])) for r in self.db.execute(
                f"SELECT id, text, hash FROM passages WHERE id IN ({marks}) ORDER BY id",
                part)]
        return out

    def set_embeddings(self, ids: Sequence[int], vectors: np.ndarray) -> None:
        """Give these passages new vectors (and their checks), journalled for the HNSW
        file, in one transaction."""
        with self.transaction():
            for pid, vec in zip(ids, vectors, strict=True):
                blob = np.asarray(vec, dtype=np.float32).tobytes()
                self.db.execute("UPDATE passages SET embedding = ?, vec_check = "
                                "ragctl_vec_check(hash, ?) WHERE id = ?", [blob, blob, int(pid)])
            self.db.table("vector_journal").insert_all(
                {"passage_id": int(i), "op": "add"} for i in ids)

    def bad_vector_count(self, dim: int) -> int:
        """Stored vectors whose size is not ``dim`` float32 values."""
        return int(self.db.execute("SELECT count(*) FROM passages WHERE length(embedding) != ?",
                                   [dim * 4]).fetchone()[0])

    # ------------------------------------------------------------------ journal
    def journal(self) -> tuple[int, dict[int, str]]:
        """(last seq, the last op per passage id) of vector changes not yet saved."""
        rows = self.db.execute(
            "SELECT seq, passage_id, op FROM vector_journal ORDER BY seq").fetchall()
        last: dict[int, str] = {}
        for _, pid, op in rows:
            last[int(pid)] = op
        return (int(rows[-1][0]) if rows else 0), last

    def journal_seq(self) -> int:
        """The newest journal entry's seq (0 when empty)."""
        return int(self.db.execute("SELECT coalesce(max(seq), 0) FROM vector_journal")
                   .fetchone()[0])

    def clear_journal(self, upto: int) -> None:
        with self.transaction():
            self.db.execute("DELETE FROM vector_journal WHERE seq <= ?", [upto])

    # ------------------------------------------------------------------ runs
    def start_run(self) -> int:
        with self.transaction():
            return _pk(self.db.table("runs").insert(
                {"started": now(), "status": "running"}).last_pk)

    def finish_run(self, run_id: int, status: str, summary: dict[str, Any]) -> None:
        """Record how a run ended; on a full disk, at least its status (which needs no
        more room than the row has), and then the :class:`DiskFullError`."""
        try:
            with self.transaction():
                self.db.table("runs").update(run_id, {"finished": now(), "status": status,
                                                      "summary": json.dumps(summary)})
        except DiskFullError:
            with self.transaction():
                self.db.execute("UPDATE runs SET status = ?, finished = ? WHERE id = ?",
                                [status, now(), run_id])
            raise

    # ------------------------------------------------------------------ the log
    def log_answer(self, question: str, answer: str, abstained: bool,
                   result: dict[str, Any]) -> None:
        """Keep a question and its answer (with its sources) for ``ragctl logs``; on a
        full disk the answer is not kept, with a warning (it was given all the same)."""
        try:
            with self.transaction():
                self.db.table("log").insert({"asked": now(), "question": question,
                                             "answer": answer, "abstained": int(abstained),
                                             "result": json.dumps(result, default=str)})
        except DiskFullError as e:
            logger.warning("the answer is not kept in the log: %s", e)

    def logs(self, limit: int = 20, *, query: str | None = None) -> list[dict[str, Any]]:
        """The latest questions asked (containing ``query``), newest first."""
        where, args = ("question LIKE ? OR answer LIKE ?", [f"%{query}%", f"%{query}%"]) \
            if query else (None, [])
        rows = self.db.table("log").rows_where(where, args, order_by="id desc", limit=limit)
        return [{**r, "abstained": bool(r["abstained"]), "result": json.loads(r["result"])}
                for r in rows]

    def stale_runs(self) -> int:
        """Runs still marked "running" (their process was killed if no writer is on)."""
        return int(self.db.execute("SELECT count(*) FROM runs WHERE status = 'running'")
                   .fetchone()[0])

    def close_stale_runs(self) -> int:
        """Mark runs left "running" as interrupted (call under the writer's lock)."""
        with self.transaction():
            cur = self.db.execute("UPDATE runs SET status = 'interrupted', finished = ? "
                                  "WHERE status = 'running'", [now()])
        return int(cur.rowcount)

    def last_run(self) -> dict[str, Any] | None:
        rows = list(self.db.table("runs").rows_where(order_by="id desc", limit=1))
        if not rows:
            return None
        row = dict(rows[0])
        row["summary"] = json.loads(row["summary"]) if row["summary"] else None
        return row


def _read_only(path: Path) -> tuple[Any, str | None]:
    """A read-only connection, and why the newest committed changes cannot be read through
    it (None when they can).

    ``mode=ro`` reads the changes still in the WAL (``-wal``) too; for that SQLite needs
    the WAL's index (``-shm``), which it makes when it can write the folder and otherwise
    uses where it is. ``immutable`` ignores the WAL: used for a folder that cannot be
    written when the WAL is empty (the state is all in the database file), or, when
    ``mode=ro`` cannot read the WAL, as the last resort, and then that is said.
    """
    import sqlite3
    from urllib.parse import quote

    uri = f"file:{quote(str(path.resolve()))}"
    wal = Path(f"{path}-wal")
    try:
        pending = wal.stat().st_size > 0
    except OSError:
        pending = False
    writable = os.access(path.parent, os.W_OK)
    if writable or pending:
        conn = None
        try:
            conn = sqlite3.connect(f"{uri}?mode=ro", uri=True)
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
            return conn, None
        except sqlite3.OperationalError as e:
            if conn is not None:
                conn.close()
            if writable:
                raise
            logger.debug("%s cannot be read with its WAL: %s", path, e)
    conn = sqlite3.connect(f"{uri}?immutable=1", uri=True)
    if not pending:
        return conn, None
    return conn, (f"the newest changes to the index in {path.parent} cannot be read here: "
                  f"they are still in {wal.name}, which SQLite cannot read without "
                  f"{path.name}-shm, and it cannot make that in a read-only folder; shown is "
                  f"the index as it was before them (copy {path.name}-shm along, or open "
                  "the index once where it can be written)")


def _unpack(rows: list[Any], dim: int) -> tuple[np.ndarray, np.ndarray]:
    ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
    vecs = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), dim)
    return ids, vecs


def _pk(value: Any) -> int:
    if value is None:
        raise RuntimeError("insert returned no primary key")
    return int(value)


class DocumentWriter:
    """Adds one document's passages, sentences and vectors (see
    :meth:`Store.writing_document`)."""

    def __init__(self, store: Store, doc_id: int, old_ids: list[int]) -> None:
        self.store = store
        self.doc_id = doc_id
        self.old_ids = old_ids
        self.ids: list[int] = []
        self.n_sentences = 0

    def add_fields(self, fields: Sequence[DocField]) -> None:
        """The fields the document states about itself (:mod:`ragctl.index.fields`)."""
        self.store.db.table("fields").insert_all(
            {"document_id": self.doc_id, "name": f.name, "value": f.value, "place": f.place,
             "start_char": f.start_char, "end_char": f.end_char} for f in fields)

    def add(self, chunks: Sequence[Chunk], embeddings: np.ndarray) -> list[int]:
        """Append passages (in order); returns their ids."""
        assert len(chunks) == len(embeddings)
        db = self.store.db
        first = len(self.ids)
        last_id = db.execute("SELECT coalesce(max(id), 0) FROM passages").fetchone()[0]
        vecs = np.asarray(embeddings, dtype=np.float32)

        def row(k: int, c: Chunk) -> dict[str, Any]:
            h, blob = text_hash(c.text), vecs[k].tobytes()
            return {"document_id": self.doc_id, "seq": first + k, "place": c.place,
                    "start_char": c.start, "end_char": c.end, "text": c.text,
                    "n_words": c.n_words, "hash": h, "embedding": blob,
                    "vec_check": vector_check(h, blob)}

        db.table("passages").insert_all((row(k, c) for k, c in enumerate(chunks)),
                                        batch_size=200)
        ids = [r[0] for r in db.execute(
            "SELECT id FROM passages WHERE id > ? ORDER BY id", [last_id])]
        db.table("sentences").insert_all(({
            "passage_id": pid, "document_id": self.doc_id, "seq": k,
            "start_char": s.start, "end_char": s.end, "text": s.text, "raw": s.raw,
        } for pid, c in zip(ids, chunks, strict=True)
            for k, s in enumerate(c.sentences)), batch_size=500)
        db.table("vector_journal").insert_all({"passage_id": i, "op": "add"} for i in ids)
        self.ids.extend(ids)
        self.n_sentences += sum(len(c.sentences) for c in chunks)
        return ids


class VectorCache:
    """Embeddings a scoring model made before, by text hash, in a private SQLite file
    (``<cache>/vectors/<model>.db``, 0600): a passage is embedded by the relevance
    estimator (or a sentence by the context filter) once, not at every question. Holds
    vectors and hashes, never texts. Any error turns it off for the process: the cache
    only ever saves time."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._db: Any = None
        self.enabled = True

    def _conn(self) -> Any:
        if self._db is None:
            import sqlite3

            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            old = os.umask(0o077)
            try:
                db = sqlite3.connect(self.path, timeout=5, check_same_thread=False)
            finally:
                os.umask(old)
            db.execute("PRAGMA journal_mode = WAL")
            db.execute("PRAGMA synchronous = NORMAL")
            db.execute("CREATE TABLE IF NOT EXISTS v (hash TEXT PRIMARY KEY, vec BLOB NOT NULL)")
            self._db = db
        return self._db

    def get(self, texts: Sequence[str]) -> dict[str, np.ndarray]:
        """The cached vector of each text that has one."""
        if not self.enabled or not texts:
            return {}
        import sqlite3

        by_hash = {text_hash(t): t for t in texts}
        found: dict[str, np.ndarray] = {}
        try:
            db = self._conn()
            for part, marks in in_parts(by_hash):
                for h, blob in db.execute(f"SELECT hash, vec FROM v WHERE hash IN ({marks})",
                                          part):
                    found[by_hash[h]] = np.frombuffer(blob, dtype=np.float32)
        except (sqlite3.Error, OSError):
            self.enabled = False
            return {}
        return found

    def put(self, texts: Sequence[str], vectors: np.ndarray) -> None:
        if not self.enabled or not len(texts):
            return
        import sqlite3

        try:
            db = self._conn()
            with db:
                db.executemany("INSERT OR REPLACE INTO v (hash, vec) VALUES (?, ?)",
                               [(text_hash(t), np.asarray(v, dtype=np.float32).tobytes())
                                for t, v in zip(texts, vectors, strict=True)])
        except (sqlite3.Error, OSError):
            self.enabled = False

    def count(self) -> int:
        import sqlite3

        try:
            return int(self._conn().execute("SELECT count(*) FROM v").fetchone()[0])
        except (sqlite3.Error, OSError):
            return 0
