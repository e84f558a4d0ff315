"""Writes docs/cli.md from the click commands themselves: `make docs` (or
`python docs/cli_reference.py`). tests/test_docs.py fails when docs/cli.md is stale."""

from __future__ import annotations

import sys
from pathlib import Path

import click

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

HEADER = """# Command reference

Generated from the commands' own `--help` by `make docs` (docs/cli_reference.py); edit the
docstrings and options in `ragctl/app/cli.py` and `ragctl/app/train.py`, not this file.
"""


def commands(group: click.Group, prefix: str = "ragctl") -> list[tuple[str, click.Command]]:
    """Every command under ``group``, depth first, as (full name, command)."""
    out: list[tuple[str, click.Command]] = []
    ctx = click.Context(group, info_name=prefix)
    for name in group.list_commands(ctx):
        cmd = group.get_command(ctx, name)
        if cmd is None or cmd.hidden:
            continue
        full = f"{prefix} {name}"
        out.append((full, cmd))
        if isinstance(cmd, click.Group):
            out.extend(commands(cmd, full))
    return out


def render() -> str:
    from ragctl.app.cli import cli

    parts = [HEADER]
    for full, cmd in [("ragctl", cli), *commands(cli)]:
        ctx = click.Context(cmd, info_name=full, terminal_width=100, max_content_width=100,
                            **cli.context_settings)
        parts.append(f"## `{full}`\n\n```\n{cmd.get_help(ctx).rstrip()}\n```\n")
    return "\n".join(parts)


if __name__ == "__main__":
    (HERE / "cli.md").write_text(render())
    print(f"wrote {HERE / 'cli.md'}")
