"""Stage 5a: the approximate nearest-neighbour index (hnswlib, cosine) on disk.

Labels are passage ids. The file is always replaced atomically (write a temporary
file, fsync, rename), so a crash leaves either the old or the new file, never half of
one. The store keeps every vector too, and a journal of the changes not yet saved here,
so this file can always be brought up to date or rebuilt without re-embedding.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .errors import missing_dependency


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

    def save(self, path: Path) -> None:
        """Write atomically: temporary file, fsync, rename, fsync the directory."""
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        self._index.save_index(str(tmp))
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
        dfd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
        self.dirty = False
