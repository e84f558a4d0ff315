"""A named index on disk: its SQLite store, its HNSW file and the lock that guards both.

Layout of ``$RAGCTL_HOME/index/NAME/``: ``ragctl.db`` (+ WAL files), ``vectors.hnsw``,
``lock``. The store is the source of truth; the HNSW file is derived from it and is
brought up to date from the store's journal whenever it lags (after a crash) or rebuilt
from the stored vectors when it is missing, unreadable or of another dimension.
"""

from __future__ import annotations

import fcntl
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from .config import Settings, index_dir, indexes_dir
from .errors import IndexLockedError, IndexNotFoundError, RagctlError
from .store import Store
from .vectors import HnswParams, VectorIndex

logger = logging.getLogger("ragctl.collection")

DB_FILE = "ragctl.db"
HNSW_FILE = "vectors.hnsw"
LOCK_FILE = "lock"


def list_indexes() -> list[str]:
    root = indexes_dir()
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if (p / DB_FILE).exists())


@dataclass
class DoctorReport:
    problems: list[str] = field(default_factory=list)
    repaired: list[str] = field(default_factory=list)
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.problems or len(self.repaired) >= len(self.problems)


class Collection:
    """Open with :meth:`open`; close (or use as a context manager) when done."""

    def __init__(self, name: str, path: Path, store: Store, settings: Settings) -> None:
        self.name = name
        self.dir = path
        self.store = store
        self.settings = settings
        self._lock_file: IO[str] | None = None
        self._vectors: VectorIndex | None = None
        # journal entries up to this seq are reflected in self._vectors
        self.applied_seq = 0

    @classmethod
    def open(cls, settings: Settings, *, create: bool = False) -> Collection:
        path = index_dir(settings.index)
        if not (path / DB_FILE).exists():
            if not create:
                known = list_indexes()
                hint = f"; indexes here: {', '.join(known)}" if known else ""
                raise IndexNotFoundError(
                    f"no index named {settings.index!r} in {indexes_dir()} "
                    f"(create it with: ragctl index PATH --index {settings.index}){hint}"
                )
            path.mkdir(parents=True, exist_ok=True)
        return cls(settings.index, path, Store(path / DB_FILE), settings)

    def close(self) -> None:
        self.unlock()
        self.store.close()

    def __enter__(self) -> Collection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ locking
    def lock(self) -> None:
        """Take the writer's lock; a second writer gets a clear error, not a corrupt index."""
        f = open(self.dir / LOCK_FILE, "a+")  # noqa: SIM115 - held open while locked
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            f.close()
            raise IndexLockedError(
                f"another ragctl process is writing to index {self.name!r}; "
                "wait for it to finish and try again"
            ) from None
        self._lock_file = f

    def unlock(self) -> None:
        if self._lock_file is not None:
            fcntl.flock(self._lock_file, fcntl.LOCK_UN)
            self._lock_file.close()
            self._lock_file = None

    # ------------------------------------------------------------------ model identity
    @property
    def embedder_name(self) -> str | None:
        return self.store.get_meta("embedder")

    @property
    def dim(self) -> int | None:
        value = self.store.get_meta("dim")
        return int(value) if value else None

    @property
    def hnsw_path(self) -> Path:
        return self.dir / HNSW_FILE

    def hnsw_params(self) -> HnswParams:
        meta = self.store.meta()
        return HnswParams(
            m=int(meta.get("hnsw_m", self.settings.hnsw_m)),
            ef_construction=int(meta.get("hnsw_ef_construction",
                                         self.settings.hnsw_ef_construction)),
            ef=self.settings.hnsw_ef,
        )

    # ------------------------------------------------------------------ vectors
    def vectors(self) -> VectorIndex | None:
        """The HNSW index, current with the store (None while the index has no vectors).

        Pending journal entries are applied in memory; :meth:`save_vectors` writes them.
        """
        if self._vectors is not None:
            return self._vectors
        dim = self.dim
        if dim is None:
            return None
        params = self.hnsw_params()
        vi: VectorIndex | None = None
        if self.store.get_meta("vectors_rebuild") != "1" and self.hnsw_path.exists():
            try:
                vi = VectorIndex.load(self.hnsw_path, dim, params)
            except (RuntimeError, OSError, ValueError) as e:
                logger.warning("%s is unreadable (%s); rebuilding it from the store",
                               self.hnsw_path, e)
        if vi is None:
            vi = self.rebuild_vectors(save=False)
        else:
            self._apply_journal(vi)
        self._vectors = vi
        return vi

    def _apply_journal(self, vi: VectorIndex) -> None:
        seq, ops = self.store.journal()
        self.applied_seq = seq
        if not ops:
            return
        vi.delete(pid for pid, op in ops.items() if op == "delete")
        adds = [pid for pid, op in ops.items() if op == "add"]
        for ids, vecs in self.store.vectors(adds, dim=vi.dim):
            vi.add(ids, vecs)
        logger.info("applied %d pending vector changes", len(ops))

    def rebuild_vectors(self, *, save: bool = True) -> VectorIndex:
        """A fresh HNSW index from every stored vector."""
        dim = self.dim
        if dim is None:
            raise RagctlError(f"index {self.name!r} holds no vectors yet")
        total = self.store.count("passages")
        self.applied_seq = self.store.journal_seq()
        vi = VectorIndex(dim, self.hnsw_params(), capacity=max(total, 1024))
        for ids, vecs in self.store.vectors(dim=dim):
            vi.add(ids, vecs)
        vi.dirty = True
        self._vectors = vi
        if save:
            self.save_vectors()
        return vi

    @property
    def loaded_vectors(self) -> VectorIndex | None:
        """The HNSW index if this process has loaded it, without loading it."""
        return self._vectors

    def forget_vectors(self) -> None:
        self._vectors = None

    def save_vectors(self) -> None:
        """Write the HNSW file (atomically) and drop the journal entries it now holds."""
        vi = self._vectors
        if vi is None:
            return
        vi.save(self.hnsw_path)
        self.store.clear_journal(self.applied_seq)
        if self.store.get_meta("vectors_rebuild") == "1":
            self.store.set_meta(vectors_rebuild="0")

    # ------------------------------------------------------------------ checks
    def doctor(self, *, repair: bool = True) -> DoctorReport:
        """Check that the store and the HNSW file agree; rebuild what does not."""
        report = DoctorReport()
        store = self.store
        integrity = store.integrity()
        if integrity != "ok":
            report.problems.append(f"SQLite integrity check failed: {integrity}")
        fts = store.fts_problem()
        if fts is not None:
            report.problems.append(f"full-text index does not match the passages ({fts})")
            if repair:
                store.rebuild_fts()
                report.repaired.append("rebuilt the full-text index")
        orphans = store.orphan_count()
        if orphans:
            report.problems.append(f"{orphans} passages belong to no document")
            if repair:
                store.remove_orphans()
                report.repaired.append(f"removed {orphans} orphaned passages")
        n_passages = store.count("passages")
        dim = self.dim
        report.info.update(documents=store.count("documents"), passages=n_passages,
                           embedder=self.embedder_name, dim=dim)
        if n_passages and (dim is None or not self.embedder_name):
            report.problems.append("passages exist but the embedding model is not recorded")
            return report
        if dim is not None:
            bad = store.bad_vector_count(dim)
            if bad:
                report.problems.append(f"{bad} stored vectors are not of dimension {dim}")
        pending = len(store.journal()[1])
        report.info["pending_vector_changes"] = pending
        if dim is None:
            return report
        problem = self._check_hnsw(dim, n_passages, report)
        if problem:
            report.problems.append(problem)
            if repair:
                self._vectors = None
                self.rebuild_vectors(save=True)
                report.repaired.append(f"rebuilt {HNSW_FILE} from {n_passages} stored vectors")
        elif pending and repair:
            self.save_vectors()  # the index _check_hnsw loaded, journal applied
            report.info["applied_pending"] = pending
        tmp = self.hnsw_path.with_name(HNSW_FILE + ".tmp")
        if tmp.exists() and repair:
            os.unlink(tmp)
        return report

    def _check_hnsw(self, dim: int, n_passages: int, report: DoctorReport) -> str | None:
        if not self.hnsw_path.exists():
            return f"{HNSW_FILE} is missing" if n_passages else None
        if self.store.get_meta("vectors_rebuild") == "1":
            return f"{HNSW_FILE} was left mid-rebuild"
        try:
            vi = VectorIndex.load(self.hnsw_path, dim, self.hnsw_params())
        except (RuntimeError, OSError, ValueError) as e:
            return f"{HNSW_FILE} cannot be loaded ({e})"
        self._apply_journal(vi)
        store_ids = set(self.store.passage_ids())
        missing = [i for i in store_ids if not vi.is_live(i)]
        extra = [i for i in vi.labels() if i not in store_ids and vi.is_live(i)]
        report.info["hnsw_live"] = len(store_ids) - len(missing) + len(extra)
        if missing or extra:
            return (f"{HNSW_FILE} disagrees with the store: {len(missing)} passages missing, "
                    f"{len(extra)} unknown ids")
        self._vectors = vi  # sound and current: later calls need not load it again
        return None


def status(collection: Collection) -> dict[str, Any]:
    """Counts, sizes on disk, models and the last run of one index."""
    store = collection.store
    files = [collection.dir / n for n in (DB_FILE, DB_FILE + "-wal", DB_FILE + "-shm",
                                           HNSW_FILE)]
    sizes = {f.name: f.stat().st_size for f in files if f.exists()}
    meta = store.meta()
    formats = store.format_counts()
    return {
        "index": collection.name,
        "path": str(collection.dir),
        "documents": store.count("documents"),
        "passages": store.count("passages"),
        "sentences": store.count("sentences"),
        "formats": formats,
        "roots": store.roots(),
        "embedder": meta.get("embedder"),
        "dim": int(meta["dim"]) if meta.get("dim") else None,
        "chunker": meta.get("chunker"),
        "schema_version": int(meta.get("schema_version", 0)),
        "bytes_on_disk": sizes,
        "total_bytes": sum(sizes.values()),
        "pending_vector_changes": len(store.journal()[1]),
        "last_run": store.last_run(),
    }


def index_status(settings: Settings) -> dict[str, Any]:
    """:func:`status` of the index of ``settings``."""
    with Collection.open(settings) as collection:
        return status(collection)


def check_index(settings: Settings, *, repair: bool = True) -> DoctorReport:
    """``doctor``: check the index of ``settings``, repairing (under the writer's lock)
    unless ``repair`` is off."""
    with Collection.open(settings) as collection:
        if repair:
            collection.lock()
        return collection.doctor(repair=repair)
