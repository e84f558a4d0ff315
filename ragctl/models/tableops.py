"""The operation model of computed answers (:mod:`ragctl.ask.compute`): which operation a
question asks of a table, from its embedding (``models/minilm-tableops``, trained by
:mod:`ragctl.training.tableops`). NumPy only: a matrix and a softmax
(:class:`~ragctl.models.softmax.SoftmaxHead`)."""

from __future__ import annotations

from dataclasses import dataclass

from ragctl.models.softmax import SoftmaxHead, hashed_words

__all__ = ["OPERATIONS", "OperationModel", "hashed_words"]

# The operations, in the order of the model's outputs. "lookup" is one cell (ragctl.ask.
# cells answers it); the others are computed (ragctl.ask.compute.execute).
OPERATIONS: tuple[str, ...] = ("lookup", "count", "sum", "average", "max", "min", "argmax",
                               "argmin", "difference", "first", "last", "next", "previous")


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
