"""Which of the answer rules are on for the question being answered, and which fired.

Every special-case rule of ``ask`` is declared, with its examples and its measured gain,
in :data:`ragctl.ask.ruletable.RULES`; where it applies, its code asks :func:`on` first and
calls :func:`fired` when it changed something. ``ask --rules-off NAME`` (the pipeline's
:func:`rules_off`) turns rules off for one answer, so that bench/rules.py can measure what
each one gains; the rules that fired are reported with the answer (``--explain``,
``--json``). Context variables, so that answers given at once (``ragctl serve``) keep
their own.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_OFF: ContextVar[frozenset[str]] = ContextVar("ragctl_rules_off", default=frozenset())
_FIRED: ContextVar[list[str] | None] = ContextVar("ragctl_rules_fired", default=None)


def on(name: str) -> bool:
    """Whether the rule ``name`` applies to the answer being made."""
    return name not in _OFF.get()


def fired(name: str) -> None:
    """Record that the rule ``name`` changed the answer being made."""
    seen = _FIRED.get()
    if seen is not None and name not in seen:
        seen.append(name)


@contextmanager
def rules_off(names: Iterable[str]) -> Iterator[list[str]]:
    """Answer with the rules ``names`` off; yields the list the rules that fire go to."""
    off_token = _OFF.set(frozenset(names))
    seen: list[str] = []
    fired_token = _FIRED.set(seen)
    try:
        yield seen
    finally:
        _FIRED.reset(fired_token)
        _OFF.reset(off_token)
