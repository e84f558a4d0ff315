"""Where ragctl keeps its files, and the settings that steer it.

Precedence, highest first: command-line flags, ``RAGCTL_*`` environment variables,
``config.toml`` in the home directory, built-in defaults.
"""

from __future__ import annotations

import dataclasses
import os
import re
import sys
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from ragctl.errors import ConfigError

CONFIG_FILE = "config.toml"
# the quantizations `ragctl train` and `ragctl export` can give an exported model
QUANTIZATIONS = ("int8", "int8_float16", "int8_float32", "float16", "float32")
_INDEX_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


def home_dir() -> Path:
    """The ragctl home: ``$RAGCTL_HOME`` if set, else the platform's per-user config folder
    (``~/.config/ragctl`` on Linux, as click's ``get_app_dir`` gives)."""
    env = os.environ.get("RAGCTL_HOME")
    if env:
        return Path(env).expanduser().resolve()
    if sys.platform == "win32":
        return Path(os.environ.get("APPDATA", Path.home() / "AppData" / "Roaming")) / "ragctl"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / "ragctl"
    xdg = os.environ.get("XDG_CONFIG_HOME")
    return (Path(xdg) if xdg else Path.home() / ".config") / "ragctl"


def models_dir() -> Path:
    return home_dir() / "models"


def cache_dir() -> Path:
    """Files ragctl can make again from installed ones (the query embedder's CTranslate2
    copy), shared by every home of this user: ``$RAGCTL_CACHE``, else
    ``$XDG_CACHE_HOME/ragctl``, else ``~/.cache/ragctl``."""
    env = os.environ.get("RAGCTL_CACHE")
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "ragctl"


def indexes_dir() -> Path:
    return home_dir() / "index"


def index_dir(name: str) -> Path:
    """The directory of one named index (it may not exist yet)."""
    if not _INDEX_NAME.match(name):
        raise ConfigError(
            f"bad index name {name!r}: use letters, digits, '.', '_' and '-' (up to 64)"
        )
    return indexes_dir() / name


@dataclass(frozen=True)
class Settings:
    """Every tunable default. Each one can be set in config.toml or as RAGCTL_<NAME>."""

    index: str = "default"
    store: str = ""  # "": SQLite + HNSW under the home; or a postgresql:// URL (shared)
    embedder: str = "all-MiniLM-L6-v2"
    chunk_words: int = 100
    max_sentence_words: int = 200
    max_file_mb: float = 50.0
    max_file_seconds: float = 120.0  # reading one file may take this long (0: no limit)
    embed_batch_size: int = 32
    hnsw_m: int = 16
    hnsw_ef_construction: int = 200
    hnsw_ef: int = 100
    search_limit: int = 10
    rrf_k: int = 60
    include_hidden: bool = False
    ocr: str = "auto"  # scans and images: auto | tesseract | rapidocr | none
    ocr_max_pages: int = 50  # pages read from one image file (a multi-page TIFF)
    ocr_max_megapixels: float = 40.0  # the largest page image decoded for OCR
    # ask
    generator: str = "gemma-3-270m"
    relevance: str = "minilm-re"  # models/; "similarity" is the fallback
    context_filter: str = "minilm-filter"
    reader: str = "minilm-reader"  # models/; "none": the generator answers in its own words
    nli: str = "minilm-nli"  # models/; "none": yes/no from the words the evidence names
    tableops: str = "minilm-tableops"  # models/; "none": nothing is computed from tables
    kinds: str = "minilm-kinds"  # models/; "none": the kind of answer from the question's form
    reader_passages: int = 3  # the most relevant passages the reader reads
    answer_threshold: float | None = None  # None: the reader's own (its manifest)
    quote_sentences: int = 2  # sentences quoted for "what does X say about Y" questions
    top_n: int = 20
    top_k: int = 5
    re_threshold: float | None = None  # None: the relevance estimator's own threshold
    filter_threshold: float = 0.3
    filter_top_m: int = 1
    max_answer_tokens: int = 48
    support_threshold: float = 0.5
    # ask --long
    long_words: int = 150
    long_facets: int = 3
    cluster_threshold: float = 0.35
    max_nuggets: int = 30
    n_ctx: int = 4096
    generator_threads: int = 0  # 0: the physical cores free to this process, at each answer
    device: str = "auto"
    compute_type: str = "auto"

    def replace(self, **changes: Any) -> Settings:
        return dataclasses.replace(self, **changes)


def _coerce(name: str, kind: Any, value: Any, source: str) -> Any:
    kind_name = kind if isinstance(kind, str) else kind.__name__
    if kind_name.endswith(" | None"):  # "auto" (or empty) leaves it to the model
        if value is None or str(value).strip().lower() in ("", "auto", "none"):
            return None
        kind_name = kind_name[: -len(" | None")]
    try:
        if kind_name == "bool":
            if isinstance(value, bool):
                return value
            text = str(value).strip().lower()
            if text in {"1", "true", "yes", "on"}:
                return True
            if text in {"0", "false", "no", "off"}:
                return False
            raise ValueError(value)
        if kind_name == "int":
            if isinstance(value, bool):
                raise ValueError(value)
            return int(value)
        if kind_name == "float":
            return float(value)
        if not isinstance(value, str):
            raise ValueError(value)
        return value
    except (TypeError, ValueError):
        raise ConfigError(f"{source}: {name} must be a {kind_name}, not {value!r}") from None


def _read_config_file(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        with path.open("rb") as f:
            return tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise ConfigError(f"cannot read {path}: {e}") from None


def write_setting(name: str, value: Any) -> Path:
    """Set one setting in config.toml, keeping the others; written atomically."""
    known = {f.name for f in fields(Settings)}
    if name not in known:
        raise ConfigError(f"unknown setting {name!r}")
    path = home_dir() / CONFIG_FILE
    values = _read_config_file(path)
    values = {k.replace("-", "_"): v for k, v in values.items()}
    values[name] = value
    lines = ["# ragctl settings (see docs/configuration.md)"]
    for key, v in values.items():
        if isinstance(v, bool):
            text = "true" if v else "false"
        elif isinstance(v, int | float):
            text = repr(v)
        else:
            text = '"' + str(v).replace("\\", "\\\\").replace('"', '\\"') + '"'
        lines.append(f"{key} = {text}")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".toml.tmp")
    tmp.write_text("\n".join(lines) + "\n")
    os.replace(tmp, path)
    return path


def load_settings(*, environ: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
    """Resolve settings: flags (``overrides``; None means unset) > env > config file > defaults.
    ``environ`` is the environment to read (``os.environ`` unless given: the service
    resolves a client's settings with the client's variables)."""
    environ = os.environ if environ is None else environ
    known = {f.name: f.type for f in fields(Settings)}
    values: dict[str, Any] = {}
    path = home_dir() / CONFIG_FILE
    for key, value in _read_config_file(path).items():
        name = key.replace("-", "_")
        if name not in known:
            raise ConfigError(
                f"{path}: unknown setting {key!r}; valid settings: {', '.join(sorted(known))}"
            )
        values[name] = _coerce(name, known[name], value, str(path))
    for name, kind in known.items():
        env = environ.get(f"RAGCTL_{name.upper()}")
        if env is not None and env != "":
            values[name] = _coerce(name, kind, env, f"RAGCTL_{name.upper()}")
    for name, value in overrides.items():
        if name not in known:
            raise ConfigError(f"unknown setting {name!r}")
        if value is not None:
            values[name] = value
    settings = Settings(**values)
    validate(settings)
    return settings


def validate(s: Settings) -> None:
    index_dir(s.index)
    positive = ("chunk_words", "max_sentence_words", "embed_batch_size", "hnsw_m",
                "hnsw_ef_construction", "hnsw_ef", "search_limit", "rrf_k", "top_n", "top_k",
                "filter_top_m", "max_answer_tokens", "n_ctx", "long_words", "long_facets",
                "max_nuggets", "reader_passages", "quote_sentences")
    for name in positive:
        if getattr(s, name) < 1:
            raise ConfigError(f"{name} must be at least 1, not {getattr(s, name)}")
    if s.answer_threshold is not None and not 0.0 <= s.answer_threshold <= 1.0:
        raise ConfigError(f"answer_threshold must be between 0 and 1, not {s.answer_threshold}")
    if s.re_threshold is not None and not 0.0 <= s.re_threshold <= 1.0:
        raise ConfigError(f"re_threshold must be between 0 and 1, not {s.re_threshold}")
    if s.device not in ("auto", "cpu", "cuda"):
        raise ConfigError(f"device must be auto, cpu or cuda, not {s.device!r}")
    if s.ocr not in ("auto", "none", "tesseract", "rapidocr"):
        raise ConfigError(f"ocr must be auto, tesseract, rapidocr or none, not {s.ocr!r}")
    if s.max_file_mb <= 0:
        raise ConfigError(f"max_file_mb must be positive, not {s.max_file_mb}")
    if s.ocr_max_pages < 1:
        raise ConfigError(f"ocr_max_pages must be at least 1, not {s.ocr_max_pages}")
    if s.ocr_max_megapixels < 1:
        raise ConfigError(f"ocr_max_megapixels must be at least 1, not {s.ocr_max_megapixels}")
