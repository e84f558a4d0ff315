"""What the rest of ragctl may use of an index, whichever store holds it.

Two backends implement it: :class:`ragctl.store.local.SqliteCollection` (a SQLite file, an
HNSW file and a writer's lock in a folder) and :class:`ragctl.store.postgres.PgCollection`
(a schema in a PostgreSQL database with pgvector). The protocols here name exactly the
attributes and methods the program uses of a collection (:class:`Collection`) and of its
store (:class:`Store`); :class:`CollectionBase` holds the parts both backends share, and
the records they hand back (:class:`Ranking`, :class:`DoctorReport`) live here too.
Callers open an index with :meth:`ragctl.store.collection.Collection.open`, which picks the
backend; ``tests/test_store_conformance.py`` runs one set of cases against both.

Nothing here imports a backend: both import this module, never each other.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Protocol, Self, TypeVar

if TYPE_CHECKING:
    import numpy as np

    from ragctl.config import Settings
    from ragctl.records import Chunk, DocField, Passage, Sentence
    from ragctl.store.sqlite import DocumentRecord
    from ragctl.store.vectors import FileCheck, VectorIndex


# ----------------------------------------------------------------------- records

@dataclass
class Ranking:
    """Passage ids best first, by vector similarity and by full text; ``fused`` holds the
    reciprocal-rank-fusion scores when the store computed them itself."""

    vector: list[int]
    bm25: list[int]
    fused: dict[int, float] | None = None


@dataclass
class DoctorReport:
    problems: list[str] = field(default_factory=list)
    repaired: list[str] = field(default_factory=list)
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.problems or len(self.repaired) >= len(self.problems)


@dataclass(frozen=True)
class Repairs:
    """What doctor needs from the floors above the store to repair passages: reading
    files again (the write path) and embedding texts again (the index's own model)."""

    reread: Callable[[Collection, list[str]], None]
    embed: Callable[[Collection, list[str]], Any]


# ----------------------------------------------------------------------- protocols

class Claims(Protocol):
    """Which files one writer is working on, so that concurrent writers of one index
    share the work instead of each reading every file."""

    @property
    def shared(self) -> bool:
        """Whether other writers may be writing the same index now."""
        ...

    def take(self, path: str, *, wait: bool = False) -> bool: ...

    def release_all(self) -> None: ...


class SoleWriterClaims:
    """The claims of a writer that holds the index's writer's lock: there is no one to
    share with, so every claim succeeds."""

    shared = False

    def take(self, path: str, *, wait: bool = False) -> bool:
        return True

    def release_all(self) -> None:
        return None


class DocumentWriter(Protocol):
    """One document being written part by part (:meth:`Store.writing_document`)."""

    ids: list[int]  # the passages added so far
    old_ids: list[int]  # the passages of the version it replaces
    n_sentences: int

    def add(self, chunks: Sequence[Chunk], embeddings: np.ndarray) -> list[int]: ...
    def add_fields(self, fields: Sequence[DocField]) -> None: ...


class Store(Protocol):
    """What the program uses of ``collection.store``: documents, passages, sentences,
    their vectors, full-text search, runs, skipped files and the answer log. Both
    :class:`ragctl.store.sqlite.Store` and :class:`ragctl.store.postgres.PgStore` are
    one."""

    @property
    def readonly(self) -> bool: ...

    @property
    def unread_changes(self) -> str | None:
        """Why the newest committed changes cannot be read here (None when they can)."""
        ...

    def close(self) -> None: ...

    def transaction(self) -> AbstractContextManager[None]: ...

    # meta
    def get_meta(self, key: str, default: str | None = None) -> str | None: ...
    def set_meta(self, **values: Any) -> None: ...
    def meta(self) -> dict[str, str]: ...

    # roots, documents, skipped files
    def add_root(self, path: str) -> None: ...
    def roots(self) -> list[str]: ...
    def document(self, path: str) -> DocumentRecord | None: ...
    def documents(self, under: str | None = None) -> list[DocumentRecord]: ...
    def touch_document(self, doc_id: int, *, size: int, mtime_ns: int) -> None: ...
    def move_document(self, doc_id: int, *, path: str, size: int, mtime_ns: int) -> None: ...
    def delete_document(self, doc_id: int) -> list[int]: ...
    def replace_document(self, *, path: str, format: str, title: str, size: int,
                         mtime_ns: int, sha256: str, chunks: Sequence[Chunk],
                         embeddings: np.ndarray, fields: Sequence[DocField] = ()
                         ) -> tuple[list[int], list[int]]: ...
    def writing_document(self, *, path: str, format: str, title: str, size: int,
                         mtime_ns: int, sha256: str
                         ) -> AbstractContextManager[DocumentWriter]: ...
    def document_fields(self, path: str) -> list[DocField]: ...
    def format_counts(self) -> dict[str, int]: ...
    def skips(self) -> dict[str, dict[str, Any]]: ...
    def record_skip(self, path: str, *, size: int, mtime_ns: int, reason: str,
                    readers: str, partial: bool = False) -> None: ...
    def forget_skips(self, paths: Iterable[str]) -> None: ...

    # passages, sentences, vectors
    def count(self, table: str) -> int: ...
    def passage_ids(self) -> list[int]: ...
    def passages(self, ids: Sequence[int]) -> dict[int, Passage]: ...
    def sentences_of(self, passage_ids: Sequence[int]) -> dict[int, list[Sentence]]: ...
    def sentences_like(self, path: str, patterns: Sequence[str], limit: int = 50
                       ) -> list[Sentence]: ...
    def sentence_at(self, path: str, place: str, start_char: int) -> Sentence | None: ...
    def sentence_rows(self) -> list[tuple[int, int, str]]: ...
    def embeddings_by_hash(self, hashes: Iterable[str]) -> dict[str, bytes]: ...
    def vectors(self, ids: Sequence[int] | None = None, *, dim: int,
                batch: int = 5000) -> Iterator[tuple[np.ndarray, np.ndarray]]: ...
    def fts_search(self, query: str, limit: int) -> list[tuple[int, float]]: ...
    def mentioning(self, words: Sequence[str], limit: int) -> list[tuple[int, str]]: ...
    def bad_vector_count(self, dim: int) -> int: ...

    # re-embedding with another model
    def passage_titles(self, after: int, limit: int) -> list[tuple[int, str, str]]: ...
    def passage_texts(self, after: int, limit: int) -> list[tuple[int, str]]: ...
    def start_staging(self) -> None: ...
    def stage_embeddings(self, ids: Sequence[int], vectors: np.ndarray) -> None: ...
    def swap_in_staged(self, **meta: Any) -> None: ...

    # checks, the vector journal (always empty where the store keeps its own index)
    def integrity(self, *, quick: bool = False) -> str: ...
    def journal(self) -> tuple[int, dict[int, str]]: ...
    def journal_seq(self) -> int: ...

    # runs and the answer log
    def start_run(self) -> int: ...
    def finish_run(self, run_id: int, status: str, summary: dict[str, Any]) -> None: ...
    def last_run(self) -> dict[str, Any] | None: ...
    def stale_runs(self) -> int: ...
    def close_stale_runs(self) -> int: ...
    def log_answer(self, question: str, answer: str, abstained: bool,
                   result: dict[str, Any]) -> None: ...
    def logs(self, limit: int = 20, *, query: str | None = None
             ) -> list[dict[str, Any]]: ...


class Collection(Protocol):
    """One named index: its store, the vectors' nearest-neighbour index, the writer's
    lock and doctor's checks. What the rest of ragctl uses of an index, and all it may
    use; see the module's docstring."""

    name: str
    settings: Settings
    applied_seq: int  # journal entries up to this seq are in the loaded vectors

    @classmethod
    def open(cls, settings: Settings, *, create: bool = False) -> Collection:
        """Open (or, with ``create``, make) the index of ``settings``."""
        ...

    @property
    def store(self) -> Store: ...

    @property
    def dir(self) -> Path | None:
        """The index's folder (None where it lives in a database)."""
        ...

    @property
    def writable(self) -> bool: ...

    @property
    def location(self) -> str:
        """Where the index lives, for messages and ``status`` (no password)."""
        ...

    @property
    def embedder_name(self) -> str | None: ...

    @property
    def dim(self) -> int | None: ...

    def close(self) -> None: ...
    def __enter__(self) -> Self: ...
    def __exit__(self, *exc: object) -> None: ...

    # writing
    def lock(self) -> None:
        """Get ready to write (the writer's lock where there is one); runs left
        "running" by a killed writer are closed as interrupted."""
        ...

    def unlock(self) -> None: ...
    def writer_active(self) -> bool: ...
    def claims(self) -> Claims: ...

    # vectors (a store that keeps its own vector index has no file: None, no-ops)
    def vectors(self) -> VectorIndex | None: ...

    @property
    def loaded_vectors(self) -> VectorIndex | None: ...

    def rebuild_vectors(self, *, save: bool = True) -> VectorIndex | None: ...
    def save_vectors(self) -> None: ...
    def settle_vectors(self) -> None: ...
    def forget_vectors(self) -> None: ...
    def file_check(self) -> FileCheck | None: ...

    @property
    def hnsw_path(self) -> Path | None:
        """The HNSW file (None where the store keeps its own vector index)."""
        ...

    # reading and checking
    def ranked(self, qvec: Any, query: str, depth: int, mode: str) -> Ranking: ...
    def stamp(self) -> tuple[Any, ...]:
        """Changes when another process commits to the index."""
        ...

    def doctor(self, *, repair: bool = True, full: bool = False,
               repairs: Repairs | None = None) -> DoctorReport: ...
    def bytes_on_disk(self) -> dict[str, int]: ...


# ----------------------------------------------------------------------- shared parts

S = TypeVar("S", bound=Store)


class CollectionBase(ABC, Generic[S]):
    """The parts of a :class:`Collection` that do not depend on the backend."""

    def __init__(self, name: str, path: Path | None, store: S, settings: Settings) -> None:
        self.name = name
        self.dir = path
        self.store = store
        self.settings = settings
        self.applied_seq = 0

    @property
    def writable(self) -> bool:
        return not self.store.readonly

    def close(self) -> None:
        self.unlock()
        self.store.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def unlock(self) -> None:
        return None

    # ------------------------------------------------------------------ model identity
    @property
    def embedder_name(self) -> str | None:
        return self.store.get_meta("embedder")

    @property
    def dim(self) -> int | None:
        value = self.store.get_meta("dim")
        return int(value) if value else None

    def claims(self) -> Claims:
        """Files this writer is reading (one writer at a time: every claim succeeds)."""
        return SoleWriterClaims()

    # ------------------------------------------------------------------ checks
    def _check_stored(self, report: DoctorReport, **info: Any) -> bool:
        """Counts (and ``info``) into the report; a problem for passages without a
        recorded model (then False: nothing more can be checked) and for stored vectors of
        another dimension."""
        store = self.store
        n_passages, dim = store.count("passages"), self.dim
        report.info.update(documents=store.count("documents"), passages=n_passages,
                           embedder=self.embedder_name, dim=dim, **info)
        if n_passages and (dim is None or not self.embedder_name):
            report.problems.append("passages exist but the embedding model is not recorded")
            return False
        if dim is not None:
            bad = store.bad_vector_count(dim)
            if bad:
                report.problems.append(f"{bad} stored vectors are not of dimension {dim}")
        return True

    @abstractmethod
    def writer_active(self) -> bool:
        """Whether another process is writing the index now."""

    def _stale_runs(self, report: DoctorReport, repair: bool, *,
                    unless_writing: bool = False) -> None:
        """Runs left "running" by a killed writer; with ``unless_writing``, when no
        writer is on now (a store that cannot tell a killed writer's run from a live one
        by itself)."""
        stale = self.store.stale_runs()
        if stale and (repair or not unless_writing or not self.writer_active()):
            report.problems.append(f"{stale} index runs were left 'running' by a process "
                                   "that was killed")
            if repair:
                self.store.close_stale_runs()
                report.repaired.append(f"marked {stale} runs as interrupted")
