"""The model registry: one place where a name becomes a model.

Every model ragctl uses is obtained through :func:`load`: embedders, generators, context
filters, relevance estimators, and the fakes the tests register. Built-in names are
registered below with a factory (and, for models with weights on disk, a ``locate``
function); any other name is resolved as a path or an exported model:

- ``embedder``: a sentence-transformers directory (a path, or a name under
  ``<home>/models``);
- ``generator``: a ``.gguf`` file, or a folder holding one;
- ``filter`` / ``relevance``: an exported CTranslate2 model directory with a
  ``manifest.json``, by path or by name in ``<home>/models`` and then the models shipped
  with ragctl.

When a shipped default filter or relevance model cannot run here (an install without
its files, or without ctranslate2), :func:`load` logs a warning and returns the
similarity fallback; a model the user named is never replaced.
"""

from __future__ import annotations

import contextlib
import importlib.util
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragctl.config import CONFIG_FILE, Settings, home_dir, models_dir, write_setting
from ragctl.errors import ModelNotFoundError, RagctlError
from ragctl.models.manifest import (
    FALLBACK,
    exported,
    find_model,
    model_dir,
    read_manifest,
)

logger = logging.getLogger("ragctl.models")

KINDS = ("embedder", "generator", "filter", "relevance", "reader", "nli", "tableops", "kinds")
SETTING = {"embedder": "embedder", "generator": "generator", "filter": "context_filter",
           "relevance": "relevance", "reader": "reader", "nli": "nli", "tableops": "tableops",
           "kinds": "kinds"}
NO_READER = "none"  # the reader's and nli's fallback: the generator answers / word overlap
_NONE_FALLBACK = ("reader", "nli", "tableops", "kinds")  # kinds whose fallback is no model

Factory = Callable[..., Any]  # factory(settings, **dependencies) -> a backend


@dataclass(frozen=True)
class Spec:
    kind: str
    name: str
    factory: Factory
    about: str = ""
    locate: Callable[[], Path] | None = None  # where the weights are; raises if absent
    aliases: tuple[str, ...] = ()


@dataclass
class ModelInfo:
    kind: str
    name: str
    location: str
    default: bool = False
    details: dict[str, Any] = field(default_factory=dict)


_SPECS: dict[tuple[str, str], Spec] = {}
_ALIASES: dict[tuple[str, str], str] = {}


def register(kind: str, name: str, factory: Factory, *, about: str = "",
             locate: Callable[[], Path] | None = None, aliases: tuple[str, ...] = ()) -> None:
    """Make ``name`` (and its aliases) load as ``factory(settings, **dependencies)``."""
    _check_kind(kind)
    _SPECS[(kind, name)] = Spec(kind, name, factory, about, locate, aliases)
    for alias in aliases:
        _ALIASES[(kind, alias)] = name


def unregister(kind: str, name: str) -> None:
    spec = _SPECS.pop((kind, name), None)
    for alias in spec.aliases if spec else ():
        _ALIASES.pop((kind, alias), None)


def spec(kind: str, name: str) -> Spec | None:
    """The registered entry for ``name`` (or one of its aliases), if any."""
    return _SPECS.get((kind, _ALIASES.get((kind, name), name)))


def registered(kind: str) -> list[str]:
    return [name for (k, name) in _SPECS if k == kind]


def _check_kind(kind: str) -> None:
    if kind not in KINDS:
        raise RagctlError(f"kind must be one of {', '.join(KINDS)}, not {kind!r}")


# ----------------------------------------------------------------------- loading

_KEPT: dict[tuple[Any, ...], Any] | None = None


def keep_loaded() -> None:
    """From now on, :func:`load` returns the model already loaded for the same name and
    settings instead of loading it again (``ragctl serve`` holds its models this way), and
    ``close`` on a kept model does nothing."""
    global _KEPT
    if _KEPT is None:
        _KEPT = {}


def release() -> None:
    """Close the models :func:`keep_loaded` holds and load afresh from now on."""
    global _KEPT
    kept_models, _KEPT = _KEPT or {}, None
    for model in kept_models.values():
        close = getattr(model, "_close_kept", None)
        if close is not None:
            with contextlib.suppress(Exception):  # one failing must not keep others open
                close()


def kept() -> list[str]:
    """What :func:`keep_loaded` holds, as "kind name"."""
    return sorted(f"{key[0]} {key[1]}" for key in (_KEPT or {}))


def load(kind: str, name: str, settings: Settings | None = None, **deps: Any) -> Any:
    """The model ``name`` of ``kind``, ready to use. ``deps`` are what some models need
    from the pipeline (the similarity fallbacks need ``embedder``); ``light=True`` for an
    embedder: its CTranslate2 copy when one was made (the same vectors, no PyTorch)."""
    if _KEPT is None:
        return _load(kind, name, settings, **deps)
    s = settings or Settings()
    key = (kind, name, deps.get("light", False), s.device, s.compute_type, s.n_ctx,
           *sorted((k, id(v)) for k, v in deps.items() if k != "light"))
    if key not in _KEPT:
        model = _load(kind, name, settings, **deps)
        if model is not None and hasattr(model, "close"):
            model._close_kept = model.close  # for release()
            model.close = lambda: None  # shared: the pipelines that use it must not close it
        _KEPT[key] = model
    return _KEPT[key]


def _load(kind: str, name: str, settings: Settings | None = None, **deps: Any) -> Any:
    _check_kind(kind)
    settings = settings or Settings()
    if kind == "embedder" and deps.pop("light", False):
        fast = _fast_embedder(name)
        if fast is not None:
            return fast
    found = spec(kind, name)
    if found is not None:
        return found.factory(settings, **deps)
    if kind == "embedder":
        from ragctl.models.embed import SentenceTransformerEmbedder

        return SentenceTransformerEmbedder(locate(kind, name), name=canonical(kind, name))
    if kind == "generator":
        from ragctl.models.generate import LlamaGenerator

        return LlamaGenerator(locate(kind, name), name=name, n_ctx=settings.n_ctx,
                              threads=settings.generator_threads)
    if _default_unavailable(kind, name):
        return _load(kind, NO_READER if kind in _NONE_FALLBACK else FALLBACK, settings,
                     **deps)
    path = model_dir(name)
    if kind == "tableops":
        from ragctl.models.tableops import OperationModel

        return OperationModel.load(path)
    if kind == "kinds":
        from ragctl.models.kinds import KindModel

        return KindModel.load(path)
    if kind == "nli":
        from ragctl.models.entail import CT2Entailment

        return CT2Entailment(path, device=settings.device, compute_type=settings.compute_type)
    if kind == "reader":
        from ragctl.models.reader import CT2Reader

        return CT2Reader(path, device=settings.device, compute_type=settings.compute_type)
    if kind == "filter":
        from ragctl.models.filter import CT2Filter

        return CT2Filter(path, device=settings.device, compute_type=settings.compute_type)
    from ragctl.models.relevance import CT2Relevance

    return CT2Relevance(path, device=settings.device, compute_type=settings.compute_type)


def _fast_embedder(name: str) -> Any:
    """The CTranslate2 copy of embedder ``name`` (no PyTorch), when ``ragctl index`` made
    one (:func:`ragctl.models.embed.make_fast_copy`), else None."""
    try:
        path = locate("embedder", name)
    except RagctlError:
        return None
    from ragctl.models.embed import fast_embedder

    fast = fast_embedder(path)
    if fast is not None:
        fast.name = canonical("embedder", name)
    return fast


def locate(kind: str, name: str) -> Path:
    """Where the weights of ``name`` are on disk (a file or a directory)."""
    found = spec(kind, name)
    if found is not None:
        if found.locate is None:
            raise RagctlError(f"the {kind} {name!r} has no files of its own")
        return found.locate()
    if kind == "embedder":
        from ragctl.models.embed import is_model_dir

        for path in (models_dir() / name, Path(name).expanduser()):
            if is_model_dir(path):
                return path.resolve()
        raise ModelNotFoundError(
            f"no embedding model {name!r}: give a sentence-transformers directory "
            f"or one of: {', '.join(sorted(registered('embedder')))}")
    if kind == "generator":
        from ragctl.models.generate import find_gguf

        gguf = find_gguf(name)
        if gguf is None:
            raise ModelNotFoundError(f"no generator {name!r}: give a .gguf file or one of: "
                                     f"{', '.join(registered('generator'))}")
        return gguf
    return model_dir(name)


def check(kind: str, name: str) -> None:
    """Fail now, before anything loads, when ``name`` cannot be a model of ``kind``
    (a typo in --model should not cost the time to load the others)."""
    _check_kind(kind)
    if spec(kind, name) is not None:
        return
    if kind in ("embedder", "generator"):
        locate(kind, name)
    elif find_model(name) is None and name != getattr(Settings(), SETTING[kind]):
        model_dir(name)


def check_settings(settings: Settings) -> None:
    """:func:`check` for every model ``ask`` would load with ``settings``."""
    for kind, name in (("generator", settings.generator), ("relevance", settings.relevance),
                       ("filter", settings.context_filter), ("reader", settings.reader),
                       ("nli", settings.nli), ("tableops", settings.tableops),
                       ("kinds", settings.kinds)):
        check(kind, name)


def canonical(kind: str, name: str) -> str:
    """The identity of a model as an index records it: a registry name, a name under
    ``<home>/models``, or an absolute path."""
    found = spec(kind, name)
    if found is not None:
        return found.name
    if (models_dir() / name).exists():
        return name
    path = Path(name).expanduser()
    return str(path.resolve()) if path.exists() else name


def _default_unavailable(kind: str, name: str) -> bool:
    """True, with a warning, when ``name`` is the shipped default ``kind`` model and cannot
    run here (its files or ctranslate2 are missing)."""
    if name != getattr(Settings(), SETTING[kind]):
        return False
    if find_model(name) is None:
        missing = "not installed"
    elif kind not in ("tableops", "kinds") and importlib.util.find_spec("ctranslate2") is None:
        missing = "unusable without ctranslate2 (pip install 'ragctl[generate]')"
    else:
        return False
    label = {"filter": "context filter", "nli": "entailment",
             "tableops": "table operation", "kinds": "question-kind"}.get(kind, kind)
    instead = {"reader": "the generator answers in its own words",
               "nli": "yes/no answers from the words the evidence names",
               "tableops": "nothing is computed from tables",
               "kinds": "the kind of answer from the question's form alone"}.get(
        kind, "using the similarity fallback")
    logger.warning("the default %s model %r is %s; %s (see: ragctl models)", label, name,
                   missing, instead)
    return True


# ----------------------------------------------------------------------- listing, choosing

def available(settings: Settings, kind: str | None = None) -> list[ModelInfo]:
    """Every model of ``kind`` (all kinds when None): registered, then exported."""
    out: list[ModelInfo] = []
    for k in (kind,) if kind else KINDS:
        current = getattr(settings, SETTING[k])
        for name in registered(k):
            s = _SPECS[(k, name)]
            if s.locate is None:
                where = "built in"
            else:
                try:
                    where = str(s.locate())
                except RagctlError as e:
                    where = f"not installed ({e})"
            out.append(ModelInfo(k, name, where, current in (name, *s.aliases),
                                 {"description": s.about} if s.about else {}))
        if k in ("filter", "relevance", "reader", "nli", "tableops", "kinds"):
            for name, path, manifest in exported(k):
                out.append(ModelInfo(k, name, str(path), current in (name, str(path)),
                                     manifest))
    return out


def use(kind: str, name: str) -> Path:
    """Make ``name`` the default ``kind`` (written to config.toml); returns that file."""
    _check_kind(kind)
    if kind in ("embedder", "generator"):
        if spec(kind, name) is None:
            locate(kind, name)
    elif spec(kind, name) is None:
        manifest = read_manifest(model_dir(name))
        if manifest.get("kind") != kind:
            raise RagctlError(f"{name} is a {manifest.get('kind')} model, not a {kind} model")
    write_setting(SETTING[kind], name)
    return home_dir() / CONFIG_FILE


# ----------------------------------------------------------------------- built-ins

def _embedder(settings: Settings, **_: Any) -> Any:
    from ragctl.models.embed import DEFAULT_EMBEDDER, SentenceTransformerEmbedder, minilm_dir

    return SentenceTransformerEmbedder(minilm_dir(), name=DEFAULT_EMBEDDER)


def _minilm_dir() -> Path:
    from ragctl.models.embed import minilm_dir

    return minilm_dir()


def _generator(locate: Callable[[], Path], name: str) -> Factory:
    def factory(settings: Settings, **_: Any) -> Any:
        from ragctl.models.generate import LlamaGenerator

        return LlamaGenerator(locate(), name=name, n_ctx=settings.n_ctx,
                              threads=settings.generator_threads)

    return factory


def _gemma3() -> Path:
    from ragctl.models.generate import gemma3_path

    return gemma3_path()


def _gemma3_where() -> Path:
    from ragctl.models.generate import gemma3_path

    return gemma3_path(assemble=False)


def _smollm2() -> Path:
    from ragctl.models.generate import smollm2_path

    return smollm2_path()


def _similarity_filter(settings: Settings, *, embedder: Any, **_: Any) -> Any:
    from ragctl.models.filter import SimilarityFilter

    return SimilarityFilter(embedder)


def _similarity_relevance(settings: Settings, *, embedder: Any = None, **_: Any) -> Any:
    from ragctl.models.relevance import SimilarityRelevance

    return SimilarityRelevance(embedder=embedder)


register("embedder", "all-MiniLM-L6-v2", _embedder, locate=_minilm_dir,
         about="sentence-transformers, 384 dimensions (Apache-2.0)",
         aliases=("minilm", "sentence-transformers/all-MiniLM-L6-v2"))
register("generator", "gemma-3-270m", _generator(_gemma3, "gemma-3-270m"),
         locate=_gemma3_where,
         about="gemma-3-270m Q4_K_M GGUF, llama.cpp (Gemma terms of use)")
register("generator", "smollm2-135m", _generator(_smollm2, "smollm2-135m"), locate=_smollm2,
         about="SmolLM2-135M-Instruct Q4_1 GGUF, llama.cpp (Apache-2.0)",
         aliases=("smollm2",))
register("filter", FALLBACK, _similarity_filter,
         about="cosine similarity and word overlap fallback")
register("relevance", FALLBACK, _similarity_relevance, about="cosine similarity fallback")
register("reader", NO_READER, lambda settings, **_: None,
         about="no span reader: the generator answers in its own words")
register("nli", NO_READER, lambda settings, **_: None,
         about="no entailment model: yes/no from the words the evidence names")
register("tableops", NO_READER, lambda settings, **_: None,
         about="no table operation model: nothing is computed from tables")
register("kinds", NO_READER, lambda settings, **_: None,
         about="no question-kind model: the kind of answer from the question's form alone")
