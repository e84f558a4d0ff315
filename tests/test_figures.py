"""Answers computed from two figures the documents state: what the question asks, the
figures of a sentence or a row with their units, which figure is whose, the result written
as the figures are, and answers through ``ask`` that show and cite the working."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from ragctl.ask.figures import (
    asked,
    best_pair,
    best_set,
    best_share,
    compute,
    figures,
    written,
    written_in,
)
from ragctl.ask.pipeline import AskOptions, Pipeline
from ragctl.config import load_settings
from ragctl.records import Sentence
from ragctl.store.collection import Collection
from tests.fakes import FakeReader
from tests.test_cells import indexed


def _sentence(text: str, place: str = "", sid: int = 1, path: str = "notes.md") -> Sentence:
    return Sentence(id=sid, passage_id=sid, seq=0, path=path, title="", place=place,
                    start_char=0, end_char=len(text), text=text, raw=None)


def test_the_question_form_gives_the_operation_and_its_two_subjects() -> None:
    a = asked("How many days longer are the nightly dumps kept than the RDS snapshots?")
    assert a is not None and a.operation == "difference" and a.unit == "time"
    assert {"dump", "night"} <= a.a and "rds" in a.b and not a.a & a.b
    assert a.subjects == ("nightly dumps kept", "RDS snapshots")  # as the working names them
    # what is measured comes before the preposition the second subject repeats
    fine = asked("How much larger is the maximum fine for a second offense than for a "
                 "first offense?")
    assert fine is not None and "fine" in fine.measure and fine.a == {"secon"}
    assert fine.b == {"first"} and fine.money
    both = asked("How much did the hot dogs and the beers cost together?")
    assert both is not None and both.operation == "sum" and both.money
    added = asked("Adding the sponsorship money to the ticket sales, how much did the "
                  "conference bring in?")
    assert added is not None and added.operation == "sum"
    assert "spons" in added.a and "ticke" in added.b
    change = asked("What was the change in revenue from 2024 to 2025?")
    assert change is not None and change.a == {"2024"} and "reven" in change.measure
    # a lookup, or two subjects the question does not tell apart
    for q in ("What was the total of the receipt for one pen and one pad?",
              "How much did the invoice cost?", "How much more is it than that?"):
        assert asked(q) is None, q


def test_figures_of_a_sentence_and_of_a_row_keep_their_units() -> None:
    prose = figures(_sentence("Revenue was $497.5 million in 2025, against 533 EUR in 2024; "
                              "the office at 12 Main St. opened on 12.06.2014."))
    assert [(f.text, f.value, f.unit) for f in prose] == [
        ("$497.5", 497.5, "$"), ("533 EUR", 533, "€"),
        ("12.06.2014", date(2014, 6, 12).toordinal(), "date")]  # dotted: day first
    assert "2025" in prose[0].near and "2024" not in prose[0].near
    row = figures(_sentence("Parameter: Conversion Time; Condition: 12-bit; Max: 750; "
                            "Units: ms"))
    assert [(f.text, f.unit, f.column) for f in row] == [("750", "ms", "Max")]
    assert "12" in row[0].near and "maxim" in row[0].measure
    euro = figures(_sentence("#: 1; Produkt: Ballon; Summe: 1.316,00 €"))
    assert euro[-1].value == 1316 and euro[-1].comma and euro[-1].decimals == 2


def test_each_subject_gets_the_figure_its_words_set_apart() -> None:
    found = [f for i, t in enumerate((
        "Strategy: Nightly full; Retention: 120 days; RPO: 24 hours",
        "Strategy: Continuous; Retention: 7 days; RPO: 5 minutes",
        "Strategy: Snapshots; Retention: 14 days; RPO: 1 hour"), start=1)
        for f in figures(_sentence(t, place=["Backups > Nightly dumps", "Backups > RDS",
                                             "Backups > Search"][i - 1], sid=i))]
    what = asked("How many days longer are the nightly dumps kept than the RDS backups?")
    assert what is not None
    pair = best_pair(what, found)
    assert pair is not None and [f.text for f in pair] == ["120 days", "7 days"]
    assert compute("difference", *pair) == 113 and written(113, pair) == "113 days"
    # minutes and hours convert; a subject that fits no figure answers nothing
    hours = asked("How many hours longer is the nightly RPO than the RDS RPO?")
    assert hours is not None
    minutes = [f for f in found if f.unit in ("hours", "minutes")]
    assert compute("difference", minutes[0], minutes[1]) == 24 - 5 / 60
    none = asked("How many days longer are the nightly dumps kept than the Oracle backups?")
    assert none is not None and best_pair(none, found) is None


def test_a_sum_is_written_as_its_figures_are() -> None:
    lines = [_sentence(t, sid=i) for i, t in enumerate(
        ("2 Hot dog $27.80", "1 Beer $2.90", "Total $30.70"), start=1)]
    found = [f for s in lines for f in figures(s)]
    what = asked("How much did the hot dogs and the beers cost together?")
    assert what is not None
    pair = best_pair(what, found)
    assert pair is not None and written(compute("sum", *pair), pair) == "$30.70"
    euro = [f for s in (_sentence("Summe: 571,04 €; Netto: 496,00 €", sid=1),
                        _sentence("Summe: 559,84 €; Netto: 480,00 €", sid=2))
            for f in figures(s)]
    assert written(compute("difference", euro[0], euro[2]), euro[:1]) == "11,20 €"


def test_a_listed_sum_takes_each_things_own_figure() -> None:
    what = asked("How much does the FY20 budget allocate in total to the gel apparatus, its "
                 "power supply and the UV transilluminator?")
    assert what is not None and what.operation == "sum" and len(what.more) == 1
    assert what.subjects == ("gel apparatus", "its power supply", "UV transilluminator")
    spent = asked("How much did the club spend on printing, hall hire and events?")
    assert spent is not None and spent.subjects == ("printing", "hall hire", "events")
    two = asked("What was the total cost of the chamber and the microcentrifuge?")
    assert two is not None and not two.more and two.subjects == ("chamber", "microcentrifuge")
    # a list of what each costs, not a sum; a lookup of one figure
    for q in ("What is the price for adults, children and seniors?",
              "What was the total of the receipt for one pen and one pad?"):
        assert asked(q) is None, q
    lines = [_sentence(t, sid=i) for i, t in enumerate((
        "Horizontal gel electrophoresis apparatus: $732", "Gel power supply: $1,962",
        "UVP Benchtop Transilluminator 110 v: $1,410", "Chemicals and reagents: $2,500",
        "Subtotal: $21,715"), start=1)]
    found = [f for s in lines for f in figures(s)]
    assert what is not None
    chosen = best_set(what, found)
    assert chosen is not None and [f.text for f in chosen] == ["$732", "$1,962", "$1,410"]
    assert written(sum(f.value for f in chosen), chosen) == "$4,104"
    # a listed thing that no figure names: no sum
    none = asked("How much in total went on the gel apparatus, the power supply and the "
                 "centrifuge?")
    assert none is not None and best_set(none, found) is None


def test_a_bare_amount_is_in_its_documents_currency() -> None:
    lines = [_sentence(t, sid=i, path="accounts.pdf") for i, t in enumerate((
        "Hall hire 60.64", "Printing 50.00", "Current Assets £411.30", "Members 40"),
        start=1)]
    stated = [f for s in lines for f in figures(s)]
    assert [f.text for f in stated] == ["£411.30"]  # a bare number is no amount alone
    currency = written_in(stated)
    assert currency == {"accounts.pdf": "£"}
    found = [f for s in lines for f in figures(s, currency=currency[s.path])]
    assert [(f.text, f.unit) for f in found] == [("60.64", "£"), ("50.00", "£"),
                                                 ("£411.30", "£")]
    what = asked("How much did the Forum spend on hall hire and printing combined?")
    assert what is not None
    pair = best_pair(what, found)
    assert pair is not None and written(compute("sum", *pair), pair) == "£110.64"
    # two currencies in one document: a bare number stays no amount
    mixed = [f for s in (_sentence("Fee $5.00", path="m.txt"), _sentence("Fee €4.00", sid=2,
                                                                           path="m.txt"))
             for f in figures(s)]
    assert written_in(mixed) == {}


def test_a_share_is_a_part_over_its_whole_in_per_cent() -> None:
    what = asked("What percentage of the Centre's 2012-13 expenditure went on parts and tools?")
    assert what is not None and what.operation == "share"
    assert what.subjects == ("parts and tools", "Centre's 2012-13 expenditure")
    also = asked("What are the indirect costs as a percentage of the total direct costs?")
    assert also is not None and also.operation == "share" and also.a == {"indir"}
    lines = [_sentence(t, sid=i, path="accounts_2012_13.pdf") for i, t in enumerate((
        "Expenditure Parts, tools £2383.71", "Insurance £151.04", "Advertising £60.00",
        "Total Expenditure £2594.75", "Total Income £2570.59"), start=1)]
    found = [f for s in lines for f in figures(s)]
    pair = best_share(what, found)
    assert pair is not None and [f.text for f in pair] == ["£2383.71", "£2594.75"]
    assert round(compute("share", *pair), 2) == 91.87
    # a part larger than its whole is no share
    assert compute("share", pair[1], pair[0]) != compute("share", pair[1], pair[0])


def test_ask_shows_and_cites_the_working_of_two_stated_figures(tmp_path: Path,
                                                                fake_embedder: str) -> None:
    root = indexed(tmp_path / "notes", {"backups.md": (
        "# Backups\n\n## Nightly dumps\n\nThe nightly database dumps are kept for 120 days "
        "in the archive bucket.\n\n## RDS snapshots\n\nThe RDS snapshots are kept for 7 days "
        "before they expire.\n")})
    with Collection.open(load_settings()) as c, Pipeline(c, reader=FakeReader("120")) as p:
        a = p.ask("How many days longer are the nightly dumps kept than the RDS snapshots?",
                  AskOptions(re_threshold=0.0))
        off = p.ask("How many days longer are the nightly dumps kept than the RDS snapshots?",
                    AskOptions(re_threshold=0.0, rules_off=("stated_figures",)))
    assert a.kind == "computed" and a.raw_answer == "113 days", a.answer
    assert a.answer == "113 days (= 120 days − 7 days) [1] [2]"
    raw = (root / "backups.md").read_text()
    assert [raw[s.answer_start:s.answer_end] for s in a.sources] == ["120 days", "7 days"]
    assert "stated_figures" in a.rules and "stated_figures" not in off.rules
    assert off.raw_answer != "113 days"


def test_a_comparative_says_what_is_measured_and_a_rank_is_no_figure() -> None:
    rows = ("Rank: 2; Peak: Mount Ash; Elevation: 14,379 ft 4383 m; Isolation: 5.4 mi",
            "Rank: 7; Peak: Mount Birch; Elevation: 13,982 ft 4262 m; Isolation: 3.1 mi")
    found = [f for i, t in enumerate(rows, start=1) for f in figures(_sentence(t, sid=i))]
    assert {f.column for f in found} == {"Elevation", "Isolation"}  # not the bare rank
    what = asked("How much taller is Mount Ash than Mount Birch?")
    assert what is not None and "eleva" in what.measure
    pair = best_pair(what, found)
    assert pair is not None and written(compute("difference", *pair), pair) == "397 ft"


def test_a_yes_no_question_compares_two_stated_figures() -> None:
    rows = ("Parameter: Active Supply Current; Condition: E2 write; Max: 400; Units: µA",
            "Parameter: Active Supply Current; Condition: Communication only; Max: 110; "
            "Units: µA")
    found = [f for i, t in enumerate(rows, start=1) for f in figures(_sentence(t, sid=i))]
    higher = asked("Is the active supply current during a write higher than during "
                   "communication?")
    assert higher is not None and higher.operation == "compare" and higher.larger
    pair = best_pair(higher, found)
    assert pair is not None and compute("compare", *pair) == 290
    assert written(pair[0].value, pair[:1]) == "400 µA"
    lower = asked("Is the supply current during a write lower than during communication?")
    assert lower is not None and not lower.larger
    more = asked("Were there more births in 2014 than in 2013?")
    assert more is not None and more.a == {"2014"} and "birth" in more.measure


def test_days_between_two_stated_dates() -> None:
    lines = [_sentence(t, sid=i) for i, t in enumerate((
        "INVOICE DATE 11/02/2019", "DUE DATE 26/02/2019",
        "Billing period 01 Feb 2020 to 29 Feb 2020"), start=1)]
    found = [f for s in lines for f in figures(s)]
    what = asked("How many days after the invoice date is the invoice due?")
    assert what is not None and what.operation == "dates" and what.unit == "date"
    pair = best_pair(what, found)
    assert pair is not None and [f.text for f in pair] == ["11/02/2019", "26/02/2019"]
    # 11/02 could be either order; 26/02 is day first, and so is its document's other date
    assert compute("dates", *pair) == 15 and written(15, pair) == "15 days"
    between = asked("How many days passed between the invoice date and the due date?")
    assert between is not None and between.operation == "dates"


def test_a_comparison_of_amounts_is_not_one_of_the_dates_naming_them(
        tmp_path: Path, fake_embedder: str) -> None:
    # "higher … in fiscal 2023 than in fiscal 2022": the years (and dates) say which two
    # figures, the amounts are compared; two dates are compared only for later / earlier
    indexed(tmp_path / "notes", {"results.md": (
        "# Results\n\nFor the fiscal year ended September 30, 2023, diluted earnings per "
        "share were $6.13.\n\nFor the fiscal year ended September 24, 2022, diluted "
        "earnings per share were $6.11.\n")})
    with Collection.open(load_settings()) as c, Pipeline(c, reader=FakeReader("6.13")) as p:
        a = p.ask("Were diluted earnings per share for the fiscal year ended September 30, "
                  "2023 higher than for the fiscal year ended September 24, 2022?",
                  AskOptions(re_threshold=0.0))
    assert "day" not in a.answer, a.answer
    assert not a.answer or a.answer.startswith("Yes"), a.answer


def test_a_percentage_change_of_two_stated_figures(tmp_path: Path,
                                                   fake_embedder: str) -> None:
    indexed(tmp_path / "notes", {"results.md": (
        "# Results\n\n## 2024\n\nRevenue in 2024 was $533 million, a record.\n\n"
        "## 2025\n\nRevenue in 2025 was $497 million after the plant closed.\n")})
    what = asked("What was the percentage change in revenue from 2024 to 2025?")
    assert what is not None and what.operation == "percent_change"
    with Collection.open(load_settings()) as c, Pipeline(c, reader=FakeReader("533")) as p:
        a = p.ask("What was the percentage change in revenue from 2024 to 2025?",
                  AskOptions(re_threshold=0.0))
    assert a.kind == "computed" and a.raw_answer == "-6.75%", a.answer
    assert a.answer.startswith("-6.75% (= ($497 − $533) / $533)")


def test_how_many_times_higher_is_a_ratio_of_two_stated_figures() -> None:
    what = asked("How many times higher is the fast mode's clock than the standard mode's?")
    assert what is not None and what.operation == "ratio"
    assert asked("How many times did the team win the cup?") is None  # a count, no ratio
    fast, slow = (figures(_sentence(t, sid=i))[0] for i, t in enumerate((
        "The fast mode's clock runs at 400 kHz.", "The standard mode's clock runs at 100 kHz.")))
    assert compute("ratio", fast, slow) == 4 and compute("ratio", slow, fast) == 4


def test_a_change_over_two_periods_stated_in_one_sentence() -> None:
    what = asked("By how many dollars did Cayuga's Watchers' fundraising increase from FY "
                 "2018 to FY 2019?")
    assert what is not None and what.operation == "difference" and what.money
    assert what.a == {"2018"} and what.b == {"2019"}
    path = "cayugas-watchers-annual-report.pdf"
    raised = _sentence("In fiscal 2019 we raised a record breaking total of $96,419, a 6.3% "
                       "increase from the $90,666 that was raising during FY 2018.", path=path)
    spent = _sentence("Cayuga's Watchers' expenses for FY 2019 totaled to $52,702, a 22% "
                      "decrease from FY 2018.", sid=2, path=path)
    others = [_sentence(t, sid=i, path=path) for i, t in enumerate((
        "Cayuga's Watchers ended the year with approximately $84,000 of cash on hand.",
        "Gold partners: $25,000-$49,999", "Silver partners: $10,000-$24,999"), start=3)]
    found = figures(raised) + figures(spent) + [f for o in others for f in figures(o)]
    # a figure's thousands comma ends no clause: "2018" is the $90,666's
    assert "2018" in next(f for f in found if f.value == 90666).near
    # the document's name in the question ("Cayuga's Watchers'") tells no figure apart,
    # and two figures stated together are the two compared
    pair = best_pair(what, found)
    assert pair is not None and {f.value for f in pair} == {96419, 90666}
    assert compute("difference", *pair) == 5753
