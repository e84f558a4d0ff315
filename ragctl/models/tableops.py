"""The operation model of computed answers (:mod:`ragctl.ask.compute`): which operation a
question asks of a table, from its embedding (``models/minilm-tableops``, trained by
:mod:`ragctl.training.tableops`). NumPy only: a matrix and a softmax
(:class:`~ragctl.models.softmax.SoftmaxHead`)."""

from __future__ import annotations

from dataclasses import dataclass

from ragctl.models.softmax import SoftmaxHead, hashed_words

__all__ = ["ASKED", "COMPUTED", "OPERATIONS", "OperationModel", "hashed_words"]

# The operations a table's rows are put through. "lookup" is one cell (ragctl.ask.cells
# answers it); the others are computed (ragctl.ask.compute.execute).
OPERATIONS: tuple[str, ...] = ("lookup", "count", "sum", "average", "max", "min", "argmax",
                               "argmin", "difference", "first", "last", "next", "previous")
# What a question may ask, in the order of the model's outputs: the operations, then the
# computations no table operation carries out (a ratio, a percentage change, a program of
# several steps). A question that asks for one of those is refused, not answered with one
# of the figures it would take.
ASKED: tuple[str, ...] = (*OPERATIONS, "ratio", "change", "other")
# What is never one cell or one stated figure: a count, sum, average, difference, ratio,
# percentage change or longer computation (the training report says how well the model
# tells these questions apart from the rest).
COMPUTED: frozenset[str] = frozenset({"count", "sum", "average", "difference", "ratio",
                                      "change", "other"})


@dataclass(eq=False)
class OperationModel(SoftmaxHead):
    """Which operation a question asks for: a softmax over the question's embedding
    (``weights`` dims × operations, ``bias``), for questions embedded by ``embedder``;
    ``threshold``: below this probability of its best operation, nothing is computed."""

    name: str = "minilm-tableops"
    kind = "tableops"

    @property
    def operations(self) -> tuple[str, ...]:
        return self.labels
