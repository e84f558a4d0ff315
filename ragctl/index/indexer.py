"""The ``index`` run: walk → read → sentences → passages → embed → store + HNSW.

Incremental (unchanged files are skipped by size + mtime, confirmed by sha256; renamed
files keep their vectors; files gone from an indexed root are removed) and crash-safe:
each file's new state is committed in one SQLite transaction together with a journal
of vector changes, so a run killed at any moment leaves every file in its old or its
new state, and the next run (or any search) brings the HNSW file up to date.
"""

from __future__ import annotations

import hashlib
import logging
import os
import signal
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Protocol, TypeVar

import numpy as np

from ragctl.config import cache_dir, home_dir
from ragctl.errors import AllFilesFailedError, DamagedIndexError, ModelMismatchError, RagctlError
from ragctl.index.chunk import Chunk, chunk_section, chunk_sections
from ragctl.index.fields import document_fields
from ragctl.index.ingest import (
    FORMATS,
    Ocr,
    ParsedDocument,
    SkipFile,
    TextScan,
    check_file,
    never_walked,
    parse,
    read_bytes,
    scan_stream,
    stream_sections,
    streamed,
    walk,
)
from ragctl.index.sentences import SentenceSplitter
from ragctl.models import registry as models
from ragctl.models.backends import Embedder
from ragctl.store.collection import Collection
from ragctl.store.sqlite import DocumentRecord, text_hash
from ragctl.text import skip_kind

logger = logging.getLogger("ragctl.indexer")

T = TypeVar("T")

BATCH_PASSAGES = 256
SAVE_EVERY_S = 120.0


class Reporter(Protocol):
    """What an index run tells its caller; the CLI draws a progress bar from it. A
    reporter may also have ``stage(name, path)`` (:class:`StageReporter`): what the run
    is doing now and on which file."""

    def phase(self, name: str, total: int | None = None) -> None: ...
    def advance(self, *, files: int = 0, passages: int = 0) -> None: ...
    def detail(self, text: str) -> None: ...  # what the current file is at
    def warn(self, path: Path, reason: str) -> None: ...


class StageReporter(Reporter, Protocol):
    """A reporter told each change of stage ("reading", "OCR", "embedding"...) with the
    file the run is on (the last one read, while a batch of files is embedded or saved);
    an empty ``name`` when the run is between stages."""

    def stage(self, name: str, path: Path | None = None) -> None: ...


@dataclass(frozen=True)
class Phase:
    """One part of an index run's time: ``name`` is its field in :class:`PhaseTimes`,
    ``label`` its name in the summary, ``shown`` what the progress says while it runs
    (nothing where the progress names it already)."""

    name: str
    label: str
    shown: str
    covers: str


# What an index run's time is spent on, in the order of a file's way through it.
PHASES: tuple[Phase, ...] = (
    Phase("scanning", "scanning", "",
          "walking the folders; comparing sizes and times with the index"),
    Phase("models", "models", "loading models",
          "loading the sentence splitter, the OCR engine and the embedding model (making "
          "its CTranslate2 copy the first time)"),
    Phase("reading", "reading", "reading", "reading, hashing and parsing files"),
    Phase("ocr", "OCR", "OCR", "recognising the text of scanned pages and images"),
    Phase("tables", "tables", "tables", "finding the tables of PDF pages"),
    Phase("sentences", "sentences", "sentences",
          "splitting sentences and grouping them into passages"),
    Phase("embedding", "embedding", "embedding",
          "embedding passages (stored vectors of the same text are looked up and reused)"),
    Phase("saving", "saving", "saving",
          "writing documents, passages and vectors to the store and the HNSW file"),
    Phase("other", "other", "",
          "the rest: checking the database, claiming files, what no phase above covers"),
)
_SHOWN = {p.name: p.shown for p in PHASES}


@dataclass
class PhaseTimes:
    """Seconds an index run spent in each of :data:`PHASES`; each moment of the run is
    counted in exactly one, so together they make the run's time."""

    scanning: float = 0.0
    models: float = 0.0
    reading: float = 0.0
    ocr: float = 0.0
    tables: float = 0.0
    sentences: float = 0.0
    embedding: float = 0.0
    saving: float = 0.0
    other: float = 0.0

    def items(self) -> list[tuple[str, float]]:
        """(summary name, seconds) in the order of :data:`PHASES`."""
        return [(p.label, getattr(self, p.name)) for p in PHASES]


def time_line(seconds: float, phases: dict[str, float] | None) -> str:
    """"42.1 s: reading 8.3 s, OCR 0.0 s, ...": a run's time and where it went."""
    if not phases:
        return f"{seconds:.1f} s"
    return f"{seconds:.1f} s: " + ", ".join(
        f"{p.label} {phases.get(p.name, 0.0):.1f} s" for p in PHASES)


class _PhaseClock:
    """Counts the time since the last switch to the phase then under way, so that the
    phases share the run's time without overlap; tells the reporter each switch."""

    def __init__(self, on_switch: Callable[[str], None]) -> None:
        self.times = PhaseTimes()
        self.current = "other"
        self._since = time.perf_counter()
        self._on_switch = on_switch

    def start(self, at: float) -> None:
        self.times, self.current, self._since = PhaseTimes(), "other", at

    def switch(self, name: str) -> str:
        """Go on in phase ``name``; returns the phase left."""
        now = time.perf_counter()
        left = self.current
        setattr(self.times, left, getattr(self.times, left) + now - self._since)
        self.current, self._since = name, now
        if name != left:
            self._on_switch(name)
        return left

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        """In phase ``name`` (switches inside included) until the block ends, then back
        to the phase it interrupted."""
        left = self.switch(name)
        try:
            yield
        finally:
            self.switch(left)

    def timed(self, name: str, items: Iterable[T]) -> Iterator[T]:
        """``items``, the time taken to produce each counted in phase ``name``."""
        it = iter(items)
        while True:
            with self.phase(name):
                try:
                    item = next(it)
                except StopIteration:
                    return
            yield item

    def stop(self, total: float) -> PhaseTimes:
        """The times so far, rounded to the millisecond; ``other`` is what the measured
        phases leave of ``total`` (never below zero)."""
        self.switch(self.current)
        t = PhaseTimes(**{p.name: round(getattr(self.times, p.name), 3)
                          for p in PHASES if p.name != "other"})
        t.other = max(0.0, round(total - sum(s for _, s in t.items()), 3))
        return t


def _no_stage(name: str, path: Path | None = None) -> None:
    pass


class _Silent:
    def phase(self, name: str, total: int | None = None) -> None:
        pass

    def advance(self, *, files: int = 0, passages: int = 0) -> None:
        pass

    def detail(self, text: str) -> None:
        pass

    def warn(self, path: Path, reason: str) -> None:
        logger.warning("%s: %s", path, reason)


@dataclass
class IndexSummary:
    """What one run did; ``--json`` prints exactly this."""

    index: str
    files_seen: int = 0
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    moved: int = 0
    removed: int = 0
    skipped: int = 0
    skipped_before: int = 0  # of ``skipped``: unchanged files that failed the same way before
    skipped_reasons: dict[str, int] = field(default_factory=dict)
    skipped_before_files: list[dict[str, str]] = field(default_factory=list)
    passages_added: int = 0
    passages_removed: int = 0
    passages_reused_vectors: int = 0
    sentences_added: int = 0
    reembedded: int = 0
    seconds: float = 0.0
    embed_seconds: float = 0.0  # the same as ``phases.embedding``
    phases: PhaseTimes = field(default_factory=PhaseTimes)
    interrupted: bool = False
    warnings: list[dict[str, str]] = field(default_factory=list)

    @property
    def changed(self) -> int:
        return self.added + self.updated + self.moved + self.removed

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class IndexOptions:
    reembed: bool = False
    force: bool = False
    broad: bool = False  # allow roots such as / or the home folder itself


def broad_root(path: Path) -> str | None:
    """Why indexing ``path`` needs confirmation, or None: the whole system, a system
    folder, or all of a home folder (or a folder that holds homes)."""
    p = Path(os.path.abspath(path))
    home = Path.home()
    if str(p) in ("/", "/usr", "/etc", "/var", "/opt", "/lib", "/bin", "/boot", "/srv"):
        return f"{p} is a system folder"
    if p == home or p in (Path("/home"), Path("/Users"), Path("/root")):
        return f"{p} is a whole home folder"
    return None


@dataclass
class _Pending:
    path: Path
    size: int
    mtime_ns: int
    sha256: str
    doc: ParsedDocument
    chunks: list[Chunk]
    existed: bool


class Indexer:
    """One index run over a :class:`Collection` (which must be locked by the caller)."""

    def __init__(self, collection: Collection, *, options: IndexOptions | None = None,
                 reporter: Reporter | None = None,
                 embedder_factory: Callable[[str], Embedder] | None = None) -> None:
        self.collection = collection
        self.store = collection.store
        self.settings = collection.settings
        self.options = options or IndexOptions()
        self.reporter: Reporter = reporter or _Silent()
        # reporters written before stages were told have no stage()
        self._stage: Callable[[str, Path | None], None] = getattr(
            self.reporter, "stage", _no_stage)
        self._file: Path | None = None  # the file being read, or the last one read
        self._clock = _PhaseClock(self._switched)
        self._embedder_factory = embedder_factory or self._load_embedder
        self._embedder: Embedder | None = None
        self.splitter = SentenceSplitter(max_words=self.settings.max_sentence_words)
        self.summary = IndexSummary(index=collection.name)
        self._last_save = time.monotonic()
        self._stats: dict[str, os.stat_result] = {}
        self._skips: dict[str, dict[str, Any]] = {}
        self._readers = ""

    # ------------------------------------------------------------------ helpers
    def _switched(self, phase: str) -> None:
        self._stage(_SHOWN[phase], self._file)

    def _reading(self, path: Path) -> AbstractContextManager[None]:
        self._file = path
        return self._clock.phase("reading")

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            with self._clock.phase("models"):
                # a detail of the phase under way, which goes on after it (a new phase
                # would reset the files counted and their total)
                self.reporter.detail("loading the embedding model")
                self._embedder = self._embedder_factory(self.settings.embedder)
            stored_dim = self.collection.dim
            if stored_dim is None:
                self.store.set_meta(embedder=self._embedder.name, dim=self._embedder.dim,
                                    hnsw_m=self.settings.hnsw_m,
                                    hnsw_ef_construction=self.settings.hnsw_ef_construction)
        return self._embedder

    def _warn(self, path: Path, reason: str) -> None:
        self.summary.warnings.append({"path": str(path), "reason": reason})
        self.reporter.warn(path, reason)

    def _chunker_settings(self) -> dict[str, int]:
        # "sentences": 2 — sentences keep their source text (an index made before is
        # re-chunked once, reusing its vectors, so answers can point inside sentences);
        # "sentences": 3 — a list item is a sentence of its own, without its bullet;
        # 4 — a table row is one sentence, "(212) 555-0147" is no list item; 5 — each
        # line of a paragraph written line by line (a receipt, a form) is one; 6 — without
        # its bullet, a line of a list written line by line; 7 — a label's value that is
        # punctuation ("Attendance: ?") keeps its space, so its row's cells stay apart; 8
        # — only a question mark does ("Date: ," in prose is joined as before); 9 — a page
        # written line by line may have a few long lines (an invoice's footer) and lines
        # that start with an address; 10 — or with a telephone number ("(870)-931-0505");
        # 11 — figures alone after a full stop in their line ("Maint. $1,000 $0") part of
        # the sentence before them; 12 — a table row whose first cells no column names
        # ("Sales Tax; FY 18 PLANNED: …") one sentence too; 13 — each line of a run of
        # labelled figures in prose ("Hall hire 60.64") a sentence of its own
        # "readers": 3 — Markdown/RST markup blanked, PDF tables as rows, HTML main content,
        # no space after an opening bracket; 4 — a document's own fields stored
        # (ragctl.index.fields); 5 — table rows keyed up to 20 columns, HTML colspans
        # spread, a first header cell left empty, a sheet's header found under its title,
        # UTF-16 mail, quoted replies matched loosely, a telephone number at a line's
        # start kept; 6 — the values filled into a PDF form's fields; 7 — a table row
        # whose one value is in a later column keeps it without the column's name; 8 — an
        # image's transparent background read as white; 9 — small text on a page image
        # enlarged, and a page of short lines (a receipt) put together by position; 10 — and
        # its words found as sparse text added; 11 — on an enlarged page only; 12 — a PDF
        # table without the blanks drawn over its text (a column padded across the next);
        # 13 — scans read with a local threshold (a photo's uneven light); 14 — photos only;
        # 15 — Markdown tables as rows keyed by their header; 16 — a PDF page of fill-in
        # blanks (a flattened filled form) read in the order its lines stand; 17 — a PDF
        # whose form field has a parent the file does not hold, no longer skipped; 18 — a
        # mail whose body is another text type ("text/asciidoc") read; 19 — and one whose
        # sender cannot be parsed (a line break in its name); 20 — a mail's empty plain
        # part left for its HTML, and the mails it forwards read; 21 — a mail's attached
        # files (a PDF, a sheet, a document, a scan) read under its place; 22 — a PDF
        # signature field's value left out (not its dictionary printed); 23 — a photo
        # read with both thresholds, the surer reading kept; 24 — a page in another
        # language read with its model too, when Tesseract has it; 25 — a PDF table's
        # header written above its ruled body (a financial statement's periods) read;
        # 26 — and one of several rows inside the table, names merged over columns; 27 —
        # a header's abbreviation dot left out of its rows' keys ("MIN.: 10" split them);
        # 28 — a table found by alignment keeps its outer words whole, a header told
        # from figures by kind, and a date on a line of its own at a document's start
        # kept as its date; 29 — a two-column header ("Year | Average Price") told by
        # kind too; 30 — an HTML table's <thead> row of <td> cells read as its header;
        # 31 — and a first row of <td> names, when no statement's layout decides; 32 —
        # Markdown footnote references ("GPQA [^8]") blanked, a footnote's text kept; 33
        # — a scanned line of a label and its value set apart written "Label: value", and
        # a scanned table's rows whose labels stand left of its header keyed by it; 34 —
        # a sheet's tables set side by side read apart, each under its own header, a
        # time of day among others no header, and a table stacked under another (its
        # header's names again) read under its own; 35 — a PDF page's words that pypdf
        # ran together ("12572103Ordernummer:") cut where pdfplumber sets them apart; 36 —
        # a PDF page that draws a run of labels apart from their values read by line, and
        # a sheet's table stacked under another whose header names mostly the same columns;
        # 37 — a control character in a text ("87B37C9\x000152") a space; 38 — a PDF's
        # tables written in text (" | " between cells) keyed by their header, and a page
        # that pypdf reads a word a line read by line; 39 — a transcript's caption ("WARDEN,
        # :") no run of labels, nor an empty form (labels without values drawn apart); 40
        # — a financial table's periods ("Q4 2023", "FY 2023") head its columns, and a
        # date written "12-Dec-2019" read as one in a document's fields, and a sheet's
        # table stacked under a row of figures, new names over figures, read under its own,
        # and a sheet's unkeyed label beside a figure read "Label: figure"; a statement's
        # table found by alignment, its labels over several columns and its periods some
        # rows above its figures, keyed by them; 41 — such a table's "$" and "—" cells,
        # its rows of each period named by it, and a ruled table's row labels nested over
        # several columns, each row named by its own (its groups "Part of"); 42 — a PDF
        # table's caption ("Table II: …") its first line, headers up to 60 characters, and
        # a ruled table without its unnamed gap columns; 43 — a keyed table's sections
        # ("Cost of sales:") name the rows under them up to their total ("Part of"), and a
        # font's "!" before a figure is left out; 44 — sections only in a table whose
        # first column has no name, and a gap column only of values split in two; 45 — a
        # table under a caption ("Table: …") found within its own region, a statement's
        # "$" beside its figures left out, its title in capitals no column's name, a
        # period over a group of columns named to each, figures above the first full
        # row no stacked header; 46 — a ruled table whose cells pack several figures
        # read again by alignment, a period written over a pair of columns ("Quarter
        # Ended | June 30,") named to each, a line of years alone a header; 47 — a
        # region cut to the page's own box (a file whose box is offset was lost); 48 — a
        # ruled table's run of unnamed gap columns before a named one, or empty at its edge;
        # 50 — each table of a region found by alignment, under its caption; a group's
        # name over its rows ("Police") named in each; a label's first line alone joined to
        # the next; a label over the columns left of the figures one cell; 51 — a ruled
        # table of sections, each under a header of its own, read section by section; a
        # label ending in a colon keeps its value, not the column's name; 52 — a
        # column of figures that the finder by alignment cut in two joined again, the
        # names above a run of figures placed over the figures they stand over, a ruled
        # table whose cells hold a label and its amount read by alignment with the lines
        # above it, a name over a column of currency signs the figures', one period
        # over every column named to each; 53 — a ruled table of figures alone, its
        # labels left of the rules, read by alignment; a column of signs folded into its
        # figures; 54 — a header that leaves several label columns unnamed (a budget's
        # code, group and line) names its figures' columns, over the next pages too, and
        # a table's last row alone on the next page is read under it; a table's
        # unlabelled total no name of the columns of the table under it; 55 — a sheet's
        # parts under the header of the part above them, though its labels repeat past
        # the header's last column; a table found by alignment without the page's title
        # over its names, nor a gap empty in every row; 56 — a sheet's tables set side by
        # side one empty column apart, each under a header of its own, read apart; a
        # PDF's soft hyphen inside a word the hyphen it prints; 57 — a PDF's amount whose
        # pence are drawn apart ("212  .11") whole; 58 — an HTML description list's terms
        # each with its value ("Staff Costs: 5,360.00"); a sheet's parts under their
        # titles ("Sheet1 > Raspberry Pi Build"); 59 — a photo turned as its EXIF
        # orientation tells (a phone's receipt photo stored on its side), and its slanting
        # lines levelled
        # (files are read again once, skipped ones too; unchanged passages keep their
        # vectors)
        return {"chunk_words": self.settings.chunk_words,
                "max_sentence_words": self.settings.max_sentence_words, "sentences": 13,
                "readers": 59}

    def _check_model(self) -> None:
        stored = self.collection.embedder_name
        wanted = models.canonical("embedder", self.settings.embedder)
        if stored and stored != wanted and not self.options.reembed:
            raise ModelMismatchError(
                f"index {self.collection.name!r} was built with the embedding model "
                f"{stored!r}, not {wanted!r}; re-run with --reembed to re-embed every "
                f"passage with {wanted!r}, or use --embedder {stored!r}"
            )

    # ------------------------------------------------------------------ the run
    def run(self, paths: Sequence[Path]) -> IndexSummary:
        started = time.perf_counter()
        self._clock.start(started)
        damage = self.store.integrity(quick=True)
        if damage != "ok":  # writing into a damaged database could lose more
            raise DamagedIndexError(f"the index database is damaged ({damage}); nothing was "
                                    "written: run ragctl doctor")
        run_id = self.store.start_run()
        status = "failed"  # also what a full disk leaves (DiskFullError, from the store)
        try:
            self._check_model()
            stored = self.collection.embedder_name
            if self.options.reembed and stored and \
                    stored != models.canonical("embedder", self.settings.embedder):
                self._reembed()
            self._index(paths)
            status = "ok"
            with self._clock.phase("models"):
                self._prepare_query_model()
        except KeyboardInterrupt:
            self.summary.interrupted = True
            status = "interrupted"
            raise
        finally:
            try:
                with self._clock.phase("saving"):
                    self._save(force=True)
                    self.collection.settle_vectors()
            except BaseException:  # the vectors could not be saved (a full disk)
                status = "failed" if status == "ok" else status
                raise
            finally:  # the run is marked as it ended, even when saving failed too
                total = time.perf_counter() - started
                self.summary.seconds = round(total, 3)
                self.summary.phases = self._clock.stop(total)
                self.summary.embed_seconds = self.summary.phases.embedding
                self.store.finish_run(run_id, status, self.summary.to_dict())
        if self.summary.files_seen and self.summary.skipped == self.summary.files_seen:
            raise AllFilesFailedError(
                f"none of the {self.summary.files_seen} files could be indexed "
                "(see the warnings above)")
        return self.summary

    def reread(self, paths: Sequence[str]) -> IndexSummary:
        """Read these indexed files again whatever their size, time and content say, with
        the index's own embedding model (``doctor``: passages whose text was damaged on
        disk; their vectors are reused by the SHA-256 of their text). Nothing else is
        walked, added or removed."""
        name = self.collection.embedder_name
        if name:
            self.settings = self.settings.replace(embedder=name)
        try:
            self._index([], only=[Path(p) for p in paths])
        finally:
            self._save(force=True)
        return self.summary

    def _roots(self, paths: Sequence[Path]) -> list[str]:
        if paths:
            roots = [os.path.abspath(p) for p in paths]
            for r in roots:
                if never_walked(Path(os.path.realpath(r))):
                    raise RagctlError(f"{r} is not a folder of documents (it is the running "
                                      "system's); nothing was indexed")
                why = broad_root(Path(r))
                if why and not self.options.broad:
                    raise RagctlError(f"{why}: indexing it would read thousands of files "
                                      "that are not yours to ask about; give a folder of "
                                      "documents, or confirm with --yes")
            with self.store.transaction():
                for r in roots:
                    self.store.add_root(r)
            return roots
        roots = self.store.roots()
        if not roots:
            raise RagctlError("nothing to index: give one or more files or folders, "
                              "for example: ragctl index ~/Documents")
        return roots

    def _index(self, paths: Sequence[Path], *, only: Sequence[Path] | None = None) -> None:
        """Index ``paths`` (the stored roots when none), or, with ``only``, read just
        those files again (:meth:`reread`)."""
        left = self._clock.switch("scanning")  # until the files to read are known
        if only is None:
            roots = self._roots(paths)
            self.reporter.phase("scanning")
            files = list(walk([Path(r) for r in roots if os.path.lexists(r)],
                              include_hidden=self.settings.include_hidden, warn=self._warn,
                              exclude=[home_dir() / "index", home_dir() / "models",
                                       home_dir() / "training",
                                       *([self.collection.dir] if self.collection.dir
                                         else [])]))
            for r in roots:
                if not os.path.lexists(r):
                    self._warn(Path(r), "indexed folder no longer exists; its documents are "
                               "removed")
            if not files:
                kinds = " ".join(sorted(FORMATS))
                self._warn(Path(roots[0]) if len(roots) == 1 else Path("."),
                           f"no files ragctl can read were found (it reads {kinds})")
        else:
            roots, files = [], list(only)  # no roots: nothing is found gone or forgotten
        known = {d.path: d for d in self.store.documents()}
        rechunk = only is None and \
            self.store.get_meta("chunker") not in (None, _json(self._chunker_settings()))
        self._skips = self.store.skips()
        self._readers = self._reader_settings()
        seen: set[str] = set()
        # read in part before, and what can be read has changed since; or to read again
        reread: set[str] = {str(f) for f in only or ()}
        candidates: list[tuple[Path, os.stat_result]] = []
        for f in files:
            key = str(f)
            seen.add(key)
            try:
                st = f.stat()
            except OSError as e:
                self._warn(f, f"{e.strerror}; skipped")
                self.summary.skipped += 1
                continue
            self._stats[key] = st
            skip = self._skips.get(key)
            same_skip = skip is not None and skip["size"] == st.st_size \
                and skip["mtime_ns"] == st.st_mtime_ns and skip["readers"] == self._readers
            if same_skip and skip is not None and not skip["partial"] \
                    and not (self.options.force or rechunk):
                self.summary.skipped += 1
                self.summary.skipped_before += 1
                self.summary.skipped_before_files.append({"path": key,
                                                          "reason": str(skip["reason"])})
                self._count_reason(str(skip["reason"]))
                continue
            if skip is not None and skip["partial"] and not same_skip:
                reread.add(key)
            old = known.get(key)
            if old is not None and not (self.options.force or rechunk) and key not in reread \
                    and old.size == st.st_size and old.mtime_ns == st.st_mtime_ns:
                self.summary.unchanged += 1
                continue
            candidates.append((f, st))
        self.store.forget_skips(p for p in self._skips
                                if p not in seen and _under_roots(p, roots))
        self.summary.files_seen = len(files)
        gone = [d for d in known.values()
                if d.path not in seen and _under_roots(d.path, roots)
                and not os.path.lexists(d.path)]
        gone_by_sha: dict[str, list[DocumentRecord]] = {}
        for d in gone:
            gone_by_sha.setdefault(d.sha256, []).append(d)

        self._clock.switch(left)
        self.reporter.phase("indexing", total=len(candidates))
        if candidates:
            with self._clock.phase("models"):
                _ = self.splitter.nlp  # loaded once, outside each file's time limit
                if self.settings.ocr not in ("auto", "none"):
                    from ragctl.index import ocr

                    ocr.engine(self.settings.ocr)  # a named engine must be installed
        max_bytes = int(self.settings.max_file_mb * 1_000_000)
        batch: list[_Pending] = []
        claims = self.collection.claims()
        deferred: list[tuple[Path, os.stat_result]] = []
        for f, st, again in _and_then(candidates, deferred):
            key = str(f)
            if again:  # hold nothing while waiting for another writer's claim
                self._flush(batch)
                batch = []
                claims.release_all()
            if not claims.take(key, wait=again):
                deferred.append((f, st))  # another writer is on it: look again at the end
                continue
            if again or claims.shared:  # written by another writer meanwhile? then it
                now_stored = self.store.document(key)  # is unchanged below
                if now_stored is not None:
                    known[key] = now_stored
            old = known.get(key)
            stream = streamed(f, st.st_size)
            try:
                with self._reading(f):
                    if stream:
                        check_file(f, max_bytes=max_bytes)
                        scan = scan_stream(f)
                        sha = scan.sha256
                    else:
                        data = read_bytes(f, max_bytes=max_bytes)
                        sha = hashlib.sha256(data).hexdigest()
            except SkipFile as e:
                self._skip(f, str(e), old)
                continue
            if old is not None and old.sha256 == sha and key not in reread \
                    and not (self.options.force or rechunk):
                with self._clock.phase("saving"):
                    self.store.touch_document(old.id, size=st.st_size,
                                              mtime_ns=st.st_mtime_ns)
                self.summary.unchanged += 1
                self.reporter.advance(files=1)
                continue
            twin = gone_by_sha.get(sha)
            if old is None and twin and not rechunk:
                moved = twin.pop()
                with self._clock.phase("saving"):
                    self.store.move_document(moved.id, path=key, size=st.st_size,
                                             mtime_ns=st.st_mtime_ns)
                gone.remove(moved)
                self.summary.moved += 1
                self.reporter.advance(files=1)
                continue
            if stream:
                self._flush(batch)
                batch = []
                self._index_stream(f, st, scan, old)
                continue
            try:
                with time_limit(self.settings.max_file_seconds) as deadline:
                    with self._reading(f):  # OCR and tables switch from it page by page
                        doc = parse(f, data, ocr=Ocr(
                            self.settings.ocr,
                            on_page=partial(self._slow_page, deadline, f.name),
                            max_pages=self.settings.ocr_max_pages,
                            max_megapixels=self.settings.ocr_max_megapixels,
                            cache=cache_dir() / "ocr"))
                    with self._clock.phase("sentences"):
                        sentences = self.splitter.split_many([s.text for s in doc.sections])
            except SkipFile as e:
                self._skip(f, str(e), old)
                continue
            except (ValueError, UnicodeError) as e:  # text the sentence splitter cannot take
                self._skip(f, f"cannot split this file into sentences ({type(e).__name__}: "
                              f"{e}); skipped", old)
                continue
            with self._clock.phase("sentences"):
                chunks = chunk_sections(doc.sections, sentences,
                                        target_words=self.settings.chunk_words)
            if not chunks:
                self._skip(f, "no sentences found; skipped", old)
                continue
            for note in doc.notes:
                self._warn(f, note)
            batch.append(_Pending(f, st.st_size, st.st_mtime_ns, sha, doc, chunks,
                                  existed=old is not None))
            if sum(len(p.chunks) for p in batch) >= BATCH_PASSAGES:
                self._flush(batch)
                batch = []
                claims.release_all()
        self._flush(batch)
        claims.release_all()
        with self._clock.phase("saving"):
            for d in gone:
                ids = self.store.delete_document(d.id)
                self._apply([([], ids, None)])
                self.summary.removed += 1
                self.summary.passages_removed += len(ids)
            if only is None:
                self.store.set_meta(chunker=_json(self._chunker_settings()))

    def _load_embedder(self, name: str) -> Embedder:
        """The embedder through its CTranslate2 copy (the same vectors, less memory, no
        PyTorch), made first when it is missing; sentence-transformers when no copy can
        be made."""
        self._prepare_query_model(name)
        return models.load("embedder", name, self.settings, light=True)

    def _prepare_query_model(self, name: str | None = None) -> None:
        """Make the CTranslate2 copy of the index's embedder once, so that `search` and
        `ask` embed their question without loading PyTorch (:mod:`ragctl.embed`)."""
        name = name or self.collection.embedder_name
        if not name:
            return
        try:
            path = models.locate("embedder", name)
        except RagctlError:
            return  # an embedder without files of its own (a test fake)
        from ragctl.models.embed import FAST_MANIFEST, fast_copy_dir, make_fast_copy

        if path.is_dir() and not (fast_copy_dir(path) / FAST_MANIFEST).exists():
            self.reporter.phase("preparing the embedding model (once)", total=None)
            make_fast_copy(path, name=name)

    def _skip(self, path: Path, reason: str, old: DocumentRecord | None) -> None:
        st = self._stats.get(str(path))
        if st is not None:  # remembered, so that the next run does not read and warn again
            self.store.record_skip(str(path), size=st.st_size, mtime_ns=st.st_mtime_ns,
                                   reason=reason, readers=self._readers)
        self._count_reason(reason)
        if old is not None:
            reason += " (the previously indexed version is kept)"
        self._warn(path, reason)
        self.summary.skipped += 1
        self.reporter.advance(files=1)

    def _slow_page(self, deadline: Deadline, name: str, what: str) -> None:
        """A page is about to be read by OCR or searched for tables: more time for this
        file, and the progress shows it."""
        deadline.extend(SLOW_PAGE_SECONDS)
        # until the next page or the end of the file (its reading phase ends then)
        self._clock.switch("ocr" if what.startswith("OCR") else
                           "tables" if what.startswith("tables") else "reading")
        self.reporter.detail(f"{name}: {what}")

    def _count_reason(self, reason: str) -> None:
        kind = skip_kind(reason)
        self.summary.skipped_reasons[kind] = self.summary.skipped_reasons.get(kind, 0) + 1

    def _reader_settings(self) -> str:
        """What decides whether a file can be read: a file skipped under other settings
        (no OCR engine then, a lower size limit) is tried again."""
        from ragctl.index import ocr

        engine = self.settings.ocr
        if engine == "auto":
            engine = (ocr.available() or ["none"])[0]
        return _json({"ocr": engine, "max_file_mb": self.settings.max_file_mb,
                      "max_file_seconds": self.settings.max_file_seconds,
                      "ocr_max_pages": self.settings.ocr_max_pages,
                      "ocr_max_megapixels": self.settings.ocr_max_megapixels})

    def _remember_read(self, path: Path, notes: list[str]) -> None:
        """A file was indexed: forget an old skip, or remember a partial read (pages of
        a scan without OCR) so that it is read again when OCR becomes possible."""
        key, st = str(path), self._stats.get(str(path))
        if notes and st is not None:
            self.store.record_skip(key, size=st.st_size, mtime_ns=st.st_mtime_ns,
                                   reason=notes[0], readers=self._readers, partial=True)
        elif key in self._skips:
            self.store.forget_skips([key])

    def _flush(self, batch: list[_Pending]) -> None:
        if not batch:
            return
        texts = [c.text for p in batch for c in p.chunks]
        matrix_all = self._vectors(texts)
        with self._clock.phase("saving"):
            self._write(batch, matrix_all)

    def _write(self, batch: list[_Pending], matrix_all: np.ndarray) -> None:
        changes: list[tuple[list[int], list[int], np.ndarray]] = []
        pos = 0
        with self.store.transaction():
            for p in batch:
                n = len(p.chunks)
                matrix = matrix_all[pos:pos + n]
                pos += n
                ids, old_ids = self.store.replace_document(
                    path=str(p.path), format=p.doc.format, title=p.doc.title, size=p.size,
                    mtime_ns=p.mtime_ns, sha256=p.sha256, chunks=p.chunks, embeddings=matrix,
                    fields=document_fields((s.text, s.place, s.offset) for s in p.doc.sections))
                self._remember_read(p.path, p.doc.notes)
                changes.append((ids, old_ids, matrix))
        # Committed: mirror the change in the HNSW index. Until it is saved, the store's
        # journal holds the same change, so a crash from here on loses nothing.
        self._apply(changes)
        for p, (_, old_ids, _) in zip(batch, changes, strict=True):
            self.summary.passages_removed += len(old_ids)
            self.summary.passages_added += len(p.chunks)
            self.summary.sentences_added += sum(len(c.sentences) for c in p.chunks)
            if p.existed:
                self.summary.updated += 1
            else:
                self.summary.added += 1
            self.reporter.advance(files=1, passages=len(p.chunks))
        self._save()

    def _vectors(self, texts: Sequence[str]) -> np.ndarray:
        """Embeddings of ``texts`` in order: stored ones reused by text hash, the rest
        embedded now."""
        with self._clock.phase("embedding"):
            return self._embed_new(texts)

    def _embed_new(self, texts: Sequence[str]) -> np.ndarray:
        hashes = [text_hash(t) for t in texts]
        reused = self.store.embeddings_by_hash(hashes) if self.collection.dim else {}
        todo = sorted({h: t for h, t in zip(hashes, texts, strict=True)
                       if h not in reused}.items())
        vectors: dict[str, np.ndarray] = {
            h: np.frombuffer(b, dtype=np.float32) for h, b in reused.items()}
        if todo:
            new = self.embedder.embed([t for _, t in todo],
                                      batch_size=self.settings.embed_batch_size)
            vectors.update({h: new[i] for i, (h, _) in enumerate(todo)})
        self.summary.passages_reused_vectors += sum(1 for h in hashes if h in reused)
        return np.stack([vectors[h] for h in hashes])

    def _index_stream(self, path: Path, st: os.stat_result, scan: TextScan,
                      old: DocumentRecord | None) -> None:
        """Index a large text file block by block, or a large mail archive message by
        message, in one transaction (all old or all new, as for any file), so that memory
        stays bounded whatever its size. The time limit applies to reading each part."""
        self._file = path
        with self._clock.phase("saving"):  # reading, sentences, embedding switch from it
            self._write_stream(path, st, scan, old)

    def _write_stream(self, path: Path, st: os.stat_result, scan: TextScan,
                      old: DocumentRecord | None) -> None:
        mbox = FORMATS.get(path.suffix.lower()) == "mbox"
        try:
            with self.store.writing_document(
                    path=str(path), format="mbox" if mbox else "text", title=path.stem,
                    size=st.st_size, mtime_ns=st.st_mtime_ns, sha256=scan.sha256) as writer:
                pending: list[Chunk] = []

                def add(chunks: list[Chunk]) -> None:
                    writer.add(chunks, self._vectors([c.text for c in chunks]))
                    self.reporter.advance(passages=len(chunks))

                for section in self._clock.timed("reading", stream_sections(path, scan)):
                    with time_limit(self.settings.max_file_seconds), \
                            self._clock.phase("sentences"):
                        sentences = self.splitter.split_many([section.text])[0]
                    if mbox or section.offset == 0:  # each message's header; a text's start
                        writer.add_fields(document_fields([(section.text, section.place,
                                                            section.offset)]))
                    with self._clock.phase("sentences"):
                        pending += chunk_section(section, sentences,
                                                 target_words=self.settings.chunk_words)
                    if len(pending) >= STREAM_BATCH:  # many small messages: embed together
                        add(pending)
                        pending = []
                if pending:
                    add(pending)
                if not writer.ids:
                    raise SkipFile("no sentences found; skipped")
                self._remember_read(path, [scan.note] if scan.note else [])
        except SkipFile as e:
            self._skip(path, str(e), old)
            return
        if scan.note:  # the encoding was a guess in doubt
            self._warn(path, scan.note)
        # Committed: mirror it in the HNSW index, reading the vectors back in batches.
        seq = self.store.journal_seq()
        vi = self.collection.vectors()
        if vi is not None:
            vi.delete(writer.old_ids)
            vi.reserve(vi.element_count + len(writer.ids))
            for ids, matrix in self.store.vectors(writer.ids, dim=vi.dim):
                vi.add(ids, matrix)
            self.collection.applied_seq = seq
        self.summary.passages_removed += len(writer.old_ids)
        self.summary.passages_added += len(writer.ids)
        self.summary.sentences_added += writer.n_sentences
        if old is not None:
            self.summary.updated += 1
        else:
            self.summary.added += 1
        self.reporter.advance(files=1)
        self._save()

    def _apply(self, changes: Sequence[tuple[Sequence[int], Sequence[int], np.ndarray | None]],
               ) -> None:
        seq = self.store.journal_seq()
        vi = self.collection.vectors()
        if vi is None:
            return
        for ids, old_ids, matrix in changes:
            vi.delete(old_ids)
            if matrix is not None and len(ids):
                vi.add(np.asarray(ids), matrix)
        self.collection.applied_seq = seq

    def _save(self, *, force: bool = False) -> None:
        vi = self.collection.loaded_vectors
        if vi is None or not vi.dirty:
            return
        if force or time.monotonic() - self._last_save > SAVE_EVERY_S:
            self.collection.save_vectors()
            self._last_save = time.monotonic()

    def _reembed(self) -> None:
        """Re-embed every stored passage with the new model, then swap in one transaction."""
        store = self.store
        old_name = self.collection.embedder_name
        with self._clock.phase("models"):
            self._embedder = self._embedder_factory(self.settings.embedder)
        embedder = self._embedder
        total = store.count("passages")
        self.reporter.phase(f"re-embedding with {embedder.name}", total=total)
        clock = self._clock
        with clock.phase("saving"):  # embedding switches from it, batch by batch
            store.start_staging()
            last = -1
            while True:
                rows = store.passage_texts(last, BATCH_PASSAGES)
                if not rows:
                    break
                last = rows[-1][0]
                with clock.phase("embedding"):
                    vecs = embedder.embed([t for _, t in rows],
                                          batch_size=self.settings.embed_batch_size)
                store.stage_embeddings([i for i, _ in rows], vecs)
                self.reporter.advance(passages=len(rows))
            store.swap_in_staged(embedder=embedder.name, dim=embedder.dim,
                                 vectors_rebuild="1")
            logger.info("re-embedded %d passages (%s -> %s)", total, old_name, embedder.name)
            self.summary.reembedded = total
            self.collection.forget_vectors()
            self.collection.rebuild_vectors(save=True)


class Deadline:
    """The time left to read one file; OCR gives each page it recognises more time."""

    def __init__(self, seconds: float) -> None:
        self.active = seconds > 0 and threading.current_thread() is threading.main_thread()

    def extend(self, seconds: float = 0.0) -> None:
        if self.active:
            left, _ = signal.getitimer(signal.ITIMER_REAL)
            if left > 0:
                signal.setitimer(signal.ITIMER_REAL, left + seconds)


STREAM_BATCH = 64  # passages of a streamed file embedded and written together
SLOW_PAGE_SECONDS = 60.0  # a page read by OCR or searched for tables adds this to
# the file's max_file_seconds


@contextmanager
def time_limit(seconds: float) -> Iterator[Deadline]:
    """Stop reading one file after ``seconds`` with :class:`SkipFile` (a pathological PDF,
    a giant table); only in the main thread, where signals can be set. The deadline it
    yields can be extended."""
    deadline = Deadline(seconds)
    if not deadline.active:
        yield deadline
        return

    def stop(signum: int, frame: object) -> None:
        raise SkipFile(f"reading it took longer than {seconds:g} s (max_file_seconds); "
                       "skipped")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield deadline
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _and_then(first: Sequence[tuple[Path, os.stat_result]],
              later: list[tuple[Path, os.stat_result]]
              ) -> Iterator[tuple[Path, os.stat_result, bool]]:
    """Each of ``first``, then each of ``later`` (which may grow meanwhile), marked."""
    for f, st in first:
        yield f, st, False
    for f, st in later:
        yield f, st, True


def _under_roots(path: str, roots: Sequence[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def _json(value: Any) -> str:
    import json

    return json.dumps(value, sort_keys=True)


def index_paths(settings: Any, paths: Sequence[Path], *, reporter: Reporter | None = None,
                options: IndexOptions | None = None
                ) -> tuple[IndexSummary, AllFilesFailedError | None]:
    """Open (or create) the index of ``settings``, lock it and run; returns the summary and,
    when every file failed, the error to raise after showing it."""
    from ragctl.store.collection import exists, remove_if_empty

    new = not exists(settings)
    try:
        with Collection.open(settings, create=True) as collection:
            collection.lock()
            indexer = Indexer(collection, options=options, reporter=reporter)
            try:
                return indexer.run(list(paths)), None
            except AllFilesFailedError as e:
                return indexer.summary, e
    finally:
        if new:  # a first run that indexed nothing leaves no empty index behind
            remove_if_empty(settings)
