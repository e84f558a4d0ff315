"""ragctl: ask questions about your own documents, offline, with cited answers.

The library behind the ``ragctl`` command. The names below are its public API
(documented in ``docs/api.md``); they are imported on first use, so ``import ragctl``
stays instant::

    import ragctl

    settings = ragctl.load_settings(index="notes")
    ragctl.index_paths(settings, [Path("~/notes").expanduser()])
    answer = ragctl.ask_index(settings, "when is the boiler serviced?")
    print(answer.answer, [c.path for c in answer.sources])
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: `ragctl search` starts faster
    from typing import Any

__version__ = "0.1.0"

_API = {
    # settings and errors
    "Settings": "config", "load_settings": "config", "home_dir": "config",
    "RagctlError": "errors",
    # records
    "SourceSpan": "records", "Passage": "records", "Sentence": "records", "Hit": "records",
    "PassageScore": "records", "ScoredSentence": "records", "Citation": "records",
    # indexes
    "Collection": "store.collection", "index_status": "store.collection",
    "check_index": "index.doctor",
    "Indexer": "index.indexer", "IndexOptions": "index.indexer", "IndexSummary": "index.indexer",
    "index_paths": "index.indexer",
    # asking
    "Retriever": "ask.retrieve", "search_index": "ask.retrieve",
    "Pipeline": "ask.pipeline", "AskOptions": "ask.pipeline", "Answer": "ask.pipeline",
    "ask_index": "ask.pipeline",
    "LongOptions": "ask.longform", "LongAnswer": "ask.longform",
    # models
    "models": "", "Embedder": "models.backends", "RelevanceEstimator": "models.backends",
    "ContextFilter": "models.backends", "Generator": "models.backends",
    "SupportChecker": "models.backends",
    "Completion": "models.backends",
}

__all__ = ["__version__", *_API]


def __getattr__(name: str) -> Any:
    module = _API.get(name)
    if module is None:
        raise AttributeError(f"module 'ragctl' has no attribute {name!r}")
    if module == "":
        return importlib.import_module(f".{name}", __name__)
    return getattr(importlib.import_module(f".{module}", __name__), name)


def __dir__() -> list[str]:
    return sorted(__all__)
