"""Where a citation is, as a person opens it: ``path:line`` for a text file.

A sentence's offsets are offsets in the text that was indexed; for a plain text, Markdown
or reStructuredText file that text is the file's own, so the line of a citation is the
file's line. It is counted when the answer is given, from the file as it is on disk, and
only when that file is the one indexed (the same SHA-256): an edited file gives no line
rather than a wrong one. Other formats (PDF pages, web pages, mail, spreadsheets) are
placed by their page, section or sheet, and a table cell by its row and column.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from ragctl.files import line_at
from ragctl.records import Citation
from ragctl.store.base import Store

LINE_FORMATS = frozenset({"text", "markdown", "rst"})  # offsets are the file's own
MAX_READ_BYTES = 50_000_000  # a file larger than this is not read again for a line


def with_lines(store: Store, citations: Sequence[Citation]) -> list[Citation]:
    """``citations`` with the line of each one's start (of its answer, when it quotes a
    span) where its file is a text file unchanged since it was indexed."""
    files: dict[str, bytes | None] = {}
    out = []
    for c in citations:
        if c.path not in files:
            files[c.path] = _indexed_text(store, c.path)
        data = files[c.path]
        at = c.answer_start if c.answer_start is not None else c.start_char
        out.append(replace(c, line=line_at(data, at)) if data is not None else c)
    return out


def _indexed_text(store: Store, path: str) -> bytes | None:
    doc = store.document(path)
    if doc is None or doc.format not in LINE_FORMATS:
        return None
    try:
        p = Path(path)
        if p.stat().st_size > MAX_READ_BYTES:
            return None
        data = p.read_bytes()
    except OSError:
        return None
    return data if hashlib.sha256(data).hexdigest() == doc.sha256 else None
