"""Stage 5a: the approximate nearest-neighbour index (hnswlib, cosine) on disk.

Labels are passage ids. The file is always replaced atomically and verified: written to a
temporary file, fsynced, loaded back and counted, then renamed; its size, SHA-256 and count
go into the store (:class:`FileCheck`), and a file that does not match them is never
loaded (a damaged HNSW file can crash the process that reads it). The store keeps every
vector too, and a journal of the changes not yet saved here, so this file can always be
brought up to date or rebuilt without re-embedding. A full disk leaves the previous file.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ragctl.errors import RagctlError, missing_dependency


@dataclass(frozen=True)
class FileCheck:
    """What a saved HNSW file must be: its size, SHA-256 and number of elements."""

    size: int
    sha256: str
    count: int

    def matches(self, path: Path) -> bool:
        try:
            return path.stat().st_size == self.size and file_sha256(path) == self.sha256
        except OSError:
            return False

    def to_dict(self) -> dict[str, Any]:
        return {"size": self.size, "sha256": self.sha256, "count": self.count}


def file_sha256(path: Path) -> str:
    import hashlib

    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


@dataclass(frozen=True)
class HnswParams:
    m: int = 16
    ef_construction: int = 200
    ef: int = 100


def _hnswlib() -> Any:
    try:
        import hnswlib
    except ImportError:
        raise missing_dependency("hnswlib", "index") from None
    return hnswlib


ADOPT_BYTES = 256_000_000  # above this, save() reads the file back instead of a second copy


class VectorIndex:
    """An hnswlib index of unit vectors; grows itself and saves atomically."""

    def __init__(self, dim: int, params: HnswParams | None = None, *,
                 capacity: int = 1024) -> None:
        self.dim = dim
        self.params = params or HnswParams()
        self._index = _hnswlib().Index(space="cosine", dim=dim)
        self._index.init_index(max_elements=max(capacity, 16),
                               ef_construction=self.params.ef_construction,
                               M=self.params.m, random_seed=42)
        self._index.set_ef(self.params.ef)
        self.dirty = False

    @classmethod
    def load(cls, path: Path, dim: int, params: HnswParams | None = None) -> VectorIndex:
        self = cls.__new__(cls)
        self.dim = dim
        self.params = params or HnswParams()
        self._index = _hnswlib().Index(space="cosine", dim=dim)
        self._index.load_index(str(path), max_elements=0)
        self._index.set_ef(self.params.ef)
        self.dirty = False
        return self

    @property
    def capacity(self) -> int:
        return int(self._index.max_elements)

    @property
    def element_count(self) -> int:
        """Elements ever added, deleted ones included."""
        return int(self._index.element_count)

    def labels(self) -> list[int]:
        """Every label the index holds, deleted ones included."""
        return [int(x) for x in self._index.get_ids_list()]

    def is_live(self, label: int) -> bool:
        try:
            self._index.get_items([int(label)])
        except RuntimeError:
            return False
        return True

    @property
    def usable(self) -> bool:
        """False after a failed save let go of the vectors (see :meth:`save`)."""
        return self._index is not None

    def nbytes(self) -> int:
        """About how much memory the index takes (vectors and bottom-level links)."""
        return self.capacity * (self.dim * 4 + 8 * self.params.m + 16)

    def reserve(self, n: int) -> None:
        """Room for ``n`` elements in all, made at once (growing step by step while a large
        file is added would hold the old and the new buffer several times)."""
        if n > self.capacity:
            self._index.resize_index(n)

    def add(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        if len(ids) == 0:
            return
        needed = self.element_count + len(ids)
        if needed > self.capacity:
            self._index.resize_index(max(needed, int(self.capacity * 1.5)))
        self._index.add_items(np.asarray(vectors, dtype=np.float32),
                              np.asarray(ids, dtype=np.int64))
        self.dirty = True

    def delete(self, ids: Iterable[int]) -> int:
        """Mark labels deleted; labels absent or already deleted are ignored."""
        n = 0
        for label in ids:
            try:
                self._index.mark_deleted(int(label))
                n += 1
            except RuntimeError:
                pass
        if n:
            self.dirty = True
        return n

    def search(self, vector: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Up to ``k`` (labels, cosine similarities), best first."""
        if k <= 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        self._index.set_ef(max(self.params.ef, k))
        while True:
            try:
                labels, dist = self._index.knn_query(
                    np.asarray(vector, dtype=np.float32).reshape(1, -1), k=k)
                return labels[0].astype(np.int64), (1.0 - dist[0]).astype(np.float32)
            except RuntimeError:
                # fewer live elements than k: ask for fewer
                if k == 1:
                    return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
                k -= 1

    def items(self, ids: Iterable[int]) -> np.ndarray:
        """The stored (unit-length) vectors of these labels."""
        return np.asarray(self._index.get_items([int(i) for i in ids]), dtype=np.float32)

    def save(self, path: Path) -> FileCheck:
        """Write atomically and verified: temporary file, fsync, load it back and count its
        elements, rename, fsync the directory. A full disk or a short write raises with
        the previous file in place."""
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        try:
            self._index.save_index(str(tmp))
            fd = os.open(tmp, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
            os.chmod(tmp, 0o600)
            count = self.element_count
            check = FileCheck(tmp.stat().st_size, file_sha256(tmp), count)
            if self.nbytes() > ADOPT_BYTES:
                # Too big to hold twice: let go of this copy and keep the one read back
                # (if that fails, the caller reloads the previous file and its journal).
                self._index = None
                import gc

                gc.collect()
            try:
                back = VectorIndex.load(tmp, self.dim, self.params)
            except (RuntimeError, OSError, ValueError) as e:
                raise OSError(f"the file written is incomplete ({e})") from None
            if back.element_count != count:
                raise OSError(f"the file written holds {back.element_count} vectors, "
                              f"not {count}")
            if self._index is None:
                self._index = back._index
            del back
            os.replace(tmp, path)
        except OSError as e:
            tmp.unlink(missing_ok=True)
            need = self.element_count * (self.dim * 4 + 8 * self.params.m + 16)
            raise RagctlError(
                f"cannot save {path} ({getattr(e, 'strerror', None) or e}); it needs about "
                f"{need / 1e6:.0f} MB free; the previous file is kept") from None
        dfd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
        self.dirty = False
        return check
