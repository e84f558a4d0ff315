"""What a question asks: its form, and for a factoid the type of answer that fits.

- **Its form** (:func:`question_type`): a short factoid ("when", "who", "how much", ...),
  a yes/no answer, one of two things it names (:func:`choice_options`: "Who is older, A or
  B?"), or a passage to quote ("what does X say about Y", "how do I", "why", "list ...");
  and for factoids the type of answer that fits (a date for "when", a number for "how
  many", a sum for "how much did it cost", a name for "who").
- **What a document says it does** (:func:`asked_statement`, :func:`names_document`,
  :func:`own_statement`): "What does PEP 703 propose?" asks the document's own statement.

Pure functions of the question's text; the pipeline dispatches on :func:`question_type`
once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Literal

from ragctl.ask.documents import identifiers
from ragctl.text import STOPWORDS, UNIT_WORDS

QuestionKind = Literal["factoid", "yes-no", "quote", "choice"]
Expected = Literal["date", "number", "money", "person", "place", "email", "phone", "url",
                   "thing", "any"]
# what a number must measure: a length or a time ("how long / far / tall"), an age ("how
# old"), how often, a bare whole number (a port), a count of things ("how many of the
# catchments …": a whole number, never "6,8" nor "37.2"), or a number of things ("how many
# countries …": no share, never "4.38%"; a table may give it in thousands)
Measure = Literal["", "extent", "age", "frequency", "integer", "count", "figure", "things",
                  "share"]

# --------------------------------------------------------------------- the question

# a quote that explains: why, how something is or was done, what happens, what to do
_EXPLAINING = (r"why\b|how (do|does|did|can|could|should|would|to|is|are|was|were)\b|"
               r"what happens\b|what should\b")
_EXPLAINS = re.compile(rf"^({_EXPLAINING})", re.I)
_QUOTE = re.compile(
    rf"^({_EXPLAINING}|explain\b|describe\b|list\b|summari[sz]e\b|tell me about\b|"
    r"what (does|do|did) .+ (say|said|state|recommend|propose|mean|describe|suggest)\b|"
    r"what (is|are) the (steps|rules|reasons|benefits|advantages|differences|guidelines|"
    r"recommendations)\b)", re.I)
_YES_NO = re.compile(r"^(is|are|was|were|do|does|did|can|could|has|have|had|will|would|"
                     r"should)\b", re.I)


# Money. A question asks for a sum ("how much did … cost / pay / earn", "what is the salary
# …": the "money" type) and a span names one (_CURRENCY); "how much …" over a span holding
# several sums (_SUM, written currency first or last) gets the first (``one_amount``).
_MONEY_QUESTION = re.compile(
    r"^(how much (money\b|.*\b(cost|costs|pay|paid|charge|charged|earn|earned|spend|spent|"
    r"worth|sell|sold|raise|raised|invest|invested|owe|owed)\b)|what (is|was|were) the "
    r".{0,30}\b(price|cost|salary|fee|rent|budget|revenue|income|wage)s?\b)", re.I)
_PRICE_QUESTION = re.compile(r"^(how much|what (is|was|were) the (amount|total|price|cost|fee|"
                             r"rent)|what did .* (cost|pay))\b", re.I)


@dataclass(frozen=True)
class QuestionType:
    kind: QuestionKind
    expects: Expected = "any"
    measure: Measure = ""
    # the kinds of unit the asked quantity is given in ("current": ampere), if it names one
    dimension: frozenset[str] = frozenset()


# "On Thunderbird Desktop, are OAuth tokens kept …?", "When I pay, does my card …?", "In
# the council's budget sheet, for how many items …?", "In the fund figures, counting only
# adopted budgets, in how many years …?": a question asked after a leading phrase or
# clause, or a few, is of the kind of its main clause (which may open with a preposition)
_ASKING = (r"is|are|was|were|do|does|did|can|could|has|have|had|will|would|should|who|whom|"
           r"whose|what|when|where|which|why|how")
_LEAD = re.compile(rf"^(?P<lead>[^?]{{3,160}}?),\s*(?P<main>(?:(?:for|in|on|at|by|from|to|"
                   rf"of|with|during|since|after|before)\s+)?(?:{_ASKING})\b.+)$", re.I)
# a lead that is itself a question: it starts with "who / what / which / how" or with an
# auxiliary, or with "when / where / why" and an auxiliary ("When is it, …", not "When I
# pay, …", a clause)
_AUX = r"is|are|was|were|do|does|did|can|could|has|have|had|will|would|should"
_ASKS = re.compile(rf"^(?:(?:who|whom|whose|what|which|how|{_AUX})\b|"
                   rf"(?:when|where|why)\s+(?:\S+\s+)?(?:{_AUX})\b)", re.I)


def main_clause(question: str) -> str:
    """The question without a leading phrase or clause before its comma (:data:`_LEAD`),
    or the whole question. A lead that is itself the question ("How old is Beverly
    Jones, who was crowned …?") is no lead."""
    m = _LEAD.match(question)
    return m.group("main") if m and not _ASKS.match(m.group("lead")) else question


OR_WORDS = 5  # an "or" after this many words of a yes/no question's form is within it


def explains(question: str) -> bool:
    """Whether a question asks why or how something is done, or what happens."""
    return _EXPLAINS.match(main_clause(" ".join(question.split()))) is not None


def question_type(question: str) -> QuestionType:
    """What kind of answer the question wants (see the module doc)."""
    q = main_clause(" ".join(question.strip().split()))
    low = q.lower()
    if _QUOTE.match(q) or names_document(q):
        return QuestionType("quote")
    typed = replace(_factoid_type(q), dimension=dimension(q))
    if choice_options(q) is not None:
        return replace(typed, kind="choice")
    # "Is Paris or Madrid bigger?" asks which (the reader names one); "Can a library be
    # held liable for violating section 1201 or 1202?" asks whether: an "or" far into the
    # question joins two things of one condition
    alternative = low.find(" or ")
    if _YES_NO.match(q) and (alternative < 0 or len(low[:alternative].split()) > OR_WORDS):
        return QuestionType("yes-no")
    return typed


# "Which port …", "What email address …": the thing a "what / which" question names says
# the shape of its answer (declared here, by the noun that follows the question word)
HEAD_TYPES: dict[str, Expected] = {
    "email": "email", "e-mail": "email", "email address": "email", "e-mail address": "email",
    "phone": "phone", "phone number": "phone", "telephone": "phone",
    "telephone number": "phone", "fax": "phone", "fax number": "phone",
    "website": "url", "web site": "url", "url": "url", "web address": "url", "link": "url",
    "port": "number", "port number": "number", "version": "number", "percentage": "number",
    "percent": "number", "share": "number", "proportion": "number", "fraction": "number",
    "year": "date", "date": "date", "day": "date", "month": "date", "time": "date",
    "amount": "money",
}
# the last word of the thing a "what / which" question names, when it is a measure given in
# figures: "what TEDs score", "what interest rate", "what GDP growth", "what net income",
# "what shipping charge" (not "what rate plan": the last word is the thing)
MEASURE_HEADS: dict[str, Expected] = {
    **dict.fromkeys(("score", "scores", "rate", "ratio", "concentration", "population",
                     "capacity", "efficiency", "reduction", "growth", "margin", "limit",
                     "temperature", "density", "speed"), "number"),
    **dict.fromkeys(("income", "revenue", "revenues", "salary", "fee", "fees", "price",
                     "cost", "charge", "budget", "balance", "rent", "wage", "tip"), "money"),
}
HEAD_MEASURES: dict[str, Measure] = {
    "port": "integer", "port number": "integer",
    # "what share of …": a part of a whole, never the part's own amount ("2,950")
    **dict.fromkeys(("percentage", "percent", "share", "proportion", "fraction"), "share")}
# "How old …" asks an age, "how often" a frequency, "how long / far / tall …" a length or a
# time: a number with its unit (:func:`ragctl.ask.rules.measures`)
HOW_MEASURES: dict[str, Measure] = {"old": "age", "often": "frequency"}
# "Which service had the largest charge …", "which catchment …": a thing, named by words,
# never a number alone ("$4.11"); unless the noun is one numbers name (:data:`NUMBERED_HEADS`)
_WHICH = re.compile(r"^which\s+(?:of\s+the\s+)?(?P<head>[a-z-]+(?:\s+[a-z-]+(?=\s+(?:is|was|are|"
                    r"were|has|had|have|does|did|do|can|will|would|should|shows?|showed|"
                    r"came|comes|leaves?|left)\b))?)", re.I)
NUMBERED_HEADS = frozenset(
    "year years month months day days date dates time times quarter quarters period periods "
    "version versions number numbers page pages grade level levels size sizes percentage "
    "percent amount amounts rate rates value values score scores figure figures price prices "
    "cost costs total totals sum count age round rounds edition season seasons week weeks "
    "decade decades century phase step steps chapter section floor room seat gate platform "
    "line lines route bus track channel port code codes id zip postcode digit digits position "
    "place rank ranking lap game match episode release build slot row rows column columns item "
    "items option options plan plans model models issue issues one ones is was are were has "
    "had have does did do can could will would should may might must".split())
_HEAD = re.compile(r"^(?:what|which)(?:'s| is| was| are| were)?\s+(?:the\s+|an?\s+|my\s+|"
                   r"our\s+|your\s+|its\s+)?(?:[\w.&-]+(?:\s+[\w.&-]+){0,3}?['’]s\s+)?"
                   r"(?P<head>[a-z-]+(?:\s+[a-z]+){0,2})", re.I)  # "the Clachan's phone number"
_SHARE_HEAD = re.compile(r"^(?:what|which)(?:'s| is| was)?\s+(?:the\s+)?(percentage|percent|"
                         r"share|proportion|fraction)\s+of\b")
_AS_SHARE = re.compile(r"^(?:what|how much)\b.*\bas an? (percentage|percent|share|proportion|"
                       r"fraction) of\b")
# a preposition before the question word: "For how many days …", "After what date …"
_PREPOSITION = re.compile(r"^(?:for|in|at|on|by|after|before|within|to|from|since|until|"
                          r"during|of|about|under|over|up to)\s+(?=(?:how|what|which|when)\b)",
                          re.I)


def _factoid_type(q: str) -> QuestionType:
    q = _PREPOSITION.sub("", q)
    low = q.lower()
    share = _SHARE_HEAD.match(low) or _AS_SHARE.search(low)  # "what share of the year's
    # payments" (not a possessive's), "… indirect costs as a percentage of direct costs"
    if share is not None:
        return QuestionType("factoid", "number", HEAD_MEASURES[share.group(1)])
    head = _HEAD.match(low)
    if head is not None:
        # a noun of up to three words ("total subscriptions income"); of two, or one, when
        # a small word comes in it ("types of income" asks no amount)
        words = head.group("head").split()
        words = words if not STOPWORDS.intersection(words) else words[:2]
        # "what email address", "what port"; and by its last word, "what delivery date",
        # "what payment amount"
        for head_words in (" ".join(words[:2]), words[0], words[-1]):
            if head_words in HEAD_TYPES:
                return QuestionType("factoid", HEAD_TYPES[head_words],
                                    HEAD_MEASURES.get(head_words, ""))
        if words[-1] in MEASURE_HEADS:
            return QuestionType("factoid", MEASURE_HEADS[words[-1]], "figure")
    which = _WHICH.match(low)
    if which is not None and which.group("head").split()[-1] not in NUMBERED_HEADS and \
            which.group("head").split()[0] not in NUMBERED_HEADS:
        return QuestionType("factoid", "thing")
    if re.match(r"^(when|((at|on|in|by|from|since|until|during) )?(what|which) (year|date|day|"
                r"month|time)|by when|until when|since when)\b", low):
        return QuestionType("factoid", "date")
    if _MONEY_QUESTION.match(low):
        return QuestionType("factoid", "money")
    how = re.match(r"^how (?P<adj>long|old|often|far|tall|high|deep|wide|heavy|fast)\b", low)
    if how is not None:
        return QuestionType("factoid", "number", HOW_MEASURES.get(how.group("adj"), "extent"))
    if counted(low):
        return QuestionType("factoid", "number", "count")
    noun = counted_noun(low)
    if noun is not None and not is_unit(noun) and "percent" not in low:
        return QuestionType("factoid", "number", "things")
    if re.match(r"^(how (many|much|big|large)|what (is|was) the "
                r"(number|amount|total|price|cost|percentage|population))\b", low):
        return QuestionType("factoid", "number")
    if re.match(r"^(who|whom|whose)\b", low):
        return QuestionType("factoid", "person")
    if re.match(r"^(where|in what (city|country|place|state))\b", low):
        return QuestionType("factoid", "place")
    return QuestionType("factoid")


# what "how many" may ask of that is no count of things: a unit, a scale, a share, a
# comparison ("how many hours / million / times / percent / more …")
_NOT_COUNTED = re.compile(rf"(?:{UNIT_WORDS}|times|fold|million|billion|thousand|hundred|"
                          r"lakh|crore|dozen|more|fewer|less|per|points?|basis|percentage|"
                          r"decimal|digits?|significant|a|an|the|of)", re.I)


_THINGS = re.compile(r"^how many (?P<noun>[a-z][a-z-]*)")


def counted_noun(low: str) -> str | None:
    """The word after "how many" that opens a question in lower case ("employees"), or
    None."""
    m = _THINGS.match(low)
    return m.group("noun") if m is not None else None


def is_unit(word: str) -> bool:
    """Whether "how many <word>" asks of a unit or a scale, not a count of things."""
    return _NOT_COUNTED.fullmatch(word) is not None


# What a question's noun measures, as the kinds of unit (ragctl.text.UNITS) it is given in:
# "the maximum supply current" is never "3.6V", "the operating weight" never "20 ft".
DIMENSIONS: dict[str, frozenset[str]] = {
    **dict.fromkeys(("current", "amperage"), frozenset({"ampere"})),
    "voltage": frozenset({"volt"}),
    "frequency": frozenset({"hertz"}),
    **dict.fromkeys(("power", "wattage"), frozenset({"watt"})),
    **dict.fromkeys(("weight", "mass"), frozenset({"mass", "lb"})),
    **dict.fromkeys(("length", "height", "depth", "width", "distance", "diameter",
                     "thickness", "radius", "altitude", "elevation"),
                    frozenset({"length", "foot", "mile"})),
    "temperature": frozenset({"celsius", "fahrenheit"}),
    **dict.fromkeys(("duration", "latency", "delay"), frozenset({"time", "month", "year"})),
}
# words after "current" that make it an adjective ("the current price"), not the noun
_AFTER_NOUN = frozenset("of at in for on is was are does do did with when drawn draws "
                        "consumed consumption rating rated given listed specified".split())


def dimension(question: str) -> frozenset[str]:
    """The kinds of unit that the quantity a question asks for is given in
    (:data:`DIMENSIONS`); empty when it names none."""
    words = re.findall(r"[a-z]+", question.lower())
    out: set[str] = set()
    for i, w in enumerate(words):
        if w in DIMENSIONS and not (w == "current" and i + 1 < len(words)
                                    and words[i + 1] not in _AFTER_NOUN):
            out |= DIMENSIONS[w]
    return frozenset(out)


# "How many of the catchments …", "in how many job categories …": a count of the members of
# a set, a whole number; not of a unit or a scale ("how many hours / million / times /
# percent"). "How many jobs were there" is not one: a table may give it in thousands.
_HOW_MANY = re.compile(r"^(?:(?:in|on|for|at|among|across) how many (?:of (?:the|its|their|"
                       r"these|those|them)\s+)?|how many of (?:the|its|their|these|those|"
                       r"them)\s+)(?P<noun>[a-z][a-z-]*)", re.I)


def counted(question: str) -> bool:
    """Whether the question asks how many things there are (:data:`_HOW_MANY`)."""
    m = _HOW_MANY.match(" ".join(question.split()))
    return m is not None and not is_unit(m.group("noun"))


# --------------------------------------------------------------------- this one or that one

# "Who is older, Annie Morton or Terry Richardson?", "Which band, Letters to Cleo or
# Screaming Trees, had more members?", "Was the test a failure or a success?": the answer is
# one of the two things the question names, as its evidence writes it.
_COMPARE = ("older|younger|elder|earlier|later|first|last|newer|oldest|youngest|earliest|"
            "latest|newest|more|less|fewer|bigger|larger|smaller|higher|lower|longer|"
            "shorter|taller")
_OPTION = r"(?:the |a |an )?[^,:;?]+?"
_CHOICE_END = re.compile(
    rf"^(?:which|who|whom|what)\b.*(?:[,:]\s*|\b(?-i:{_COMPARE})\s+)(?P<a>{_OPTION})\s+or\s+"
    rf"(?P<b>{_OPTION})\s*\??$", re.I)
_CHOICE_MIDDLE = re.compile(
    rf"^(?:which|what)\b[^,]*,\s*(?P<a>{_OPTION})\s+or\s+(?P<b>{_OPTION}),\s*\w.*$", re.I)
_CHOICE_AUX = re.compile(
    r"^(?:is|are|was|were|do|does|did|has|have|had)\b.*\s\S+"
    r"\s+or\s+(?P<b>[^,:;?]+?)\s*\??$", re.I)
_OPTION_WORDS = 8
_NOT_OPTION = re.compile(r"^(?:not|no|none|than|both|either|neither|so|more|less|fewer|other|"
                         r"otherwise|else|whether)\b|\b(?:which|who|what|whether)\b", re.I)


def choice_options(question: str) -> tuple[str, str] | None:
    """The two things a question asks to choose between, or None."""
    q = " ".join(question.split())
    m = _CHOICE_MIDDLE.match(q) or _CHOICE_END.match(q)
    if m is not None:
        a, b = m.group("a"), m.group("b")
    else:
        m = _CHOICE_AUX.match(q)
        if m is None:
            return None
        # "Was the testing a failure or a success?": as many words before "or" as after
        b = m.group("b")
        n = len(b.split())
        before = q[:m.start("b")].split()[:-1]
        if n > 3 or len(before) < n + 2:
            return None
        a = " ".join(before[-n:])
    a, b = a.strip(), b.strip()
    if any(not x or len(x.split()) > _OPTION_WORDS or _NOT_OPTION.search(x) for x in (a, b)) \
            or a.lower() == b.lower():
        return None
    return a, b


_EARLIER = re.compile(r"\b(older|oldest|elder|earlier|earliest|first|sooner)\b", re.I)
_LATER = re.compile(r"\b(younger|youngest|later|latest|newer|newest|more recent|most recent|"
                    r"last)\b", re.I)


def time_order(question: str) -> int:
    """-1 when the question asks which came first (older, earlier), 1 which came later
    (younger, newer), 0 when it asks neither."""
    early, late = _EARLIER.search(question), _LATER.search(question)
    if bool(early) == bool(late):
        return 0
    return -1 if early else 1


# "What does PEP 703 propose?", "What does the report recommend?": what a document says it
# does, in its own words ("This PEP proposes …", "This is a proposal for …"), which the
# filter rates below the sentences of other documents about proposing in general
_DOES = re.compile(r"^what (?:does|did|do) (?P<doc>.+?) (?P<verb>propose|recommend|suggest|"
                   r"describe|specify|define|require|document|introduce|cover)\??$", re.I)
# the verbs a document states its purpose with, as stems ("specif" for "specifies")
STATEMENT_STEMS = ("propos", "recommend", "suggest", "describ", "specif", "defin", "requir",
                   "document", "introduc", "cover", "give", "provide", "present", "outline",
                   "explain", "establish")
_SELF = ("pep|proposal|document|rfc|memo|paper|report|specification|spec|draft|standard|"
         "guide|post|article|note|chapter|section|letter|policy|plan|agreement|contract")


def asked_statement(question: str) -> str | None:
    """The stem of the verb that a "what does <document> propose / describe / …" question
    asks the document's own statement of ("propos"), or None."""
    m = _DOES.match(" ".join(question.split()))
    if m is None:
        return None
    verb = m.group("verb").lower()
    return next(stem for stem in STATEMENT_STEMS if verb.startswith(stem[:4]))


def names_document(question: str) -> bool:
    """Whether a "what does X define / require / …" question asks what a document says it
    does: X is a numbered name ("PEP 13", "RFC 2119") or a document ("the report"), not a
    thing ("What does connection orientation require?" wants a phrase: SQuAD's dev split
    has 7 such questions, none about a document)."""
    m = _DOES.match(" ".join(question.split()))
    return m is not None and (bool(identifiers(question))
                              or re.search(rf"\b(?:{_SELF})\b", m.group("doc"), re.I) is not None)


def own_statement(stem: str, text: str) -> bool:
    """Whether a sentence opens with a document's statement of what it does: "This PEP
    proposes …", "This document gives …", "This is a proposal for …", "In this paper we
    propose …" (not "A previous version of this PEP proposed …")."""
    return re.match(rf"\W*(?:in (?:this|the) \w+,?\s+)?(?:this (?:{_SELF})\s+(?:\w+ly\s+)?"
                    rf"{stem}\w*|this is an? {stem}\w*|we (?:\w+ly\s+)?{stem}\w*)\b",
                    text, re.I) is not None
