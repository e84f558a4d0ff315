"""One named index, whichever store holds it: :class:`Collection` and what is done with
any index (does it exist, its status, its log).

A local index (no ``store`` setting) is a folder with a SQLite file, an HNSW file and a
writer's lock (:class:`ragctl.store.local.SqliteCollection`); with ``store`` set to a
``postgresql://`` URL it is a schema in that database
(:class:`ragctl.store.postgres.PgCollection`). Both implement the protocol
:class:`ragctl.store.base.Collection`; this module sits above both and picks one.
"""

from __future__ import annotations

import shutil
from typing import Any, Protocol

from ragctl.config import Settings, index_dir
from ragctl.errors import RagctlError
from ragctl.store.base import (
    Claims,
    CollectionBase,
    DoctorReport,
    Ranking,
    Repairs,
    SoleWriterClaims,
)
from ragctl.store.base import Collection as CollectionProtocol
from ragctl.store.local import (
    DB_FILE,
    HNSW_FILE,
    LOCK_FILE,
    SAMPLE,
    SqliteCollection,
    list_indexes,
)
from ragctl.store.postgres import PgCollection, PgStore, connect, is_url, redact, schema_exists
from ragctl.store.sqlite import Store

# what callers imported from here before the split stays importable from here
__all__ = [
    "BACKENDS", "DB_FILE", "HNSW_FILE", "LOCK_FILE", "SAMPLE", "Claims", "Collection",
    "CollectionBase", "DoctorReport", "PgCollection", "Ranking", "Repairs",
    "SoleWriterClaims", "SqliteCollection", "exists", "index_logs", "index_status",
    "list_indexes", "open_shared", "remove_if_empty", "status",
]


class Collection(CollectionProtocol, Protocol):
    """The type of an open index, whichever its store (:class:`ragctl.store.base.Collection`),
    and the way to open one: :meth:`open` picks the backend from ``settings.store``."""

    @classmethod
    def open(cls, settings: Settings, *, create: bool = False) -> Collection:
        """Open (or, with ``create``, make) the index of ``settings``. An index that
        cannot be written is opened read-only: searching and asking work, writing does
        not (:meth:`lock` says so). With ``settings.store`` set to a PostgreSQL URL the
        index lives in that database (:class:`ragctl.store.postgres.PgCollection`),
        otherwise in a folder (:class:`ragctl.store.local.SqliteCollection`)."""
        if settings.store:
            return open_shared(settings, create=create)
        return SqliteCollection.open(settings, create=create)


# Every backend; mypy checks here that each is a Collection (the protocol, to the letter).
BACKENDS: tuple[type[Collection], ...] = (SqliteCollection, PgCollection)


def open_shared(settings: Settings, *, create: bool = False) -> Collection:
    if not is_url(settings.store):
        raise RagctlError(f"store must be a postgresql:// URL, not {redact(settings.store)!r}")
    return PgCollection.open(settings, create=create)


def exists(settings: Settings) -> bool:
    """Whether the index of ``settings`` exists."""
    if settings.store:
        conn = connect(settings.store)
        try:
            return schema_exists(conn, settings.index)
        finally:
            conn.close()
    return (index_dir(settings.index) / DB_FILE).exists()


def remove_if_empty(settings: Settings) -> None:
    """Remove the index of ``settings`` when it holds no document (a first run that
    indexed nothing leaves no empty index behind)."""
    if settings.store:
        try:
            with PgStore(settings.store, settings.index) as store:
                if store.count("documents") == 0:
                    store.conn.execute(f'DROP SCHEMA "{store.schema}" CASCADE')
        except RagctlError:
            pass
        return
    path = index_dir(settings.index)
    db = path / DB_FILE
    if not db.exists():
        return
    try:
        with Store(db) as store:
            empty = store.count("documents") == 0
    except RagctlError:
        return
    if empty:
        shutil.rmtree(path, ignore_errors=True)


def status(collection: Collection) -> dict[str, Any]:
    """Counts, sizes on disk, models and the last run of one index."""
    store = collection.store
    sizes = collection.bytes_on_disk()
    meta = store.meta()
    formats = store.format_counts()
    last = store.last_run()
    if last is not None and last["status"] == "running" and not collection.writer_active():
        last["status"] = "interrupted"  # its process was killed; the next run closes it
    integrity = store.integrity(quick=True)
    check = collection.file_check()
    unread = store.unread_changes  # (a PostgreSQL store reads all: None)
    hnsw = collection.hnsw_path
    # a file newer than what can be read here (changes left in the WAL) is not damaged
    hnsw_ok = check is None or hnsw is None or not hnsw.exists() or unread is not None \
        or check.matches(hnsw)
    from collections import Counter

    from ragctl.text import skip_kind

    recorded = list(store.skips().values())
    skips = [r for r in recorded if not r["partial"]]
    reasons = dict(Counter(skip_kind(str(r["reason"])) for r in skips))
    return {
        "index": collection.name,
        "path": collection.location,
        "documents": store.count("documents"),
        "skipped": len(skips),
        "skipped_reasons": reasons,
        "read_in_part": len(recorded) - len(skips),
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
        "last_run": last,
        "read_only": store.readonly,
        "unread_changes": unread,
        "damaged": [*([f"database: {integrity}"] if integrity != "ok" else []),
                    *([] if hnsw_ok else [f"{HNSW_FILE} does not match its checksum"])],
    }


def index_status(settings: Settings) -> dict[str, Any]:
    """:func:`status` of the index of ``settings``."""
    with Collection.open(settings) as collection:
        return status(collection)


def index_logs(settings: Settings, *, limit: int = 20, query: str | None = None
               ) -> list[dict[str, Any]]:
    """The questions asked of the index of ``settings`` (``ragctl logs``)."""
    with Collection.open(settings) as collection:
        return collection.store.logs(limit, query=query)
