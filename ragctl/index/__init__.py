"""The write path: files in, passages and vectors out.

``ingest`` finds and reads files (with ``ocr`` for scans and ``markup`` for Markdown and
reST), keeping each text's place; ``sentences`` splits them, ``chunk`` groups sentences
into passages, ``indexer`` runs the incremental, crash-safe index run into a store, and
``watch`` keeps an index current as files change.
"""
