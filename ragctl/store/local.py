"""A named index on disk: its SQLite store, its HNSW file and the lock that guards both.

Layout of ``$RAGCTL_HOME/index/NAME/``: ``ragctl.db`` (+ WAL files), ``vectors.hnsw``,
``lock``. The store is the source of truth; the HNSW file is derived from it and is
brought up to date from the store's journal whenever it lags (after a crash) or rebuilt
from the stored vectors when it is missing, unreadable or of another dimension.

:class:`SqliteCollection` is one :class:`ragctl.store.base.Collection`; callers open it
through :meth:`ragctl.store.collection.Collection.open`, which picks the backend.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
from pathlib import Path
from typing import IO, Any

from ragctl.config import Settings, index_dir, indexes_dir
from ragctl.errors import (
    IndexLockedError,
    IndexNotFoundError,
    RagctlError,
    ReadOnlyIndexError,
)
from ragctl.store.base import CollectionBase, DoctorReport, Ranking, Repairs
from ragctl.store.sqlite import Store
from ragctl.store.vectors import FileCheck, HnswParams, VectorIndex

logger = logging.getLogger("ragctl.collection")

DB_FILE = "ragctl.db"
HNSW_FILE = "vectors.hnsw"
LOCK_FILE = "lock"
SAMPLE = 200  # vectors of the HNSW file compared with the stored ones by a plain doctor


def list_indexes() -> list[str]:
    root = indexes_dir()
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if (p / DB_FILE).exists())


class SqliteCollection(CollectionBase[Store]):
    """A named index in a folder of its own. Open with :meth:`open`; close (or use as a
    context manager) when done."""

    dir: Path

    def __init__(self, name: str, path: Path, store: Store, settings: Settings) -> None:
        super().__init__(name, path, store, settings)
        self._lock_file: IO[str] | None = None
        self._vectors: VectorIndex | None = None
        # journal entries up to self.applied_seq are reflected in self._vectors

    @classmethod
    def open(cls, settings: Settings, *, create: bool = False) -> SqliteCollection:
        """Open (or, with ``create``, make) the index of ``settings``. An index that
        cannot be written is opened read-only: searching and asking work, writing does
        not (:meth:`lock` says so)."""
        if settings.store:
            raise RagctlError("a local index has no store URL: open it with "
                              "ragctl.store.collection.Collection.open")
        path = index_dir(settings.index)
        db = path / DB_FILE
        if not db.exists():
            if not create:
                known = list_indexes()
                hint = f"; indexes here: {', '.join(known)}" if known else ""
                raise IndexNotFoundError(
                    f"no index named {settings.index!r} in {indexes_dir()} "
                    f"(create it with: ragctl index PATH --index {settings.index}){hint}"
                )
            try:
                path.mkdir(parents=True, exist_ok=True, mode=0o700)
                for d in (path, path.parent):  # the index and the folder of indexes
                    if d.stat().st_mode & 0o077 and d.stat().st_uid == os.getuid():
                        os.chmod(d, 0o700)
            except OSError as e:
                raise ReadOnlyIndexError(f"cannot create the index in {path}: "
                                         f"{e.strerror}") from None
        writable = os.access(path, os.W_OK) and (not db.exists() or os.access(db, os.W_OK))
        if create and not writable:
            raise ReadOnlyIndexError(f"cannot write to index {settings.index!r}: {path} is "
                                     "read-only")
        return cls(settings.index, path, Store(db, readonly=not writable), settings)

    @property
    def location(self) -> str:
        """Where the index lives, for messages and ``status``."""
        return str(self.dir)

    # ------------------------------------------------------------------ locking
    def lock(self) -> None:
        """Take the writer's lock; a second writer gets a clear error, not a corrupt index.
        Runs left "running" by a killed writer are closed as interrupted."""
        if self.store.readonly:
            raise ReadOnlyIndexError(f"cannot write to index {self.name!r}: {self.dir} is "
                                     "read-only (searching and asking still work)")
        try:
            fd = os.open(self.dir / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as e:
            raise ReadOnlyIndexError(f"cannot write to index {self.name!r}: "
                                     f"{e.strerror}") from None
        f = os.fdopen(fd, "a+")
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            f.close()
            raise IndexLockedError(
                f"another ragctl process is writing to index {self.name!r}; "
                "wait for it to finish and try again"
            ) from None
        self._lock_file = f
        self.store.close_stale_runs()

    def unlock(self) -> None:
        if self._lock_file is not None:
            fcntl.flock(self._lock_file, fcntl.LOCK_UN)
            self._lock_file.close()
            self._lock_file = None

    # ------------------------------------------------------------------ the HNSW file
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
            check = self.file_check()
            if check is not None and not check.matches(self.hnsw_path):
                if self.store.unread_changes:  # the file holds changes not read here
                    logger.info("%s holds changes that cannot be read here; using the "
                                "stored vectors", self.hnsw_path)
                else:
                    logger.warning("%s does not match the index (damaged, or left by an "
                                   "interrupted save); using the stored vectors instead",
                                   self.hnsw_path)
            else:
                try:
                    vi = VectorIndex.load(self.hnsw_path, dim, params)
                except (RuntimeError, OSError, ValueError) as e:
                    logger.warning("%s is unreadable (%s); using the stored vectors instead",
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

    def file_check(self) -> FileCheck | None:
        """The size, SHA-256 and count the saved HNSW file must have (None before the
        first verified save)."""
        raw = self.store.get_meta("hnsw_file")
        if not raw:
            return None
        try:
            d = json.loads(raw)
            return FileCheck(int(d["size"]), str(d["sha256"]), int(d["count"]))
        except (ValueError, KeyError, TypeError):
            return None

    def save_vectors(self) -> None:
        """Write the HNSW file (atomically, verified), record what it must be, and drop the
        journal entries it now holds."""
        vi = self._vectors
        if vi is None:
            return
        try:
            check = vi.save(self.hnsw_path)
        except RagctlError:
            if not vi.usable:  # let go of for the read-back: load the last good file again
                self._vectors = None
            raise
        with self.store.transaction():
            self.store.set_meta(hnsw_file=json.dumps(check.to_dict()))
            self.store.clear_journal(self.applied_seq)
            if self.store.get_meta("vectors_rebuild") == "1":
                self.store.set_meta(vectors_rebuild="0")

    def bytes_on_disk(self) -> dict[str, int]:
        files = [self.dir / n for n in (DB_FILE, DB_FILE + "-wal", DB_FILE + "-shm",
                                        HNSW_FILE)]
        return {f.name: f.stat().st_size for f in files if f.exists()}

    def settle_vectors(self) -> None:
        """Leave a verified HNSW file that holds every committed change, even when this
        run changed nothing (an earlier run was killed while saving, or the file is
        damaged)."""
        if self.dim is None:
            return
        pending = self.store.journal_seq() > 0  # changes committed but not in the file
        check = self.file_check()
        sound = self.hnsw_path.exists() and check is not None and check.matches(self.hnsw_path)
        if (pending or not sound) and self.vectors() is not None:
            self.save_vectors()

    # ------------------------------------------------------------------ searching
    def ranked(self, qvec: Any, query: str, depth: int, mode: str) -> Ranking:
        """The ``depth`` nearest passages to ``qvec`` (when given) and the ``depth`` best
        full-text matches of ``query`` (in "hybrid" and "bm25" modes)."""
        vector: list[int] = []
        if qvec is not None:
            vi = self.vectors()
            if vi is not None:
                labels, _ = vi.search(qvec, depth)
                vector = [int(x) for x in labels]
        bm25 = [pid for pid, _ in self.store.fts_search(query, depth)] \
            if mode in ("hybrid", "bm25") else []
        return Ranking(vector, bm25)

    def stamp(self) -> tuple[Any, ...]:
        """Changes when another process commits to the index or writes its HNSW file
        (this connection's own commits, such as the answer log, do not count)."""
        try:
            st = self.hnsw_path.stat()
            hnsw_stamp: tuple[int, int] | None = (st.st_mtime_ns, st.st_size)
        except OSError:
            hnsw_stamp = None
        return (self.store.data_version(), hnsw_stamp)

    # ------------------------------------------------------------------ checks
    def doctor(self, *, repair: bool = True, full: bool = False,
               repairs: Repairs | None = None) -> DoctorReport:
        """Check everything that can go wrong on disk and repair what can be derived: the
        database's integrity, every passage's text against the SHA-256 recorded when it
        was indexed (a damaged one is read again from its file), the full-text index
        against the passages, orphans, every stored vector against its passage's
        recorded check (a wrong one is embedded again), the HNSW file against its
        recorded checksum, the store's ids and a sample of the stored vectors (with
        ``full``: every one), runs left "running" by a killed process, permissions.
        Passages are read again and embedded again by ``repairs`` (the write path's, see
        :func:`ragctl.index.doctor.check_index`); without them, they are reported only."""
        report = DoctorReport()
        store = self.store
        if store.unread_changes:
            report.problems.append("the newest changes to this index cannot be read here "
                                   f"(they are in {DB_FILE}-wal and {DB_FILE}-shm is "
                                   "missing from a folder that cannot be written), so they "
                                   "were not checked; checked: the index as it was before "
                                   "them")
        integrity = store.integrity()
        if integrity != "ok":
            report.problems.append(f"SQLite integrity check failed: {integrity}; the "
                                   "database itself cannot be repaired from here: move "
                                   f"{self.dir} away and index the folders again")
            return report
        damaged_texts = store.damaged_texts()
        if damaged_texts:
            docs = store.paths_of(damaged_texts)
            report.problems.append(
                f"{len(damaged_texts)} passages of {len(docs)} documents hold other text "
                f"than was indexed (changed on disk), e.g. in {next(iter(docs))}")
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
        self._stale_runs(report, repair, unless_writing=True)
        loose = self._loose_permissions()
        if loose:
            report.problems.append(f"{len(loose)} files or folders of the index are readable "
                                   f"by other users (e.g. {loose[0]})")
            if repair:
                self._tighten_permissions()
                report.repaired.append("made the index readable by its owner only "
                                       "(folders 0700, files 0600)")
        if not self._check_stored(report):
            return report
        n_passages, dim = report.info["passages"], self.dim
        if dim is not None:
            self._check_stored_vectors(dim, set(damaged_texts), report, repair, repairs)
        pending = len(store.journal()[1])
        report.info["pending_vector_changes"] = pending
        if dim is None or store.unread_changes:  # the HNSW file holds what is not read
            return self._reread(damaged_texts, report, repair, repairs)
        problem = self._check_hnsw(dim, n_passages, report, full=full)
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
        return self._reread(damaged_texts, report, repair, repairs)

    def _reread(self, damaged: list[int], report: DoctorReport, repair: bool,
                repairs: Repairs | None) -> DoctorReport:
        """Passages whose text was damaged on disk come back as the files they came from
        are read again (the way a changed file is indexed again; their vectors are
        reused by the recorded SHA-256 of their text, so nothing needs embedding); those
        whose file is gone, or cannot be read, are said to be so."""
        if not damaged or not repair:
            return report
        docs = self.store.paths_of(damaged)
        there = [p for p in docs if os.path.isfile(p)]
        failed = ""
        if there and repairs is None:
            failed = "reading files again is the write path's: run ragctl doctor"
        elif there and repairs is not None:
            try:
                repairs.reread(self, there)
            except RagctlError as e:  # no model to embed with, a full disk: said below
                failed = str(e)
            self.forget_vectors()
        left = self.store.paths_of(self.store.damaged_texts())
        fixed = [p for p in docs if p not in left]
        if fixed:
            report.repaired.append(f"read {len(fixed)} documents again from their files "
                                   "for their damaged passages")
        if left:
            gone = [p for p in left if not os.path.isfile(p)]
            n = sum(len(v) for v in left.values())
            if gone:
                why = (f"the file of {len(gone)} of them is gone (e.g. {gone[0]}): restore "
                       "it, or run ragctl index to drop it")
            elif failed:
                why = f"reading their files again failed: {failed}"
            else:
                why = f"their files could not be read again (e.g. {next(iter(left))})"
            report.problems.append(f"{n} damaged passages of {len(left)} documents cannot "
                                   f"be repaired: {why}")
        return report

    def _check_stored_vectors(self, dim: int, text_damaged: set[int], report: DoctorReport,
                              repair: bool, repairs: Repairs | None) -> None:
        """Every stored vector against its passage's recorded check (cheap: no vector is
        compared, a hash is computed); a wrong one takes the vector of a sound passage
        with the same text, or is embedded again from its passage's text with the index's
        own model. A passage whose text is damaged too is left to :meth:`_reread`. Done
        before the HNSW file is compared with the store, which is then right."""
        store = self.store
        wrong = [i for i in store.damaged_vectors() if i not in text_damaged]
        report.info["stored_vectors_checked"] = report.info.get("passages", 0)
        if not wrong:
            return
        report.problems.append(f"{len(wrong)} stored vectors are not their passage's "
                               "(swapped or changed on disk)")
        if not repair:
            return
        import numpy as np

        rows = store.text_rows(wrong)
        sound = store.embeddings_by_hash(h for _, _, h in rows)
        todo = [(pid, text) for pid, text, h in rows if h not in sound]
        vectors = {pid: np.frombuffer(sound[h], dtype=np.float32) for pid, _, h in rows
                   if h in sound}
        if todo:
            name = self.embedder_name or ""
            try:
                if repairs is None:
                    raise RagctlError("no embedder was given: run ragctl doctor")
                new = repairs.embed(self, [t for _, t in todo])
            except (RagctlError, OSError) as e:
                report.problems.append(f"cannot embed {len(todo)} passages again with "
                                       f"{name} here ({e})")
                todo = []
                new = np.zeros((0, dim), dtype=np.float32)
            if len(new) and np.asarray(new).shape[1] != dim:
                report.problems.append(f"{name} now gives vectors of another dimension "
                                       f"than {dim}: the passages were not embedded again")
                todo = []
            vectors.update({pid: new[k] for k, (pid, _) in enumerate(todo)})
        if vectors:
            ids = sorted(vectors)
            store.set_embeddings(ids, np.stack([vectors[i] for i in ids]))
            self.forget_vectors()
            report.repaired.append(f"gave {len(ids)} passages their own vectors again "
                                   f"({len(ids) - len(todo)} from passages of the same text, "
                                   f"{len(todo)} embedded again)")

    def _check_hnsw(self, dim: int, n_passages: int, report: DoctorReport, *,
                    full: bool = False) -> str | None:
        if not self.hnsw_path.exists():
            return f"{HNSW_FILE} is missing" if n_passages else None
        if self.store.get_meta("vectors_rebuild") == "1":
            return f"{HNSW_FILE} was left mid-rebuild"
        check = self.file_check()
        if check is None:
            return f"{HNSW_FILE} has no recorded checksum (made by an older version)"
        if not check.matches(self.hnsw_path):
            return f"{HNSW_FILE} does not match its recorded size and checksum (damaged)"
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
        wrong = self._sample_vectors(vi, sorted(store_ids), dim,
                                     n=len(store_ids) if full else SAMPLE)
        report.info["hnsw_vectors_checked"] = min(len(store_ids), SAMPLE) if not full \
            else len(store_ids)
        if wrong:
            what = "passages" if full else "sampled passages"
            return f"{HNSW_FILE} holds other vectors than the store for {wrong} {what}"
        self._vectors = vi  # sound and current: later calls need not load it again
        return None

    def _sample_vectors(self, vi: VectorIndex, ids: list[int], dim: int, n: int = SAMPLE
                        ) -> int:
        """How many of ``n`` sampled passages (all of them when ``n`` is as many as there
        are) have another vector in the HNSW file than in the store."""
        import random

        import numpy as np

        batches = self.store.vectors(dim=dim) if n >= len(ids) else \
            self.store.vectors(random.Random(0).sample(ids, n), dim=dim)
        wrong = 0
        for got_ids, stored in batches:
            held = vi.items(got_ids.tolist())
            norms = np.linalg.norm(stored, axis=1) * np.linalg.norm(held, axis=1)
            cos = (held * stored).sum(1) / np.maximum(norms, 1e-12)
            wrong += int((cos < 0.999).sum())
        return wrong

    def writer_active(self) -> bool:
        """Whether another process holds the writer's lock now."""
        if self._lock_file is not None:
            return False
        try:
            with open(self.dir / LOCK_FILE, "a+") as f:
                try:
                    fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    return True
                fcntl.flock(f, fcntl.LOCK_UN)
        except OSError:
            return False
        return False

    def _paths(self) -> list[Path]:
        return [self.dir, *(p for p in self.dir.iterdir())]

    def _loose_permissions(self) -> list[str]:
        out = []
        for p in self._paths():
            try:
                if p.stat().st_mode & 0o077:
                    out.append(p.name)
            except OSError:
                continue
        return out

    def _tighten_permissions(self) -> None:
        for p in self._paths():
            try:
                os.chmod(p, 0o700 if p.is_dir() else 0o600)
            except OSError:
                continue
