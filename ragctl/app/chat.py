"""``ragctl chat``: questions one after another, where a follow-up may lean on the last one.

Before retrieval, a follow-up ("and when did it end?", "who founded them?") is rewritten
into a question that stands alone: a pronoun that points back is replaced by what the
previous question was about (its proper-noun phrase, or for "he"/"she" a person the last
answer named), and when nothing can be put in its place the previous question's content
words are added for retrieval. The rewrite is shown, so a wrong one is seen at once.
Measured by ``bench/chat.py`` on follow-up pairs built from the SQuAD dev split.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ragctl.text import STOPWORDS

_WORD = re.compile(r"[A-Za-z0-9][\w'&.-]*|\S")
_BACK = {"it", "its", "they", "them", "their", "theirs", "he", "him", "his", "she", "her",
         "hers", "this", "that", "these", "those", "there"}
_PERSON = {"he", "him", "his", "she", "her", "hers"}
_OPENERS = ("and ", "but ", "so ", "also ", "what about ", "how about ", "then ")
_WH = {"what", "which", "who", "whom", "whose", "when", "where", "why", "how", "did", "does",
       "do", "is", "was", "were", "are", "can", "could", "will", "would", "has", "have", "had",
       "in", "on", "at", "by", "for", "of", "to", "the", "a", "an", "and"}
_JOINERS = {"of", "the", "de", "von", "van", "and", "&", "for"}


@dataclass(frozen=True)
class Turn:
    question: str  # as asked, after any rewrite
    answer: str = ""


_AUX = {"did", "does", "do", "was", "is", "were", "are", "has", "have", "had", "can",
        "could", "will", "would", "should", "may", "might"}
_BE = {"is", "was", "were", "are"}
_PREPOSITIONS = {"about", "in", "on", "at", "for", "during", "after", "before", "with",
                 "from", "to", "of", "by", "under", "over"}


def topic(question: str) -> str | None:
    """What a question is about. "When did X begin?" (a question word, an auxiliary, a
    phrase, a verb): X. Otherwise its longest run of capitalized words (allowing "of",
    "the", "and" inside: "the University of Notre Dame")."""
    words = _WORD.findall(question.rstrip("?.! "))
    if len(words) >= 4 and words[0].lower() in _WH and words[1].lower() in _AUX:
        # "Where is the University of Notre Dame": no verb at the end to leave out
        phrase = words[2:] if words[-1][:1].isupper() and words[1].lower() in _BE \
            else words[2:-1]
        while len(phrase) > 2 and phrase[-1].lower() in _PREPOSITIONS:
            phrase = phrase[:-2]  # "the lease say about" -> "the lease"
        named = _capitalized(words)
        if phrase and (len(phrase) <= 6 or named is None):
            return " ".join(phrase)
        return named  # a long phrase: the name in it
    return _capitalized(words)


def _capitalized(words: list[str]) -> str | None:
    """The longest run of capitalized words (numbers may continue one: "Super Bowl 50"),
    with "the" before it."""
    best: tuple[int, list[str]] = (0, [])
    run: list[str] = []
    start = 0
    for i, w in enumerate([*words, "."]):
        capital = i > 0 and (w[:1].isupper() or (bool(run) and w.isdigit()))
        if capital or (run and w.lower() in _JOINERS and i + 1 < len(words)
                       and words[i + 1][:1].isupper()):
            if not run:
                start = i
            run.append(w)
            continue
        while run and run[-1].lower() in _JOINERS:
            run.pop()
        if len(" ".join(run)) > len(" ".join(best[1])):
            best = (start, run)
        run = []
    start, found = best
    if not found:
        return None
    if start > 0 and words[start - 1].lower() == "the":
        found = ["the", *found]
    return " ".join(found)


def _name(answer: str) -> str | None:
    """The answer when it looks like a name (every word capitalized, at most five)."""
    words = re.sub(r"\s*\[\d+\]", "", answer).strip().rstrip(".").split()
    if 1 <= len(words) <= 5 and all(w[:1].isupper() for w in words):
        return " ".join(words)
    return None


def is_follow_up(question: str) -> bool:
    q = " " + question.lower().strip() + " "
    words = set(re.findall(r"[a-z']+", q))
    return bool(words & _BACK) or q.lstrip().startswith(_OPENERS)


def rewrite(question: str, history: Sequence[Turn]) -> str:
    """``question`` made to stand alone, given the turns before it (latest last)."""
    question = " ".join(question.split())
    if not history or not is_follow_up(question):
        return question
    last = history[-1]
    subject = topic(last.question)
    person = _name(last.answer)
    body = question
    for opener in _OPENERS:  # "and when did it end?" -> "when did it end?"
        if body.lower().startswith(opener):
            body = body[len(opener):]
            break
    rest = body.rstrip("?. ")
    first = rest.split(" ", 1)[0].lower() if rest else ""
    if body is not question and (first in _PREPOSITIONS or not is_follow_up(body)):
        return _elliptical(rest, last.question, subject)
    out: list[str] = []
    done: set[str] = set()
    for token in re.split(r"(\W+)", body):
        low = token.lower()
        kind = "person" if low in _PERSON and person else "thing"
        target = person if kind == "person" else subject
        if low in _BACK and target and kind not in done and \
                low not in ("this", "that", "there", "these", "those"):
            out.append(target + "'s" if low in ("its", "their", "his", "hers") or
                       (low == "her" and kind == "thing") else target)
            done.add(kind)
        else:
            out.append(token)
    if done:
        text = "".join(out)
        return text[:1].upper() + text[1:]
    # Nothing to put in its place: keep the question, and let retrieval see the topic.
    words = [w for w in re.findall(r"[A-Za-z0-9][\w'-]*", last.question)
             if w.lower() not in STOPWORDS and w.lower() not in _WH]
    extra = [w for w in words if w.lower() not in body.lower()]
    return f"{body} ({' '.join(extra)})" if extra else body


def _elliptical(rest: str, previous: str, subject: str | None) -> str:
    """"and about smoking?" after "What does the lease say about pets?": the previous
    question with its last phrase of that preposition replaced; "what about SpaceX?"
    after "When was Tesla founded?": the previous question about the new subject."""
    prev = previous.rstrip("?. ")
    first, _, tail = rest.partition(" ")
    if first.lower() in _PREPOSITIONS:
        k = prev.lower().rfind(f" {first.lower()} ")
        if k >= 0:
            return f"{prev[:k]} {first.lower()} {tail}?"
    elif subject and subject in prev:
        return prev.replace(subject, rest, 1) + "?"
    return f"{rest}? ({prev})"


# ------------------------------------------------------------------------ the session

HELP = ("Ask a question; a follow-up may refer to the last one (\"and when did it end?\").\n"
        "  /sources  the sources of the last answer     /explain  how it was found\n"
        "  /long     the last question as a long answer  /new      forget the conversation\n"
        "  /help     this text                           /quit     leave (or Ctrl-D)")


class Session:
    """One conversation: its turns, the last answer, and where questions are sent."""

    def __init__(self, settings: Any, *, use_service: bool = True, log: bool = True) -> None:
        from ragctl.app.service import Backend

        self.settings = settings
        self.backend = Backend(use_service=use_service)
        self.log = log
        self.turns: list[Turn] = []
        self.last: Any = None

    def ask(self, question: str, *, long: bool = False) -> Any:
        from dataclasses import asdict

        from ragctl.records import Answer, from_dict

        payload: dict[str, Any] = {"settings": asdict(self.settings), "question": question,
                                   "log": self.log}
        if long:
            from ragctl.ask.longform import LongAnswer

            payload["long"] = {}
            return from_dict(LongAnswer, self.backend.call("/ask", payload))
        answer = from_dict(Answer, self.backend.call("/ask", payload))
        self.last = answer
        self.turns.append(Turn(question, "" if answer.abstained else answer.answer))
        return answer

    def close(self) -> None:
        self.backend.close()


def run(settings: Any, *, use_service: bool = True, log: bool = True) -> None:
    """The interactive loop, with line editing and a history kept in the home (0600)."""
    from ragctl.app import display
    from ragctl.config import home_dir
    from ragctl.errors import RagctlError

    history = home_dir() / "chat_history"
    try:
        import readline

        if history.exists():
            readline.read_history_file(history)
        readline.set_history_length(1000)
    except (ImportError, OSError):
        readline = None  # type: ignore[assignment]
    session = Session(settings, use_service=use_service, log=log)
    display.render_line(f"ragctl chat on index {settings.index!r}; /help for commands, "
                        "Ctrl-D to leave")
    try:
        while True:
            try:
                line = input("? ").strip()
            except EOFError:
                break
            except KeyboardInterrupt:
                print()
                continue
            except UnicodeDecodeError:
                display.render_line("(that line holds bytes that are not UTF-8; type it again)")
                continue
            if not line:
                continue
            try:
                if not _command(session, line):
                    break
            except KeyboardInterrupt:
                display.render_line("(interrupted)")
            except RagctlError as e:
                display.render_error(str(e))
    finally:
        session.close()
        if readline is not None:
            try:
                history.touch(mode=0o600, exist_ok=True)
                readline.write_history_file(history)
            except OSError:
                pass


def _command(session: Session, line: str) -> bool:
    """Handle one line; False ends the session."""
    from ragctl.app import display

    word = line.split()[0].lower()
    if word in ("/quit", "/exit", "/q"):
        return False
    if word == "/help":
        display.render_line(HELP)
    elif word == "/new":
        session.turns.clear()
        session.last = None
        display.render_line("(a new conversation)")
    elif word in ("/sources", "/explain", "/long"):
        if session.last is None:
            display.render_line("(ask a question first)")
        elif word == "/sources":
            display.render_sources(session.last.sources, highlight=session.last.raw_answer)
        elif word == "/explain":
            display.render_explain(session.last)
        else:
            with display.working(True):
                result = session.ask(session.last.question, long=True)
            display.render_long(result)
    elif word.startswith("/"):
        display.render_line(f"unknown command {word}; /help lists them")
    else:
        question = rewrite(line, session.turns)
        if question != " ".join(line.split()):
            display.render_note(f"(asking: {question})")
        with display.working(True):
            answer = session.ask(question)
        display.render_answer(answer)
    return True
