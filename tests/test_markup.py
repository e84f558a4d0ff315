"""Markdown and reStructuredText markup never reaches a sentence, and offsets stay exact."""

from __future__ import annotations

from pathlib import Path

from ragctl.index.ingest import parse
from ragctl.index.markup import plain_markdown, plain_rst
from ragctl.index.sentences import SentenceSplitter
from ragctl.text import normalize_space

MARKDOWN = """# Install `ragctl`

Run **make demo** first, then read [the guide](https://example.org/guide) or
the *FAQ*; keep snake_case_names and 2 * 3 * 4 as they are.

- Bullet one has **bold** text.
> A quoted line with `code`.

```python
x = **kwargs  # code stays as written
```

[guide]: https://example.org/guide
"""

RST = """Usage
=====

Run ``ragctl index`` as described in `the guide <https://example.org>`_ and
:pep:`8`, see [1]_ or the reference_.  An example::

    ragctl ask "what **exactly**"

.. code-block:: python
   :linenos:

   print("kept")

.. note:: Notes keep their text.

.. _reference: https://example.org/ref
"""


def test_markup_is_blanked_with_the_same_length() -> None:
    md = plain_markdown(MARKDOWN)
    assert len(md) == len(MARKDOWN) and md.count("\n") == MARKDOWN.count("\n")
    flat = " ".join(md.split())
    assert "Run make demo first, then read the guide or the FAQ ;" in flat
    assert "snake_case_names and 2 * 3 * 4" in flat
    assert "Bullet one has bold text. A quoted line with code ." in flat
    assert "x = **kwargs # code stays as written" in flat
    assert "https://example.org/guide" not in flat and "```" not in flat
    rst = plain_rst(RST)
    assert len(rst) == len(RST)
    flat = " ".join(rst.split())
    assert "Run ragctl index as described in the guide and pep 8 , see or the reference ." \
        in flat
    assert "An example: ragctl ask \"what **exactly**\"" in flat  # a literal block
    assert 'print("kept")' in flat and "linenos" not in flat and "code-block" not in flat
    assert "Notes keep their text." in flat and "example.org/ref" not in flat
    # code keeps what looks like emphasis; a dunder name keeps its underscores
    code = "Set `__doc__` or pass `**kwargs` to [`ragctl ask`](docs/ask.md), *not* __me__."
    assert " ".join(plain_markdown(code).split()) == \
        "Set __doc__ or pass **kwargs to ragctl ask , not me ."
    assert " ".join(plain_rst("Pass ``**kwargs`` or *one*.").split()) == "Pass **kwargs or one ."
    dunder = "It becomes the ``__doc__`` attribute; see ``__init__.py`` and Docutils_."
    assert " ".join(plain_rst(dunder).split()) == \
        "It becomes the __doc__ attribute; see __init__.py and Docutils ."
    # a PEP or RFC cited by number keeps the name of what it is
    roles = "As :pep:`8` says (and :rfc:`2822#section-3`), see :pep:`the index <0>`."
    assert len(plain_rst(roles)) == len(roles)
    assert " ".join(plain_rst(roles).split()) == \
        "As pep 8 says (and rfc 2822 ), see the index ."


def test_sentences_from_markup_resolve_to_the_file(tmp_path: Path) -> None:
    for name, source in (("guide.md", MARKDOWN), ("usage.rst", RST)):
        f = tmp_path / name
        f.write_text(source)
        doc = parse(f, f.read_bytes())
        splitter = SentenceSplitter()
        seen = []
        for section, spans in zip(doc.sections, splitter.split_many(
                [s.text for s in doc.sections]), strict=True):
            for span in spans:
                start, end = section.offset + span.start, section.offset + span.end
                blanked = (plain_markdown if name.endswith(".md") else plain_rst)(source)
                assert normalize_space(blanked[start:end]) == span.text
                # blanking only turns characters into spaces: the rest is the file's own
                assert all(c == " " or c == source[i]
                           for i, c in enumerate(blanked[start:end], start))
                seen.append(span.text)
        text = " ".join(seen)
        assert "**bold**" not in text and "](" not in text and ".. " not in text
    md = parse(tmp_path / "guide.md", (tmp_path / "guide.md").read_bytes())
    assert md.title == "Install ragctl"


def test_raw_offsets_invert_normalize_space_for_every_slice() -> None:
    import random

    from ragctl.text import normalize_space, raw_offsets

    rng = random.Random(1)
    words = ["FAQ", ";", "the", "guide", ".", "x", ",", "(a)", "b", "?!", "end.", "(", "[x",
             ":=", ".NET", "...", "Notes:", "?;"]
    for _ in range(400):
        raw = "".join(rng.choice(words) + rng.choice([" ", "  ", "\n", " \n  "])
                      for _ in range(rng.randint(1, 8)))
        norm = normalize_space(raw)
        assert " ;" not in norm  # a label's value "?" keeps its space, not ";"
        for a0 in range(len(norm) + 1):
            for b0 in range(a0, len(norm) + 1):
                a, b = raw_offsets(raw, a0, b0)
                assert normalize_space(raw[a:b]) == normalize_space(norm[a0:b0])


def test_operators_and_leading_dots_keep_their_space() -> None:
    """Blanked markup leaves "NAME := expr" and "use .NET"; only punctuation that closes
    ("x ;", "end )") is joined to the word before it."""
    from ragctl.text import normalize_space, raw_offsets

    assert normalize_space("the notation   NAME := expr  .") == "the notation NAME := expr."
    # a label's value that is punctuation keeps its space: "Attendance: ?" is a cell
    assert normalize_space("Attendance: ?; Notes: ?") == "Attendance: ?; Notes: ?"
    assert normalize_space("its Date: , From: ) and Subject:") == "its Date:, From:) and Subject:"
    assert normalize_space("use .NET or x != y , and .5 ...") == "use .NET or x != y, and .5..."
    # a sentence stored by an earlier version, which joined ":=" to the word before it
    raw = "the notation   NAME := expr  ."
    old = "the notation NAME:= expr."
    a, b = raw_offsets(raw, old.index("NAME"), old.index("expr") + 4, old)
    assert raw[a:b] == "NAME := expr"


def test_a_list_item_is_a_sentence_of_its_own_without_its_bullet(tmp_path: Path) -> None:
    splitter = SentenceSplitter()
    text = ("The council consists of:\n\n* Barry Warsaw\n* Donghee Na\n\nIt shall:\n"
            "- Maintain the quality of the language and\n  its interpreter,\n"
            "1. Install it.\n2) Run it\nThe end.")
    spans = splitter.split(text)
    assert [s.text for s in spans] == [
        "The council consists of:", "Barry Warsaw", "Donghee Na", "It shall:",
        "Maintain the quality of the language and its interpreter,", "Install it.",
        "Run it The end."]
    for s in spans:  # offsets still point at the source's words
        assert normalize_space(text[s.start:s.end]) == s.text
    # an indented list: its first item loses its bullet too
    assert [s.text for s in splitter.split("Members:\n\n  * Barry Warsaw\n  * Donghee Na")] == [
        "Members:", "Barry Warsaw", "Donghee Na"]
    # a rule of spaced dashes is no list item: it keeps its dashes (a caption written line
    # by line is a sentence a line)
    assert [s.text for s in splitter.split("IN THE COURT\n- - - - x\nKNOWLES, :")] == [
        "IN THE COURT", "- - - - x", "KNOWLES,:"]
    assert [s.text for s in splitter.split("The court met\n- - - - x\nand then it rose.")] \
        == ["The court met - - - - x and then it rose."]
    # the same through the Markdown and reStructuredText readers
    for name, body in (("team.md", "# Team\n\nIt consists of:\n\n- Barry Warsaw\n"
                                   "- Donghee Na\n"),
                       ("team.rst", "Team\n====\n\nIt consists of:\n\n* Barry Warsaw\n"
                                    "* Donghee Na\n")):
        path = tmp_path / name
        path.write_text(body)
        doc = parse(path, path.read_bytes())
        said = [s.text for sec in doc.sections for s in splitter.split(sec.text)]
        assert "Barry Warsaw" in said and "Donghee Na" in said, (name, said)


def test_footnote_references_are_markup_and_footnotes_are_text() -> None:
    from ragctl.index.markup import pipe_tables, plain_markdown

    table = "| Model | GPQA [^8] | MGSM[^5] |\n|---|---|---|\n| o3-high [^10] | 83.4 | 92.0 |\n"
    assert pipe_tables(table)[0].rows == [["Model", "GPQA", "MGSM"], ["o3-high", "83.4", "92.0"]]
    text = "Scores[^1] are high.\n\n[^1]: From the paper.\n[ref]: https://example.org\n"
    plain = plain_markdown(text)
    assert len(plain) == len(text) and plain.split() == ["Scores", "are", "high.", "From",
                                                         "the", "paper."]
