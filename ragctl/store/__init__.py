"""The index on disk: documents, passages, sentences, vectors and runs.

``base`` holds the protocols every backend implements (:class:`~ragctl.store.base.Collection`,
:class:`~ragctl.store.base.Store`) and the records they hand back; ``sqlite`` holds the SQL
(SQLite with FTS5, migrations, doctor's checks), ``vectors`` the HNSW file saved
atomically, ``local`` one named index in a folder (its SQLite store, its vectors and its
lock), ``postgres`` the same index in PostgreSQL with pgvector for a shared index, and
``collection``, above both backends, opens the one that ``settings.store`` names.
Nothing here reads documents or loads a model's weights.
"""
