"""Stage 6: hybrid retrieval — HNSW nearest neighbours and FTS5 BM25, fused by RRF.

Reciprocal rank fusion: score(p) = Σ_r 1 / (k + rank_r(p)) over the retrievers that
returned p (k = 60 by default). With ``keep_top``, the first few of each retriever are
always among the hits (in place of the last fused ones): a passage that alone holds a rare
word of the question ("PEP 723") is BM25's first but can fuse below twenty passages of a
longer document that both retrievers like, and the relevance estimator that reranks the
hits never sees it. Each retriever can also be used alone. Every hit carries
the cosine similarity of its passage to the question (from the stored vector), which
later stages use as a calibrated-enough relevance signal.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from ragctl.config import Settings
from ragctl.errors import RagctlError
from ragctl.models import registry as models
from ragctl.models.backends import Embedder
from ragctl.records import Hit
from ragctl.store.collection import Collection

Mode = Literal["hybrid", "vector", "bm25"]
MODES: tuple[Mode, ...] = ("hybrid", "vector", "bm25")


class Retriever:
    """Searches one collection; the embedder is the one the index was built with."""

    def __init__(self, collection: Collection, embedder: Embedder | None = None) -> None:
        self.collection = collection
        self._embedder = embedder
        self._last: tuple[str, np.ndarray] | None = None  # the last query and its vector

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            name = self.collection.embedder_name
            if not name:
                raise RagctlError(f"index {self.collection.name!r} is empty; "
                                  "add documents with: ragctl index PATH")
            self._embedder = models.load("embedder", name, self.collection.settings,
                                         light=True)
        return self._embedder

    def query_vector(self, query: str) -> np.ndarray:
        """The embedding of ``query``. The last one is kept: the stages that read the
        question (its kind, the table operation) and the search embed it once."""
        query = query.strip()
        if self._last is None or self._last[0] != query:
            self._last = (query, self.embedder.embed([query])[0])
        return self._last[1]

    def search(self, query: str, *, limit: int = 10, mode: Mode = "hybrid",
               depth: int | None = None, keep_top: int = 0) -> list[Hit]:
        """The ``limit`` best passages for ``query`` (with the first ``keep_top`` of each
        retriever among them)."""
        query = query.strip()
        if not query:
            raise RagctlError("the query is empty")
        if mode not in MODES:
            raise RagctlError(f"unknown search mode {mode!r}; choose one of {', '.join(MODES)}")
        store = self.collection.store
        n = store.count("passages")
        if n == 0:
            raise RagctlError(f"index {self.collection.name!r} is empty; "
                              "add documents with: ragctl index PATH")
        depth = min(n, depth or max(limit * 3, 50))
        k_rrf = self.collection.settings.rrf_k

        qvec: np.ndarray | None = None
        if mode in ("hybrid", "vector"):
            qvec = self.query_vector(query)
        ranking = self.collection.ranked(qvec, query, depth, mode)
        vector_ranked, bm25_ranked = ranking.vector, ranking.bm25
        fused = ranking.fused
        if fused is None:
            fused = {}
            for ranked in (vector_ranked, bm25_ranked):
                for rank, pid in enumerate(ranked, start=1):
                    fused[pid] = fused.get(pid, 0.0) + 1.0 / (k_rrf + rank)
        order = sorted(fused, key=lambda p: -fused[p])
        records = store.passages(order[: limit * 2])
        order = [p for p in order if p in records][:limit]  # ids the store no longer has
        if keep_top and mode == "hybrid":
            must = [p for p in dict.fromkeys(p for ranked in (bm25_ranked, vector_ranked)
                                             for p in ranked[:keep_top]) if p not in order]
            records.update(store.passages(must))
            must = [p for p in must if p in records]
            if must:
                order = sorted(order[:max(0, limit - len(must))] + must,
                               key=lambda p: -fused.get(p, 0.0))
        sims: dict[int, float] = {}
        if qvec is not None and order:
            dim = int(qvec.shape[0])
            for ids, vecs in store.vectors(order, dim=dim):
                for pid, s in zip(ids.tolist(), (vecs @ qvec).tolist(), strict=True):
                    sims[int(pid)] = float(s)
        vrank = {p: i for i, p in enumerate(vector_ranked, start=1)}
        brank = {p: i for i, p in enumerate(bm25_ranked, start=1)}
        hits = []
        for pid in order:
            r = records[pid]
            hits.append(Hit(
                passage_id=pid, score=round(fused.get(pid, 0.0), 6), similarity=sims.get(pid),
                vector_rank=vrank.get(pid), bm25_rank=brank.get(pid), **r.span()))
        return hits


def search_index(settings: Settings, query: str, *, mode: str = "hybrid") -> list[Hit]:
    """The ``settings.search_limit`` best passages of the index of ``settings``."""
    if mode not in MODES:
        raise RagctlError(f"unknown search mode {mode!r}; choose one of {', '.join(MODES)}")
    with Collection.open(settings) as collection:
        return Retriever(collection).search(query, limit=settings.search_limit,
                                            mode=mode)
