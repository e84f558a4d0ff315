"""The declared answer rules: each example shows its rule at work, and the switch."""

from __future__ import annotations

import pytest

from ragctl.ask.ruletable import BY_NAME, RULES, Example, Rule, check_names
from ragctl.ask.switches import fired, on, rules_off
from ragctl.errors import RagctlError

EXAMPLES = [(r, ex) for r in RULES if r.demo is not None for ex in r.examples]


@pytest.mark.parametrize(("rule", "example"), EXAMPLES,
                         ids=[f"{r.name}-{i}" for i, (r, _) in enumerate(EXAMPLES)])
def test_each_rule_does_what_its_example_says_and_nothing_when_off(
        rule: Rule, example: Example) -> None:
    assert rule.demo is not None
    assert rule.demo(example) == example.result
    with rules_off([rule.name]):
        assert rule.demo(example) != example.result


def test_every_rule_is_shown_by_an_example_or_a_test() -> None:
    assert len(RULES) == len(BY_NAME)  # one name each
    for r in RULES:
        assert (r.examples and r.demo is not None) or r.tested_by, r.name
        assert r.what and r.written_for, r.name


def test_rules_are_switched_off_by_name_and_what_fired_is_recorded() -> None:
    assert on("with_unit")
    with rules_off(check_names("with_unit, one_amount")) as seen:
        assert not on("with_unit") and not on("one_amount") and on("without_title")
        fired("without_title")
        fired("without_title")
    assert seen == ["without_title"] and on("with_unit")
    with pytest.raises(RagctlError, match="no rule named nope"):
        check_names("with_unit,nope")
