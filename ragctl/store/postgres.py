"""Stage 5b, shared: one index in PostgreSQL with pgvector, for a team's shared index or an
archive past what one SQLite file and one HNSW file hold comfortably.

The same data model and the same methods as :class:`ragctl.store.sqlite.Store`; a named index is
a schema (``ragctl_<name>``). Vectors are ``vector(dim)`` columns with an HNSW index
(cosine) kept by PostgreSQL itself, so there is no vector file and no journal to replay;
full text is a generated ``tsvector`` column with a GIN index. Hybrid search is one SQL
statement fusing the two rankings by reciprocal rank fusion.

Writers on several machines may index into one index at once: each file is written in
one transaction under an advisory lock on its path (so a file is never lost or
duplicated), and a run left "running" is closed only when its server connection is gone.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import numpy as np

from ragctl.config import Settings
from ragctl.errors import IndexNotFoundError, RagctlError
from ragctl.records import Chunk, DocField, Passage, Sentence
from ragctl.store.base import Claims, CollectionBase, DoctorReport, Ranking, Repairs
from ragctl.store.sqlite import SCHEMA_VERSION_KEY, DocumentRecord, now, text_hash

SCHEMES = ("postgresql", "postgres")
FTS_CONFIG = "english"


class StoreConnectionError(RagctlError):
    """The PostgreSQL server could not be reached, refused the login, or lacks pgvector."""


def is_url(value: str | None) -> bool:
    return bool(value) and urlsplit(str(value)).scheme in SCHEMES


def redact(url: str) -> str:
    """``url`` without its password (for messages, ``status`` and logs)."""
    parts = urlsplit(url)
    if parts.password is None:
        netloc = parts.netloc
    else:
        host = parts.netloc.rsplit("@", 1)[-1]
        netloc = f"{parts.username or ''}:***@{host}"
    query = re.sub(r"(?i)(password=)[^&]*", r"\1***", parts.query)
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def schema_name(index: str) -> str:
    """The schema of a named index: lower case, anything but letters, digits and ``_``
    as ``_`` (the index's own name is kept in its meta table)."""
    return "ragctl_" + re.sub(r"[^a-z0-9_]", "_", index.lower())


def schema_exists(conn: Any, index: str) -> bool:
    """Whether the database of ``conn`` holds the index ``index``."""
    return conn.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s",
                        [schema_name(index)]).fetchone() is not None


def _psycopg() -> Any:
    try:
        import psycopg
    except ImportError:  # pragma: no cover - a dependency of ragctl
        from ragctl.errors import MissingDependencyError

        raise MissingDependencyError("a PostgreSQL store needs psycopg: "
                                     "pip install 'psycopg[binary]' pgvector") from None
    return psycopg


def _first_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return text[0] if text else type(e).__name__


def connect(url: str) -> Any:
    """A connection in autocommit mode (transactions are explicit), or one clear error."""
    psycopg = _psycopg()
    try:
        conn = psycopg.connect(url, autocommit=True, connect_timeout=10,
                               application_name="ragctl")
    except psycopg.Error as e:
        why = _first_line(e)
        if "password" in why.lower():
            why = why.replace(url, redact(url))
        raise StoreConnectionError(f"cannot connect to {redact(url)}: {why}") from None
    try:
        has = conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone()
        if has is None:
            # Two first writers into a fresh database would both try to create it (and
            # one would fail on pg_extension's unique name): one at a time.
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(hashtext('ragctl:create-vector'))")
                conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    except psycopg.Error as e:
        conn.close()
        why = _first_line(e)
        if "not available" in why or "could not open extension" in why:
            raise StoreConnectionError(
                f"the PostgreSQL server at {redact(url)} has no pgvector extension; install "
                "pgvector on the server (https://github.com/pgvector/pgvector)") from None
        raise StoreConnectionError(
            f"the database at {redact(url)} has no pgvector extension and this user cannot "
            f"add it ({why}); ask its administrator to run: CREATE EXTENSION vector") from None
    from pgvector.psycopg import register_vector

    register_vector(conn)
    return conn


# ----------------------------------------------------------------------- migrations

def _m001_initial(conn: Any) -> None:
    conn.execute(f"""
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);
        CREATE TABLE roots (path TEXT PRIMARY KEY, added TEXT);
        CREATE TABLE documents (
            id BIGSERIAL PRIMARY KEY,
            path TEXT NOT NULL UNIQUE,
            format TEXT NOT NULL,
            title TEXT,
            size BIGINT NOT NULL,
            mtime_ns BIGINT NOT NULL,
            sha256 TEXT NOT NULL,
            n_passages INTEGER NOT NULL,
            n_sentences INTEGER NOT NULL,
            indexed_at TEXT NOT NULL
        );
        CREATE INDEX documents_sha256 ON documents(sha256);
        CREATE TABLE passages (
            id BIGSERIAL PRIMARY KEY,
            document_id BIGINT NOT NULL REFERENCES documents(id),
            seq INTEGER NOT NULL,
            place TEXT NOT NULL,
            start_char INTEGER NOT NULL,
            end_char INTEGER NOT NULL,
            text TEXT NOT NULL,
            n_words INTEGER NOT NULL,
            hash TEXT NOT NULL,
            embedding vector NOT NULL,
            tsv tsvector GENERATED ALWAYS AS (to_tsvector('{FTS_CONFIG}', text)) STORED
        );
        CREATE INDEX passages_document ON passages(document_id);
        CREATE INDEX passages_hash ON passages(hash);
        CREATE INDEX passages_tsv ON passages USING gin(tsv);
        CREATE TABLE sentences (
            id BIGSERIAL PRIMARY KEY,
            passage_id BIGINT NOT NULL REFERENCES passages(id),
            document_id BIGINT NOT NULL REFERENCES documents(id),
            seq INTEGER NOT NULL,
            start_char INTEGER NOT NULL,
            end_char INTEGER NOT NULL,
            text TEXT NOT NULL,
            raw TEXT
        );
        CREATE INDEX sentences_passage ON sentences(passage_id);
        CREATE INDEX sentences_document ON sentences(document_id);
        CREATE TABLE runs (
            id BIGSERIAL PRIMARY KEY,
            started TEXT NOT NULL,
            finished TEXT,
            status TEXT NOT NULL,
            summary TEXT,
            backend_pid INTEGER,
            backend_start TIMESTAMPTZ
        );
        CREATE TABLE log (id BIGSERIAL PRIMARY KEY, asked TEXT NOT NULL,
            question TEXT NOT NULL, answer TEXT NOT NULL, abstained BOOLEAN NOT NULL,
            result TEXT NOT NULL);
        CREATE TABLE skips (path TEXT PRIMARY KEY, size BIGINT NOT NULL,
            mtime_ns BIGINT NOT NULL, reason TEXT NOT NULL, readers TEXT NOT NULL,
            partial INTEGER NOT NULL DEFAULT 0);
        CREATE TABLE reembed_staging (passage_id BIGINT PRIMARY KEY, embedding vector NOT NULL);
    """)


def _m002_tsv_place(conn: Any) -> None:
    """Full-text search over a passage's place (its section's headings, a mail's subject)
    as well as its text, as in the SQLite store; a place's numbers (pages, section
    numbers) are left out, as the SQLite store looks for numbers in the text alone."""
    conn.execute("DROP INDEX IF EXISTS passages_tsv")
    conn.execute("ALTER TABLE passages DROP COLUMN IF EXISTS tsv")
    conn.execute(f"ALTER TABLE passages ADD COLUMN tsv tsvector GENERATED ALWAYS AS "
                 f"(to_tsvector('{FTS_CONFIG}', regexp_replace(place, '[0-9]+', ' ', 'g') "
                 f"|| ' ' || text)) STORED")
    conn.execute("CREATE INDEX passages_tsv ON passages USING gin(tsv)")


def _m003_fields(conn: Any) -> None:
    """A document's own fields, as in the SQLite store (its migration 7)."""
    conn.execute("CREATE TABLE fields (id BIGSERIAL PRIMARY KEY, "
                 "document_id BIGINT NOT NULL REFERENCES documents(id), name TEXT NOT NULL, "
                 "value TEXT NOT NULL, place TEXT NOT NULL, start_char INTEGER NOT NULL, "
                 "end_char INTEGER NOT NULL)")
    conn.execute("CREATE INDEX fields_document ON fields(document_id)")


MIGRATIONS: list[Callable[[Any], None]] = [_m001_initial, _m002_tsv_place, _m003_fields]


class PgStore:
    """One index in a PostgreSQL database (its schema), with the methods of
    :class:`ragctl.store.sqlite.Store`. ``create`` makes the schema when it is missing."""

    readonly = False
    unread_changes: str | None = None  # every committed change is read

    def __init__(self, url: str, index: str, *, create: bool = False) -> None:
        self.url = url
        self.index = index
        self.schema = schema_name(index)
        self.conn = connect(url)
        psycopg = _psycopg()
        try:
            exists = schema_exists(self.conn, index)
            self.created = not exists  # by this open (``create``)
            if not exists and not create:
                known = [self.conn.execute(
                    f'SELECT coalesce((SELECT value FROM "{n}".meta WHERE key = '
                    "'index_name'), %s)", [n.removeprefix("ragctl_")]).fetchone()[0]
                    for (n,) in self.conn.execute(
                        "SELECT nspname FROM pg_namespace WHERE nspname LIKE 'ragctl\\_%' "
                        "ORDER BY nspname").fetchall()]
                hint = f"; indexes there: {', '.join(known)}" if known else ""
                raise IndexNotFoundError(
                    f"no index named {index!r} in {redact(url)} (create it with: ragctl "
                    f"index PATH --index {index} --store URL, or copy a local one with: "
                    f"ragctl copy --to URL){hint}")
            self.schema_version = self._migrate()
        except psycopg.Error as e:
            self.conn.close()
            raise StoreConnectionError(f"cannot open index {index!r} in {redact(url)}: "
                                       f"{_first_line(e)}") from None
        except BaseException:
            self.conn.close()
            raise
        self.conn.execute(f'SET search_path TO "{self.schema}", public')
        self._ef_search = 0
        # (when, passages, mean words per passage, document frequency per lexeme)
        self._stats: tuple[float, int, float, dict[str, int]] | None = None

    @property
    def path(self) -> str:
        return redact(self.url)

    def _migrate(self) -> int:
        s = self.schema
        with self.conn.transaction():
            # one migrating process at a time per index (another waits, then sees it done)
            self.conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 7))", [s])
            self.conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{s}"')
            self.conn.execute(f'SET LOCAL search_path TO "{s}", public')
            self.conn.execute("CREATE TABLE IF NOT EXISTS _ragctl_migrations "
                              "(number INTEGER PRIMARY KEY, name TEXT, applied TEXT)")
            done = {r[0] for r in self.conn.execute(
                "SELECT number FROM _ragctl_migrations").fetchall()}
            if done and max(done) > len(MIGRATIONS):
                raise RagctlError(
                    f"the index {self.index!r} in {redact(self.url)} was made by a newer "
                    f"ragctl (schema {max(done)}; this one knows up to {len(MIGRATIONS)}); "
                    "nothing was changed: upgrade ragctl to use it")
            for number, step in enumerate(MIGRATIONS, start=1):
                if number in done:
                    continue
                step(self.conn)
                self.conn.execute("INSERT INTO _ragctl_migrations VALUES (%s, %s, %s)",
                                  [number, step.__name__, now()])
                self.conn.execute(
                    "INSERT INTO meta VALUES (%s, %s) ON CONFLICT (key) DO UPDATE "
                    "SET value = excluded.value", [SCHEMA_VERSION_KEY, str(number)])
            self.conn.execute("INSERT INTO meta VALUES ('index_name', %s) "
                              "ON CONFLICT (key) DO NOTHING", [self.index])
        return len(MIGRATIONS)

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> PgStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        with self.conn.transaction():
            yield

    def _rows(self, sql: str, args: Sequence[Any] | dict[str, Any] = ()) -> list[Any]:
        return list(self.conn.execute(sql, args).fetchall())

    def _dicts(self, sql: str, args: Sequence[Any] = ()) -> list[dict[str, Any]]:
        cur = self.conn.execute(sql, args)
        names = [d.name for d in cur.description]
        return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]

    # ------------------------------------------------------------------ meta
    def get_meta(self, key: str, default: str | None = None) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key = %s", [key]).fetchone()
        return row[0] if row else default

    def set_meta(self, **values: Any) -> None:
        with self.conn.transaction():
            for k, v in values.items():
                self.conn.execute(
                    "INSERT INTO meta VALUES (%s, %s) ON CONFLICT (key) DO UPDATE "
                    "SET value = excluded.value", [k, v if isinstance(v, str) else json.dumps(v)])
            if "dim" in values:
                self._fix_dimension(int(values["dim"]))

    def _fix_dimension(self, dim: int) -> None:
        """Give the vector column its dimension and an HNSW index (cosine), once the
        embedding model is known; a no-op when it already has them. Called inside a
        transaction; one writer at a time (CREATE INDEX IF NOT EXISTS is not race-safe)."""
        self.conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 7))",
                          [self.schema])
        typ = self.conn.execute(
            "SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = "
            "'passages'::regclass AND attname = 'embedding'").fetchone()[0]
        if typ != f"vector({dim})":
            self.conn.execute("DROP INDEX IF EXISTS passages_embedding")
            self.conn.execute(f"ALTER TABLE passages ALTER COLUMN embedding TYPE vector({dim})")
        m = int(self.get_meta("hnsw_m") or 16)
        ef = int(self.get_meta("hnsw_ef_construction") or 64)
        self.conn.execute(
            "CREATE INDEX IF NOT EXISTS passages_embedding ON passages USING hnsw "
            f"(embedding vector_cosine_ops) WITH (m = {m}, ef_construction = {ef})")

    def meta(self) -> dict[str, str]:
        return {k: v for k, v in self._rows("SELECT key, value FROM meta")}

    # ------------------------------------------------------------------ roots
    def add_root(self, path: str) -> None:
        self.conn.execute("INSERT INTO roots VALUES (%s, %s) ON CONFLICT DO NOTHING",
                          [path, now()])

    def roots(self) -> list[str]:
        return [r[0] for r in self._rows("SELECT path FROM roots ORDER BY path")]

    # ------------------------------------------------------------------ documents
    _DOC = ("SELECT id, path, format, title, size, mtime_ns, sha256, n_passages, "
            "n_sentences, indexed_at FROM documents")

    def document(self, path: str) -> DocumentRecord | None:
        rows = self._rows(self._DOC + " WHERE path = %s", [path])
        return DocumentRecord(*rows[0]) if rows else None

    def documents(self, under: str | None = None) -> list[DocumentRecord]:
        if under is None:
            return [DocumentRecord(*r) for r in self._rows(self._DOC + " ORDER BY path")]
        prefix = under.rstrip("/") + "/"
        return [DocumentRecord(*r) for r in self._rows(
            self._DOC + " WHERE path = %s OR left(path, %s) = %s ORDER BY path",
            [under, len(prefix), prefix])]

    def documents_by_sha(self, sha: str) -> list[DocumentRecord]:
        return [DocumentRecord(*r) for r in self._rows(self._DOC + " WHERE sha256 = %s", [sha])]

    def touch_document(self, doc_id: int, *, size: int, mtime_ns: int) -> None:
        self.conn.execute("UPDATE documents SET size = %s, mtime_ns = %s WHERE id = %s",
                          [size, mtime_ns, doc_id])

    def move_document(self, doc_id: int, *, path: str, size: int, mtime_ns: int) -> None:
        """A renamed file: keep its passages and vectors, change its path."""
        with self.conn.transaction():
            self._lock_path(path)
            self.conn.execute("DELETE FROM sentences WHERE document_id IN "
                              "(SELECT id FROM documents WHERE path = %s AND id != %s)",
                              [path, doc_id])  # another writer put the file there meanwhile
            self.conn.execute("DELETE FROM fields WHERE document_id IN "
                              "(SELECT id FROM documents WHERE path = %s AND id != %s)",
                              [path, doc_id])
            self.conn.execute("DELETE FROM passages WHERE document_id IN "
                              "(SELECT id FROM documents WHERE path = %s AND id != %s)",
                              [path, doc_id])
            self.conn.execute("DELETE FROM documents WHERE path = %s AND id != %s",
                              [path, doc_id])
            self.conn.execute("UPDATE documents SET path = %s, size = %s, mtime_ns = %s, "
                              "indexed_at = %s WHERE id = %s",
                              [path, size, mtime_ns, now(), doc_id])

    def _lock_path(self, path: str) -> None:
        """Serialize writers of one file (across processes and machines) until commit."""
        self.conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 1))",
                          [f"{self.schema}/{path}"])

    def _delete_document_rows(self, doc_id: int) -> list[int]:
        ids = [r[0] for r in self._rows("SELECT id FROM passages WHERE document_id = %s",
                                        [doc_id])]
        self.conn.execute("DELETE FROM sentences WHERE document_id = %s", [doc_id])
        self.conn.execute("DELETE FROM fields WHERE document_id = %s", [doc_id])
        self.conn.execute("DELETE FROM passages WHERE document_id = %s", [doc_id])
        self.conn.execute("DELETE FROM documents WHERE id = %s", [doc_id])
        return ids

    def delete_document(self, doc_id: int) -> list[int]:
        with self.conn.transaction():
            return self._delete_document_rows(doc_id)

    def replace_document(self, *, path: str, format: str, title: str, size: int,
                         mtime_ns: int, sha256: str, chunks: Sequence[Chunk],
                         embeddings: np.ndarray, fields: Sequence[DocField] = ()
                         ) -> tuple[list[int], list[int]]:
        with self.writing_document(path=path, format=format, title=title, size=size,
                                   mtime_ns=mtime_ns, sha256=sha256) as writer:
            writer.add(chunks, embeddings)
            writer.add_fields(fields)
        return writer.ids, writer.old_ids

    @contextmanager
    def writing_document(self, *, path: str, format: str, title: str, size: int,
                         mtime_ns: int, sha256: str) -> Iterator[PgDocumentWriter]:
        with self.conn.transaction():
            self._lock_path(path)
            old = self.document(path)
            old_ids = self._delete_document_rows(old.id) if old is not None else []
            doc_id = self.conn.execute(
                "INSERT INTO documents (path, format, title, size, mtime_ns, sha256, "
                "n_passages, n_sentences, indexed_at) VALUES (%s, %s, %s, %s, %s, %s, 0, 0, %s) "
                "RETURNING id", [path, format, _text(title), size, mtime_ns, sha256, now()]
            ).fetchone()[0]
            writer = PgDocumentWriter(self, int(doc_id), old_ids)
            yield writer
            self.conn.execute("UPDATE documents SET n_passages = %s, n_sentences = %s "
                              "WHERE id = %s", [len(writer.ids), writer.n_sentences, doc_id])

    # ------------------------------------------------------------------ skipped files
    def skips(self) -> dict[str, dict[str, Any]]:
        return {r["path"]: r for r in self._dicts(
            "SELECT path, size, mtime_ns, reason, readers, partial FROM skips")}

    def record_skip(self, path: str, *, size: int, mtime_ns: int, reason: str,
                    readers: str, partial: bool = False) -> None:
        self.conn.execute(
            "INSERT INTO skips VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (path) DO UPDATE "
            "SET size = excluded.size, mtime_ns = excluded.mtime_ns, reason = excluded.reason, "
            "readers = excluded.readers, partial = excluded.partial",
            [path, size, mtime_ns, reason, readers, int(partial)])

    def forget_skips(self, paths: Iterable[str]) -> None:
        paths = list(paths)
        if paths:
            self.conn.execute("DELETE FROM skips WHERE path = ANY(%s)", [paths])

    # ------------------------------------------------------------------ passages
    TABLES = ("documents", "passages", "sentences", "fields", "roots", "runs", "log", "skips",
              "meta")

    def count(self, table: str) -> int:
        if table not in self.TABLES:
            raise ValueError(f"unknown table {table!r}")
        return int(self.conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])

    def passage_ids(self) -> list[int]:
        return [r[0] for r in self._rows("SELECT id FROM passages ORDER BY id")]

    def embeddings_by_hash(self, hashes: Iterable[str]) -> dict[str, bytes]:
        found: dict[str, bytes] = {}
        for h, vec in self._rows("SELECT DISTINCT ON (hash) hash, embedding FROM passages "
                                 "WHERE hash = ANY(%s)", [list(set(hashes))]):
            found[h] = _vec(vec).tobytes()
        return found

    def vectors(self, ids: Sequence[int] | None = None, *, dim: int,
                batch: int = 5000) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        if ids is None:
            last = -1
            while True:
                rows = self._rows("SELECT id, embedding FROM passages WHERE id > %s "
                                  "ORDER BY id LIMIT %s", [last, batch])
                if not rows:
                    return
                last = rows[-1][0]
                yield _unpack(rows, dim)
        else:
            want = [int(i) for i in ids]
            for i in range(0, len(want), batch):
                rows = self._rows("SELECT id, embedding FROM passages WHERE id = ANY(%s)",
                                  [want[i:i + batch]])
                if rows:
                    yield _unpack(rows, dim)

    def passages(self, ids: Sequence[int]) -> dict[int, Passage]:
        return {r["id"]: Passage(**r) for r in self._dicts(
            "SELECT p.id, p.document_id, d.path, d.title, p.place, p.start_char, p.end_char, "
            "p.text FROM passages p JOIN documents d ON d.id = p.document_id "
            "WHERE p.id = ANY(%s)", [[int(x) for x in ids]])}

    def sentences_of(self, passage_ids: Sequence[int]) -> dict[int, list[Sentence]]:
        out: dict[int, list[Sentence]] = {int(p): [] for p in passage_ids}
        for r in self._dicts(
                "SELECT s.id, s.passage_id, s.seq, d.path, d.title, p.place, s.start_char, "
                "s.end_char, s.text, s.raw FROM sentences s "
                "JOIN passages p ON p.id = s.passage_id JOIN documents d ON d.id = s.document_id "
                "WHERE s.passage_id = ANY(%s) ORDER BY s.passage_id, s.seq", [list(out)]):
            out[r["passage_id"]].append(Sentence(**r))
        return out

    def sentences_like(self, path: str, patterns: Sequence[str], limit: int = 50
                       ) -> list[Sentence]:
        if not patterns:
            return []
        where = " OR ".join("s.text ILIKE %s" for _ in patterns)
        return [Sentence(**r) for r in self._dicts(
            "SELECT s.id, s.passage_id, s.seq, d.path, d.title, p.place, s.start_char, "
            "s.end_char, s.text, s.raw FROM documents d "
            "JOIN passages p ON p.document_id = d.id JOIN sentences s ON s.passage_id = p.id "
            f"WHERE d.path = %s AND ({where}) ORDER BY s.passage_id, s.seq LIMIT %s",
            [path, *patterns, int(limit)])]

    def document_fields(self, path: str) -> list[DocField]:
        return [DocField(**r) for r in self._dicts(
            "SELECT f.name, f.value, f.place, f.start_char, f.end_char FROM fields f "
            "JOIN documents d ON d.id = f.document_id WHERE d.path = %s ORDER BY f.id",
            [path])]

    def sentence_at(self, path: str, place: str, start_char: int) -> Sentence | None:
        rows = self._dicts(
            "SELECT s.id, s.passage_id, s.seq, d.path, d.title, p.place, s.start_char, "
            "s.end_char, s.text, s.raw FROM documents d "
            "JOIN passages p ON p.document_id = d.id JOIN sentences s ON s.passage_id = p.id "
            "WHERE d.path = %s AND p.place = %s AND s.start_char <= %s AND s.end_char > %s "
            "ORDER BY s.passage_id, s.seq LIMIT 1", [path, place, start_char, start_char])
        return Sentence(**rows[0]) if rows else None

    def sentence_rows(self) -> list[tuple[int, int, str]]:
        return [(int(a), int(b), str(c)) for a, b, c in
                self._rows("SELECT id, passage_id, text FROM sentences")]

    def format_counts(self) -> dict[str, int]:
        return {r[0]: int(r[1]) for r in self._rows(
            "SELECT format, count(*) FROM documents GROUP BY format ORDER BY 2 DESC")}

    @staticmethod
    def tsquery(query: str) -> str | None:
        """The terms of ``query`` OR-ed for ``to_tsquery`` (None when it has none)."""
        terms = [t for t in re.findall(r"\w+", query.lower()) if len(t) > 1 or t.isdigit()]
        return " | ".join(dict.fromkeys(terms)) or None

    # BM25 (k1 = 1.2, b = 0.75, as SQLite's FTS5) over the best ``ts_rank`` candidates:
    # ts_rank alone has no inverse document frequency and lost 1.5 points of recall@5
    # against BM25 on SQuAD (ts_rank_cd lost 17); document frequencies come from the GIN
    # index and are kept for STATS_SECONDS.
    BM25_CANDIDATES = 100
    STATS_SECONDS = 300.0
    _BM25 = f"""
        WITH tq AS (SELECT to_tsquery('{FTS_CONFIG}', %(t)s) AS q),
        terms AS (SELECT * FROM unnest(%(lex)s::text[], %(idf)s::float8[]) AS t(lexeme, idf)),
        cand AS (
            SELECT id, tsv, n_words FROM passages, tq WHERE %(t)s <> '' AND tsv @@ tq.q
            ORDER BY ts_rank(tsv, tq.q, 1) DESC, id LIMIT %(cand)s)
        SELECT c.id, sum(t.idf * cardinality(u.positions) * 2.2 / (cardinality(u.positions)
               + 1.2 * (0.25 + 0.75 * c.n_words / %(avgdl)s))) AS score
        FROM cand c CROSS JOIN LATERAL unnest(c.tsv) u JOIN terms t ON t.lexeme = u.lexeme
        GROUP BY c.id"""

    def _bm25_args(self, query: str, limit: int) -> dict[str, Any]:
        """The parameters of :data:`_BM25` for ``query``: its lexemes with their inverse
        document frequencies, the corpus's mean passage length."""
        import time

        tsq = self.tsquery(query) or ""
        stats = self._stats
        if stats is None or time.monotonic() - stats[0] > self.STATS_SECONDS:
            n, avgdl = self.conn.execute(
                "SELECT count(*), coalesce(avg(n_words), 1) FROM passages").fetchone()
            stats = (time.monotonic(), int(n), max(float(avgdl), 1.0), {})
            self._stats = stats
        _, n, avgdl, df = stats
        lexemes = [str(x) for x in self.conn.execute(
            f"SELECT coalesce(array_agg(lexeme), '{{}}') FROM "
            f"unnest(to_tsvector('{FTS_CONFIG}', %s))", [query]).fetchone()[0]] if tsq else []
        missing = [x for x in lexemes if x not in df]
        if missing:
            for lexeme, count in self.conn.execute(
                    "SELECT l, (SELECT count(*) FROM passages WHERE tsv @@ l::tsquery) "
                    "FROM unnest(%s::text[]) l", [missing]).fetchall():
                df[lexeme] = int(count)
        idf = [float(np.log(1 + (n - df[x] + 0.5) / (df[x] + 0.5))) for x in lexemes]
        return {"t": tsq, "lex": lexemes, "idf": idf, "avgdl": avgdl,
                "cand": max(self.BM25_CANDIDATES, 2 * limit), "k": limit}

    def fts_search(self, query: str, limit: int) -> list[tuple[int, float]]:
        """Full-text search ranked by BM25: (passage id, score), best first."""
        args = self._bm25_args(query, limit)
        if not args["t"]:
            return []
        return [(int(a), float(b)) for a, b in self._rows(
            self._BM25 + " ORDER BY score DESC, c.id LIMIT %(k)s", args)]

    def mentioning(self, words: Sequence[str], limit: int) -> list[tuple[int, str]]:
        """Passages whose place or text holds every one of ``words``, best first:
        (passage id, its document's path)."""
        terms = [t for w in words for t in re.findall(r"\w+", w.lower())]
        if not terms:
            return []
        tsq = " & ".join(dict.fromkeys(terms))
        return [(int(a), str(b)) for a, b in self._rows(
            f"SELECT p.id, d.path FROM passages p JOIN documents d ON d.id = p.document_id, "
            f"to_tsquery('{FTS_CONFIG}', %s) q WHERE p.tsv @@ q "
            f"ORDER BY ts_rank(p.tsv, q, 1) DESC, p.id LIMIT %s", [tsq, int(limit)])]

    def _set_ef(self, ef: int) -> None:
        if ef != self._ef_search:
            self.conn.execute(f"SET hnsw.ef_search = {int(ef)}")
            self._ef_search = ef

    def vector_search(self, qvec: np.ndarray, k: int, *, ef: int = 100) -> list[int]:
        """The ``k`` nearest passages by cosine distance, through the HNSW index."""
        self._set_ef(max(ef, k))
        return [int(r[0]) for r in self._rows(
            "SELECT id FROM passages ORDER BY embedding <=> %s LIMIT %s",
            [np.asarray(qvec, dtype=np.float32), k])]

    def hybrid_search(self, qvec: np.ndarray, query: str, depth: int, *, rrf_k: int = 60,
                      ef: int = 100) -> list[tuple[int, float, int | None, int | None]]:
        """(id, fused score, vector rank, full-text rank), best first: the ``depth``
        nearest passages and the ``depth`` best full-text matches fused by reciprocal
        rank fusion, in one statement."""
        self._set_ef(max(ef, depth))
        args = self._bm25_args(query, depth)
        rows = self._rows(f"""
            WITH v AS (
                SELECT id, row_number() OVER (ORDER BY d, id) AS r FROM (
                    SELECT id, embedding <=> %(q)s AS d FROM passages
                    ORDER BY embedding <=> %(q)s LIMIT %(k)s) x),
            bm AS ({self._BM25}),
            b AS (
                SELECT id, row_number() OVER (ORDER BY score DESC, id) AS r FROM (
                    SELECT id, score FROM bm ORDER BY score DESC, id LIMIT %(k)s) y)
            SELECT coalesce(v.id, b.id),
                   coalesce(1.0 / (%(rrf)s + v.r), 0) + coalesce(1.0 / (%(rrf)s + b.r), 0) AS s,
                   v.r, b.r
            FROM v FULL OUTER JOIN b ON v.id = b.id
            ORDER BY s DESC, 1""",
                          {**args, "q": np.asarray(qvec, dtype=np.float32), "rrf": rrf_k})
        return [(int(a), float(s), None if v is None else int(v), None if b is None else int(b))
                for a, s, v, b in rows]

    # ------------------------------------------------------------------ re-embedding
    def passage_titles(self, after: int, limit: int) -> list[tuple[int, str, str]]:
        return [(int(a), str(b or ""), str(c)) for a, b, c in self._rows(
            "SELECT p.id, d.title, p.text FROM passages p JOIN documents d "
            "ON d.id = p.document_id WHERE p.id > %s ORDER BY p.id LIMIT %s", [after, limit])]

    def passage_texts(self, after: int, limit: int) -> list[tuple[int, str]]:
        return [(int(a), str(b)) for a, b in self._rows(
            "SELECT id, text FROM passages WHERE id > %s ORDER BY id LIMIT %s", [after, limit])]

    def start_staging(self) -> None:
        self.conn.execute("DELETE FROM reembed_staging")

    def stage_embeddings(self, ids: Sequence[int], vectors: np.ndarray) -> None:
        with self.conn.transaction(), self.conn.cursor() as cur, \
                _copy(cur, "reembed_staging", ("passage_id", "embedding")) as copy:
            for i, v in zip(ids, vectors, strict=True):
                copy.write_row([int(i), np.asarray(v, dtype=np.float32)])

    def swap_in_staged(self, **meta: Any) -> None:
        with self.conn.transaction():
            self.conn.execute("DROP INDEX IF EXISTS passages_embedding")
            self.conn.execute("ALTER TABLE passages ALTER COLUMN embedding TYPE vector")
            self.conn.execute("UPDATE passages SET embedding = s.embedding FROM "
                              "reembed_staging s WHERE s.passage_id = passages.id")
            self.conn.execute("DELETE FROM reembed_staging")
            self.set_meta(**meta)
            if "dim" not in meta:
                self._fix_dimension(int(self.get_meta("dim") or 0))

    # ------------------------------------------------------------------ checks
    def data_version(self) -> int:
        """Changes whenever a transaction that wrote to the server commits."""
        return int(self.conn.execute(
            "SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint").fetchone()[0])

    def integrity(self, *, quick: bool = False) -> str:
        """PostgreSQL keeps its own integrity; this checks the schema is whole."""
        missing = [t for t in self.TABLES if self.conn.execute(
            "SELECT to_regclass(%s)", [f'"{self.schema}".{t}']).fetchone()[0] is None]
        return f"tables missing: {', '.join(missing)}" if missing else "ok"

    def fts_problem(self) -> str | None:
        return None  # a generated column: it cannot disagree with the text

    def rebuild_fts(self) -> None:
        self.conn.execute("REINDEX INDEX passages_tsv")

    def orphan_count(self) -> int:
        return 0  # foreign keys: a passage cannot outlive its document

    def remove_orphans(self) -> int:
        return 0

    def bad_vector_count(self, dim: int) -> int:
        return int(self.conn.execute("SELECT count(*) FROM passages WHERE vector_dims("
                                     "embedding) != %s", [dim]).fetchone()[0])

    def has_vector_index(self) -> bool:
        return self.conn.execute("SELECT to_regclass(%s)", [f'"{self.schema}".passages_embedding']
                                 ).fetchone()[0] is not None

    def bytes_on_disk(self) -> dict[str, int]:
        return {t: int(self.conn.execute("SELECT pg_total_relation_size(%s)",
                                         [f'"{self.schema}".{t}']).fetchone()[0])
                for t in ("documents", "passages", "sentences")}

    # ------------------------------------------------------------------ journal (none)
    def journal(self) -> tuple[int, dict[int, str]]:
        return 0, {}

    def journal_seq(self) -> int:
        return 0

    def clear_journal(self, upto: int) -> None:
        return None

    # ------------------------------------------------------------------ runs
    def start_run(self) -> int:
        return int(self.conn.execute(
            "INSERT INTO runs (started, status, backend_pid, backend_start) SELECT %s, "
            "'running', pid, backend_start FROM pg_stat_activity WHERE pid = pg_backend_pid() "
            "RETURNING id", [now()]).fetchone()[0])

    def finish_run(self, run_id: int, status: str, summary: dict[str, Any]) -> None:
        self.conn.execute("UPDATE runs SET finished = %s, status = %s, summary = %s "
                          "WHERE id = %s", [now(), status, json.dumps(summary), run_id])

    _ALIVE = ("EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.pid = runs.backend_pid "
              "AND a.backend_start = runs.backend_start)")

    def stale_runs(self) -> int:
        """Runs marked "running" whose connection is gone (their process was killed)."""
        return int(self.conn.execute(
            f"SELECT count(*) FROM runs WHERE status = 'running' AND NOT {self._ALIVE}"
        ).fetchone()[0])

    def active_runs(self) -> int:
        """Runs of other processes writing now."""
        return int(self.conn.execute(
            f"SELECT count(*) FROM runs WHERE status = 'running' AND {self._ALIVE} "
            "AND backend_pid != pg_backend_pid()").fetchone()[0])

    def close_stale_runs(self) -> int:
        cur = self.conn.execute(f"UPDATE runs SET status = 'interrupted', finished = %s "
                                f"WHERE status = 'running' AND NOT {self._ALIVE}", [now()])
        return int(cur.rowcount)

    def last_run(self) -> dict[str, Any] | None:
        rows = self._dicts("SELECT id, started, finished, status, summary FROM runs "
                           "ORDER BY id DESC LIMIT 1")
        if not rows:
            return None
        row = rows[0]
        row["summary"] = json.loads(row["summary"]) if row["summary"] else None
        return row

    # ------------------------------------------------------------------ the log
    def log_answer(self, question: str, answer: str, abstained: bool,
                   result: dict[str, Any]) -> None:
        self.conn.execute("INSERT INTO log (asked, question, answer, abstained, result) "
                          "VALUES (%s, %s, %s, %s, %s)",
                          [now(), question, answer, abstained,
                           json.dumps(result, default=str)])

    def logs(self, limit: int = 20, *, query: str | None = None) -> list[dict[str, Any]]:
        sql = "SELECT id, asked, question, answer, abstained, result FROM log"
        args: list[Any] = []
        if query:
            sql += " WHERE question ILIKE %s OR answer ILIKE %s"
            args = [f"%{query}%", f"%{query}%"]
        rows = self._dicts(sql + " ORDER BY id DESC LIMIT %s", [*args, limit])
        return [{**r, "abstained": bool(r["abstained"]), "result": json.loads(r["result"])}
                for r in rows]


_COPIED: dict[str, tuple[str, ...]] = {
    "roots": ("path", "added"),
    "documents": ("id", "path", "format", "title", "size", "mtime_ns", "sha256",
                  "n_passages", "n_sentences", "indexed_at"),
    "passages": ("id", "document_id", "seq", "place", "start_char", "end_char", "text",
                 "n_words", "hash", "embedding"),
    "sentences": ("id", "passage_id", "document_id", "seq", "start_char", "end_char", "text",
                  "raw"),
    "fields": ("id", "document_id", "name", "value", "place", "start_char", "end_char"),
    "skips": ("path", "size", "mtime_ns", "reason", "readers", "partial"),
    "log": ("id", "asked", "question", "answer", "abstained", "result"),
}
_ADDED_LATER = {"fields"}  # tables a read-only local index opened unmigrated may lack
# column types for binary COPY (text COPY formats each vector as decimal text: 35x slower)
_TYPES = {"id": "int8", "document_id": "int8", "passage_id": "int8", "seq": "int4",
          "place": "text", "start_char": "int4", "end_char": "int4", "text": "text",
          "n_words": "int4", "hash": "text", "embedding": "vector", "raw": "text",
          "path": "text", "added": "text", "format": "text", "title": "text", "size": "int8",
          "mtime_ns": "int8", "sha256": "text", "n_passages": "int4", "n_sentences": "int4",
          "indexed_at": "text", "reason": "text", "readers": "text", "partial": "int4",
          "asked": "text", "question": "text", "answer": "text", "abstained": "bool",
          "result": "text", "name": "text", "value": "text"}


@contextmanager
def _copy(cur: Any, table: str, columns: Sequence[str]) -> Iterator[Any]:
    """A binary ``COPY table (columns) FROM STDIN``."""
    with cur.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN (FORMAT BINARY)") as copy:
        copy.set_types([_TYPES[c] for c in columns])
        yield copy


def _text(value: str | None) -> str | None:
    """PostgreSQL text cannot hold NUL; a space keeps every offset where it was."""
    return value.replace("\x00", " ") if value else value


def _vec(value: Any) -> np.ndarray:
    """A stored vector as float32 (pgvector hands back its own ``Vector``)."""
    arr = value.to_numpy() if hasattr(value, "to_numpy") else value
    return np.asarray(arr, dtype=np.float32)


def _unpack(rows: list[Any], dim: int) -> tuple[np.ndarray, np.ndarray]:
    ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
    vecs = np.stack([_vec(r[1]) for r in rows]).reshape(len(rows), dim)
    return ids, vecs


class PgDocumentWriter:
    """Adds one document's passages, sentences and vectors (ids drawn from the
    sequences first, then the rows sent with COPY)."""

    def __init__(self, store: PgStore, doc_id: int, old_ids: list[int]) -> None:
        self.store = store
        self.doc_id = doc_id
        self.old_ids = old_ids
        self.ids: list[int] = []
        self.n_sentences = 0

    def add_fields(self, fields: Sequence[DocField]) -> None:
        if fields:
            with self.store.conn.cursor() as cur:
                cur.executemany(
                    "INSERT INTO fields (document_id, name, value, place, start_char, "
                    "end_char) VALUES (%s, %s, %s, %s, %s, %s)",
                    [(self.doc_id, f.name, _text(f.value), _text(f.place), f.start_char,
                      f.end_char) for f in fields])

    def add(self, chunks: Sequence[Chunk], embeddings: np.ndarray) -> list[int]:
        assert len(chunks) == len(embeddings)
        if not chunks:
            return []
        conn = self.store.conn
        first = len(self.ids)
        ids = [int(r[0]) for r in conn.execute(
            "SELECT nextval(pg_get_serial_sequence('passages', 'id')) "
            "FROM generate_series(1, %s)", [len(chunks)]).fetchall()]
        vecs = np.asarray(embeddings, dtype=np.float32)
        n_sentences = sum(len(c.sentences) for c in chunks)
        sids = [int(r[0]) for r in conn.execute(
            "SELECT nextval(pg_get_serial_sequence('sentences', 'id')) "
            "FROM generate_series(1, %s)", [n_sentences]).fetchall()] if n_sentences else []
        with conn.cursor() as cur:
            with _copy(cur, "passages", _COPIED["passages"]) as copy:
                for k, (pid, c) in enumerate(zip(ids, chunks, strict=True)):
                    copy.write_row([pid, self.doc_id, first + k, _text(c.place), c.start,
                                    c.end, _text(c.text), c.n_words, text_hash(c.text),
                                    vecs[k]])
            with _copy(cur, "sentences", _COPIED["sentences"]) as copy:
                it = iter(sids)
                for pid, c in zip(ids, chunks, strict=True):
                    for k, s in enumerate(c.sentences):
                        copy.write_row([next(it), pid, self.doc_id, k, s.start, s.end,
                                        _text(s.text), _text(s.raw)])
        self.ids.extend(ids)
        self.n_sentences += n_sentences
        return ids


# --------------------------------------------------------------------------- the index

class PgCollection(CollectionBase[PgStore]):
    """A named index in PostgreSQL: a :class:`ragctl.store.base.Collection`, with
    pgvector's HNSW index instead of a vector file and no writer's lock (writers
    serialize per file)."""

    @classmethod
    def open(cls, settings: Settings, *, create: bool = False) -> PgCollection:
        store = PgStore(settings.store, settings.index, create=create)
        return cls(settings.index, None, store, settings)

    @property
    def location(self) -> str:
        return f"{redact(self.settings.store)} (schema {self.store.schema})"

    def lock(self) -> None:
        """No index-wide lock: several writers may index at once (each file is written
        under its own advisory lock). Runs left "running" by a killed writer are closed."""
        self.store.close_stale_runs()

    def vectors(self) -> None:
        return None  # PostgreSQL keeps the HNSW index with the rows

    @property
    def loaded_vectors(self) -> None:
        return None

    @property
    def hnsw_path(self) -> None:
        return None

    def forget_vectors(self) -> None:
        return None

    def rebuild_vectors(self, *, save: bool = True) -> None:
        with self.store.transaction():
            self.store.conn.execute("REINDEX INDEX passages_embedding")

    def save_vectors(self) -> None:
        return None

    def settle_vectors(self) -> None:
        return None

    def file_check(self) -> None:
        return None

    def stamp(self) -> tuple[Any, ...]:
        return tuple(self.store.conn.execute(
            "SELECT count(*), coalesce(max(id), 0), max(indexed_at), "
            "(SELECT coalesce(max(id), 0) FROM passages) FROM documents").fetchone())

    def ranked(self, qvec: np.ndarray | None, query: str, depth: int, mode: str
               ) -> Ranking:
        ef = self.settings.hnsw_ef
        if mode == "hybrid" and qvec is not None:
            rows = self.store.hybrid_search(qvec, query, depth, rrf_k=self.settings.rrf_k,
                                            ef=ef)
            vec = sorted((rank, pid) for pid, _, rank, _ in rows if rank is not None)
            fts = sorted((rank, pid) for pid, _, _, rank in rows if rank is not None)
            return Ranking([pid for _, pid in vec], [pid for _, pid in fts],
                           {r[0]: r[1] for r in rows})
        vector = self.store.vector_search(qvec, depth, ef=ef) if qvec is not None else []
        bm25 = [pid for pid, _ in self.store.fts_search(query, depth)] \
            if mode in ("hybrid", "bm25") else []
        return Ranking(vector, bm25)

    def writer_active(self) -> bool:
        return self.store.active_runs() > 0

    def claims(self) -> Claims:
        return PgClaims(self.store)

    def doctor(self, *, repair: bool = True, full: bool = False,
               repairs: Repairs | None = None) -> DoctorReport:
        """The SQLite doctor's checks that apply here (``full`` changes nothing: the
        vectors are kept in the passages' rows, with no file of their own to compare;
        ``repairs`` go unused: passages' texts and vectors are not compared with their
        recorded checks here, as the SQLite doctor does)."""
        report = DoctorReport()
        store = self.store
        problem = store.integrity()
        if problem != "ok":
            report.problems.append(f"the index's schema is incomplete ({problem}); copy or "
                                   "index the folders again into a new index")
            return report
        self._stale_runs(report, repair)
        if not self._check_stored(report, store=self.location):
            return report
        dim = self.dim
        if dim is not None and not store.has_vector_index():
            report.problems.append("the HNSW index on the vectors is missing")
            if repair:
                with store.transaction():
                    store._fix_dimension(dim)
                report.repaired.append("made the HNSW index on the vectors again")
        return report

    def bytes_on_disk(self) -> dict[str, int]:
        return dict(self.store.bytes_on_disk())


class PgClaims:
    """Session-level advisory locks on the paths a writer is reading: another writer
    skips a claimed file and comes back to it at the end of its run (by then it is
    usually committed, and unchanged). Released after each commit, and by the server
    when the connection goes (a killed writer holds nothing)."""

    shared = True

    def __init__(self, store: PgStore) -> None:
        self.store = store
        self.held: list[str] = []

    def _key(self, path: str) -> str:
        return f"{self.store.schema}/{path}"

    def take(self, path: str, *, wait: bool = False) -> bool:
        if wait:
            self.store.conn.execute("SELECT pg_advisory_lock(hashtextextended(%s, 2))",
                                    [self._key(path)])
            got = True
        else:
            got = bool(self.store.conn.execute(
                "SELECT pg_try_advisory_lock(hashtextextended(%s, 2))",
                [self._key(path)]).fetchone()[0])
        if got:
            self.held.append(path)
        return got

    def release_all(self) -> None:
        for path in self.held:
            self.store.conn.execute("SELECT pg_advisory_unlock(hashtextextended(%s, 2))",
                                    [self._key(path)])
        self.held = []


# --------------------------------------------------------------------------- copying

_LOCAL_META = {SCHEMA_VERSION_KEY, "hnsw_file", "vectors_rebuild", "index_name"}


@dataclass
class CopySummary:
    index: str
    store: str
    rows: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"index": self.index, "store": self.store, "rows": self.rows,
                "seconds": self.seconds}


def copy_index(source: Any, url: str, *, name: str | None = None,
               on_table: Callable[[str, int], None] | None = None) -> CopySummary:
    """Copy the local index ``source`` (a :class:`ragctl.store.local.SqliteCollection`), vectors
    included, into a new index ``name`` (the same name by default) in the database at
    ``url``: in one transaction, so an interrupted or failed copy leaves nothing behind."""
    import time

    from ragctl.config import index_dir

    started = time.perf_counter()
    name = name or source.name
    index_dir(name)  # a valid index name
    src = source.store
    dim = source.dim
    dst = PgStore(url, name, create=True)
    existed = not dst.created
    summary = CopySummary(index=name, store=redact(url))
    try:
        if dst.count("documents") or dst.count("passages"):
            raise RagctlError(f"index {name!r} already holds documents in {redact(url)}; "
                              "nothing was copied (give the copy another name with --as NAME)")
        conn = dst.conn
        with conn.transaction():
            meta = {k: v for k, v in src.meta().items() if k not in _LOCAL_META}
            for k, v in meta.items():
                conn.execute("INSERT INTO meta VALUES (%s, %s) ON CONFLICT (key) DO UPDATE "
                             "SET value = excluded.value", [k, v])
            if dim is not None:
                conn.execute(f"ALTER TABLE passages ALTER COLUMN embedding TYPE vector({dim})")
            for table, columns in _COPIED.items():
                n = 0
                if table in _ADDED_LATER and not src.has_table(table):
                    continue  # a read-only index made before the table was
                with conn.cursor() as cur, _copy(cur, table, columns) as copy:
                    for rows in src.dump(table, columns):
                        for row in rows:
                            copy.write_row(_copy_row(table, columns, row))
                        n += len(rows)
                        if on_table is not None:
                            on_table(table, n)
                summary.rows[table] = n
            for table in ("documents", "passages", "sentences", "fields", "log"):
                conn.execute(f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), "
                             f"coalesce((SELECT max(id) FROM {table}), 0) + 1, false)")
            if dim is not None:
                if on_table is not None:
                    on_table("HNSW index", summary.rows.get("passages", 0))
                dst._fix_dimension(dim)
        summary.seconds = round(time.perf_counter() - started, 3)
        return summary
    except BaseException:
        if not existed:  # nothing half-written: the new schema goes too
            with contextlib.suppress(Exception):
                dst.conn.execute(f'DROP SCHEMA IF EXISTS "{dst.schema}" CASCADE')
        raise
    finally:
        dst.close()


def _copy_row(table: str, columns: Sequence[str], row: tuple[Any, ...]) -> list[Any]:
    out = list(row)
    if table == "passages":
        k = columns.index("embedding")
        out[k] = np.frombuffer(out[k], dtype=np.float32)
    elif table == "log":
        k = columns.index("abstained")
        out[k] = bool(out[k])
    return [_text(v) if isinstance(v, str) else v for v in out]
