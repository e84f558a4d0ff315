"""``ragctl doctor``: check an index and repair it, reading files again where needed.

The checks are the store's (:meth:`ragctl.store.collection.Collection.doctor`); repairing
a passage whose text was damaged on disk means reading its file again (the write path),
and a passage whose stored vector is wrong is embedded again with the index's own model,
so those two repairs are handed to the store from here.
"""

from __future__ import annotations

from typing import Any

from ragctl.config import Settings, index_dir
from ragctl.errors import DamagedIndexError
from ragctl.store.collection import Collection, DoctorReport, Repairs


def _reread(collection: Collection, paths: list[str]) -> None:
    from ragctl.index.indexer import Indexer

    Indexer(collection).reread(paths)


def _embed(collection: Collection, texts: list[str]) -> Any:
    from ragctl.models import registry as models

    name = collection.embedder_name or ""
    settings = collection.settings.replace(embedder=name)
    embedder = models.load("embedder", name, settings, light=True)
    return embedder.embed(texts, batch_size=settings.embed_batch_size)


REPAIRS = Repairs(reread=_reread, embed=_embed)


def check_index(settings: Settings, *, repair: bool = True, full: bool = False
                ) -> DoctorReport:
    """``doctor``: check the index of ``settings``, repairing (under the writer's lock)
    unless ``repair`` is off; with ``full``, every vector (see :meth:`Collection.doctor`).
    A database too damaged to open is a report, not an error."""
    try:
        collection = Collection.open(settings)
    except DamagedIndexError as e:
        return DoctorReport(problems=[str(e).replace("; run: ragctl doctor", "") +
                                      "; it cannot be repaired from here: move "
                                      f"{index_dir(settings.index)} away and index the "
                                      "folders again, or restore a backup"])
    with collection:
        if repair:
            collection.lock()
        return collection.doctor(repair=repair, full=full, repairs=REPAIRS)
