"""Markdown and reStructuredText markup turned into spaces, so that ``**``, link targets,
``.. code-block::`` lines and the like never reach a sentence shown to a person, while
every character keeps its place: the text has the same length as the file, so a
sentence's offsets still point into the file (whitespace is normalized afterwards, as for
any text). Code inside fences and literal blocks is kept as written.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

FENCE = re.compile(r"^[ \t]*(```|~~~)")  # a code fence, also indented inside a list item


def _blank(m: re.Match[str]) -> str:
    return re.sub(r"[^\n]", " ", m.group())


def _keep_group(name: str) -> Callable[[re.Match[str]], str]:
    """Blank a match except its named group."""

    def sub(m: re.Match[str]) -> str:
        start, end = m.span(name)
        whole = m.group()
        a, b = start - m.start(), end - m.start()
        return " " * a + whole[a:b] + " " * (len(whole) - b)

    return sub


# ----------------------------------------------------------------------------- Markdown

_MD_CODE = re.compile(r"(?P<q>`+)(?P<t>[^`\n]+?)(?P=q)")  # `code`, ``code``
_MD_LINE = [  # (pattern, replacement) applied to each line outside code fences
    (re.compile(r"^[ \t]*\[(?!\^)[^\]\n]+\]:[ \t]+\S.*$"), _blank),  # [ref]: http://...
    (re.compile(r"^[ \t]*\[\^[^\]\s]+\]:"), _blank),  # "[^1]:" before a footnote's text
    (re.compile(r"^[ \t]*(?:[-*_][ \t]*){3,}$"), _blank),  # horizontal rule
    (re.compile(r"^[ \t]*\|?[ \t]*:?-{3,}:?[ \t]*(?:\|[ \t]*:?-{3,}:?[ \t]*)*\|?[ \t]*$"),
     _blank),  # table alignment row
    (re.compile(r"^[ \t]*(?:>[ \t]?)+"), _blank),  # block quote markers
    (re.compile(r"<!--.*?-->"), _blank),
    (re.compile(r"\[\^[^\]\s]+\](?!:)"), _blank),  # a footnote reference: "GPQA [^8]"
    (re.compile(r"!\[(?P<t>[^\]\n]*)\]\([^)\n]*\)"), _keep_group("t")),  # image: alt text
    (re.compile(r"\[(?P<t>[^\]\n]+)\]\([^)\n]*\)"), _keep_group("t")),  # [text](url)
    (re.compile(r"\[(?P<t>[^\]\n]+)\]\[[^\]\n]*\]"), _keep_group("t")),  # [text][ref]
    (re.compile(r"<(?P<t>(?:https?|mailto):[^>\s]+)>"), _keep_group("t")),  # <http://..>
    (re.compile(r"</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>\n]*)?/?>"), _blank),  # inline HTML tags
    (re.compile(r"(?<!\w)(\*\*|__)(?=\S)(?P<t>.+?)(?<=\S)\1(?!\w)"), _keep_group("t")),
    (re.compile(r"(?<![\w*])\*(?=[^\s*])(?P<t>[^*\n]+?)(?<=[^\s*])\*(?![\w*])"),
     _keep_group("t")),
    (re.compile(r"(?<![\w_])_(?=[^\s_])(?P<t>[^_\n]+?)(?<=[^\s_])_(?![\w_])"),
     _keep_group("t")),
    (re.compile(r"~~(?=\S)(?P<t>.+?)(?<=\S)~~"), _keep_group("t")),
    (_MD_CODE, _keep_group("t")),  # `code`
]


def plain_markdown(text: str) -> str:
    """``text`` with Markdown markup replaced by spaces (same length, same lines). List
    bullets stay: the sentence splitter ends a sentence at each list item and leaves its
    bullet out."""
    out: list[str] = []
    in_fence = False
    for line in text.split("\n"):
        if FENCE.match(line):
            in_fence = not in_fence
            out.append(" " * len(line))
            continue
        if in_fence:
            out.append(line)
            continue
        out.append(_code_kept(line, _MD_CODE, _MD_LINE))
    return "\n".join(out)


_HIDDEN = "\ue000"  # stands in for the text of a code span while the markup rules run
_Rule = tuple[re.Pattern[str], Callable[[re.Match[str]], str]]


def _code_kept(line: str, code: re.Pattern[str], rules: list[_Rule]) -> str:
    """``rules`` applied to ``line`` with the text of its code spans (``code``'s group
    ``t``) hidden from them: `__doc__` and `**kwargs` stay as written."""
    spans = [m.span("t") for m in code.finditer(line)]
    masked = line
    for a, b in spans:
        masked = masked[:a] + _HIDDEN * (b - a) + masked[b:]
    for pattern, repl in rules:
        masked = pattern.sub(repl, masked)
    if not spans:
        return masked
    chars = list(masked)
    for a, b in spans:
        for i in range(a, b):
            if chars[i] == _HIDDEN:
                chars[i] = line[i]
    return "".join(chars)


# --------------------------------------------------------------------- reStructuredText

def _numbered(m: re.Match[str]) -> str:
    """":pep:`8`" as " pep  8 ": the role names what the number is (every sign kept is
    the source's own, in its place)."""
    keep = {*range(*m.span("r")), *range(*m.span("n"))}
    return "".join(c if m.start() + i in keep else " " for i, c in enumerate(m.group()))


_RST_DIRECTIVE = re.compile(r"^([ \t]*)\.\.[ \t]+([\w:.-]+)::(.*)$")
_RST_COMMENT = re.compile(r"^[ \t]*\.\.(?:[ \t]+(?!\S+::)|$).*$")  # .. comment / .. _label:
_RST_OPTION = re.compile(r"^[ \t]+:[\w-]+:.*$")
_RST_ANONYMOUS_TARGET = re.compile(r"^[ \t]*__[ \t]+\S.*$")  # __ https://...
# directives whose argument is not prose (a language, a file, a target)
_RST_NOT_PROSE = {"code-block", "code", "sourcecode", "highlight", "image", "figure",
                  "include", "literalinclude", "toctree", "contents", "raw", "index",
                  "csv-table", "list-table", "table", "autoclass", "automodule",
                  "autofunction", "only", "ifconfig", "role", "default-role", "sectnum",
                  "header", "footer", "meta", "class", "container"}
_RST_CODE = {"code-block", "code", "sourcecode", "literalinclude", "parsed-literal", "raw",
             "doctest", "productionlist"}
_RST_CODE_SPAN = re.compile(r"``(?P<t>[^`\n]+?)``")
_RST_INLINE = [
    (re.compile(r"`(?P<t>[^`<\n]+?)[ \t]*<[^>\n]+>`__?"), _keep_group("t")),  # `t <url>`_
    (re.compile(r":(?P<r>pep|rfc):`(?P<n>\d+)(?:#[^`\n]*)?`", re.I),
     _numbered),  # :pep:`8` is "PEP 8", :rfc:`2822` "RFC 2822"
    (re.compile(r":[\w:+-]+:`(?P<t>[^`<\n]+?)(?:[ \t]*<[^>\n]*>)?`"),
     _keep_group("t")),  # :role:`text` and :role:`text <target>`
    (re.compile(r"\[[^\]\s]+\]_(?!\w)"), _blank),  # footnote and citation references
    (_RST_CODE_SPAN, _keep_group("t")),
    (re.compile(r"`(?P<t>[^`\n]+)`_{1,2}(?!\w)"), _keep_group("t")),  # `text`_
    (re.compile(r"(?<![\w`])`(?P<t>[^`\n]+)`(?!\w)"), _keep_group("t")),
    (re.compile(r"(?<!\w)\*\*(?=\S)(?P<t>[^*\n]+?)(?<=\S)\*\*(?!\w)"), _keep_group("t")),
    (re.compile(r"(?<![\w*])\*(?=[^\s*])(?P<t>[^*\n]+?)(?<=[^\s*])\*(?![\w*])"),
     _keep_group("t")),
    (re.compile(r"(?<!\S)(?P<tok>\S*?[A-Za-z0-9])(?P<u>_{1,2})(?=[\s.,;:)]|$)"),
     lambda m: m.group() if m.group("tok").startswith("_")  # __doc__ is no reference
     else m.group("tok") + " " * len(m.group("u"))),  # reference_ / anonymous__
]


def plain_rst(text: str) -> str:
    """``text`` with reStructuredText markup replaced by spaces (same length, same lines):
    directive and comment lines, directive options, roles, link targets, emphasis and
    literal markers; a paragraph's closing ``::`` becomes ``:``. List bullets stay, as in
    :func:`plain_markdown`."""
    lines = text.split("\n")
    out: list[str] = []
    in_options = False
    literal: int | None = None  # the indent a literal block must exceed, inside one
    for line in lines:
        indent = len(line) - len(line.lstrip())
        if literal is not None:
            if not line.strip() or indent > literal:
                if in_options and line.strip() and _RST_OPTION.match(line):
                    out.append(" " * len(line))  # :linenos: and other options
                    continue
                in_options = False
                out.append(line)  # code and literal text stay as written
                continue
            literal = None
        m = _RST_DIRECTIVE.match(line)
        if m:
            name = m.group(2).split(":")[-1]
            if name in _RST_NOT_PROSE or not m.group(3).strip():
                out.append(" " * len(line))
            else:  # ".. note:: Keep this" keeps its text
                out.append(" " * (len(line) - len(m.group(3))) + m.group(3))
            in_options = True
            if name in _RST_CODE:
                literal = indent
            continue
        if in_options and _RST_OPTION.match(line):
            out.append(" " * len(line))
            continue
        in_options = False
        if line.rstrip().endswith("::"):
            literal = indent
        if _RST_COMMENT.match(line) or _RST_ANONYMOUS_TARGET.match(line):
            out.append(" " * len(line))
            continue
        stripped = line.rstrip()
        if stripped.endswith("::"):
            cut = len(stripped) - 1 if stripped[:-2].strip() else len(stripped) - 2
            line = line[:cut] + " " * (len(line) - cut)
        out.append(_code_kept(line, _RST_CODE_SPAN, _RST_INLINE))
    return "\n".join(out)


# A Markdown (GitHub) table: a header row of cells between pipes, a delimiter row of
# dashes ("| :--: | --- |"), then rows, up to a line without a pipe
_DELIMITER = re.compile(r"^[ \t]*\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$")
_CELL_BAR = re.compile(r"(?<!\\)\|")


@dataclass(frozen=True)
class PipeTable:
    """A Markdown table: where it is in the text (``start``, ``end``, its lines) and its
    rows of plain cells, the header first."""

    start: int
    end: int
    rows: list[list[str]]


def pipe_tables(text: str) -> list[PipeTable]:
    """The tables of a Markdown text (outside code fences), each cell without its markup
    ("[18.x][]" is "18.x", "**Active LTS**" is "Active LTS")."""
    lines = text.split("\n")
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    tables: list[PipeTable] = []
    in_fence = False
    i = 0
    while i < len(lines) - 1:
        line = lines[i]
        if FENCE.match(line):
            in_fence = not in_fence
        if in_fence or "|" not in line or "|" not in lines[i + 1] \
                or not _DELIMITER.match(lines[i + 1]):
            i += 1
            continue
        end = i + 2
        while end < len(lines) and "|" in lines[end] and lines[end].strip():
            end += 1
        rows = [_pipe_cells(ln) for k, ln in enumerate(lines[i:end]) if k != 1]
        if len(rows[0]) >= 2:
            tables.append(PipeTable(starts[i], starts[end] - 1, rows))
        i = end
    return tables


def _pipe_cells(line: str) -> list[str]:
    row = line.strip()
    row = row[1:] if row.startswith("|") else row
    row = row[:-1] if row.endswith("|") and not row.endswith("\\|") else row
    return [" ".join(plain_markdown(c.replace("\\|", "|")).split())
            for c in _CELL_BAR.split(row)]
