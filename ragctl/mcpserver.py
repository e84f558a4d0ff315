"""``ragctl mcp``: the indexed documents as Model Context Protocol tools, over stdio.

Three tools, built with the official ``mcp`` SDK: ``search`` (passages with file paths and
character offsets), ``ask`` (a short answer quoted from the documents, with its citations,
or ``abstained: true`` when they do not hold it) and ``ask_long`` (a few cited sentences).
A running ``ragctl serve`` for the same home answers them; otherwise this process loads
the models once and keeps them for the session. stdout carries the protocol alone: every
log line goes to stderr.
"""

from __future__ import annotations

import os
from typing import Any

from .config import load_settings
from .errors import RagctlError

INSTRUCTIONS = (
    "Search and question the user's own indexed documents (PDFs, notes, mail, web pages). "
    "Every answer cites its sources with file paths and character offsets; an answer with "
    "abstained=true means the documents do not hold it: say so rather than guess.")


def _citations(sources: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: s.get(k) for k in ("number", "path", "title", "place", "start_char", "end_char",
                                   "text", "answer_start", "answer_end")} for s in sources]


def build_server() -> Any:
    from dataclasses import asdict

    from mcp.server.mcpserver import MCPServer

    from . import __version__
    from .service import Backend

    backend = Backend()
    server = MCPServer("ragctl", version=__version__, instructions=INSTRUCTIONS,
                       log_level="WARNING")

    def settings(index: str | None, **overrides: Any) -> dict[str, Any]:
        return asdict(load_settings(index=index, **overrides))

    @server.tool()
    def search(query: str, limit: int = 5, index: str | None = None) -> dict[str, Any]:
        """Find the passages of the user's documents that best match a query. Each hit has
        the file path, its place (page, heading, mail subject) and character offsets."""
        out = backend.call("/search", {"settings": settings(index, search_limit=limit),
                                       "query": query, "mode": "hybrid"})
        return {"query": query, "hits": [
            {k: h.get(k) for k in ("path", "title", "place", "start_char", "end_char", "text",
                                   "score")} for h in out["hits"]]}

    @server.tool()
    def ask(question: str, index: str | None = None) -> dict[str, Any]:
        """Answer a question from the user's documents: a short answer quoted from one of
        their sentences, with citations (path, offsets). abstained=true: not in them."""
        out = backend.call("/ask", {"settings": settings(index), "question": question,
                                    "log": True})
        return {"question": question, "answer": out.get("answer", ""),
                "abstained": out.get("abstained", False),
                "abstain_reason": out.get("abstain_reason"),
                "confidence": out.get("confidence"),
                "sources": _citations(out.get("sources", []))}

    @server.tool()
    def ask_long(question: str, words: int = 150, index: str | None = None) -> dict[str, Any]:
        """A longer answer from the user's documents: one cited sentence per facet of the
        question, at most about ``words`` words."""
        out = backend.call("/ask", {"settings": settings(index, long_words=words),
                                    "question": question, "long": {}, "log": True})
        return {"question": question, "answer": out.get("answer", ""),
                "abstained": out.get("abstained", False),
                "abstain_reason": out.get("abstain_reason"),
                "sources": _citations(out.get("sources", []))}

    return server


def run() -> None:
    """Serve the tools on stdin/stdout until the client closes them."""
    os.environ.setdefault("OTEL_SDK_DISABLED", "true")  # nothing is ever sent anywhere
    try:
        server = build_server()
    except ImportError:
        raise RagctlError("the MCP server needs the mcp package: pip install mcp") from None
    server.run("stdio")
