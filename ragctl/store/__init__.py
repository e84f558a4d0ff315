"""The index on disk: documents, passages, sentences, vectors and runs.

``sqlite`` holds the SQL (SQLite with FTS5, migrations, doctor's checks), ``vectors`` the
HNSW file saved atomically, ``postgres`` the same store in PostgreSQL with pgvector for a
shared index, and ``collection`` one named index: its store, its vectors and its lock.
Nothing here reads documents or loads a model's weights.
"""
