"""`ragctl mcp`: the tools listed and called through the official SDK's client over stdio."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragctl.cli import cli

ROOT = Path(__file__).resolve().parents[1]
CHILD = ("import sys; sys.path.insert(0, {root!r}); import tests.conftest; "
         "from ragctl.cli import cli; cli()")


def test_tools_through_the_sdk_client(ragctl_home: Path, fake_embedder: str, tmp_path: Path,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from mcp import Client, StdioServerParameters

    monkeypatch.setenv("RAGCTL_GENERATOR", "fake-gen")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "boiler.txt").write_text("The boiler was serviced on 3 March 2025 by Hale & Sons.\n")
    assert CliRunner().invoke(cli, ["index", str(docs), "-q"]).exit_code == 0
    params = StdioServerParameters(command=sys.executable,
                                   args=["-c", CHILD.format(root=str(ROOT)), "mcp"],
                                   env=dict(os.environ), cwd=str(ROOT))

    async def session() -> tuple[list[str], dict, dict]:
        async with Client(params, read_timeout_seconds=120) as client:
            tools = [t.name for t in (await client.list_tools()).tools]
            found = await client.call_tool("search", {"query": "boiler serviced", "limit": 3})
            asked = await client.call_tool("ask", {"question": "Who serviced the boiler?"})
            return tools, found.structured_content or {}, asked.structured_content or {}

    tools, found, asked = asyncio.run(session())
    assert sorted(tools) == ["ask", "ask_long", "search"]
    hit = found["hits"][0]
    assert hit["path"] == str(docs / "boiler.txt")
    text = (docs / "boiler.txt").read_text()
    assert text[hit["start_char"]:hit["end_char"]].strip() == hit["text"]
    assert asked["question"] == "Who serviced the boiler?"
    assert "abstained" in asked and isinstance(asked["sources"], list)
