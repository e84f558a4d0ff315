from __future__ import annotations

from pathlib import Path

import pytest

from ragctl.config import Settings, home_dir, index_dir, load_settings
from ragctl.errors import ConfigError


def test_defaults(ragctl_home: Path, model_defaults: None) -> None:
    assert home_dir() == ragctl_home.resolve()
    assert load_settings() == Settings()
    assert (Settings().relevance, Settings().context_filter) == ("minilm-re", "minilm-filter")


def test_precedence_flag_env_file_default(ragctl_home: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    (ragctl_home / "config.toml").write_text('chunk_words = 80\nindex = "notes"\nhnsw_ef = 50\n')
    s = load_settings()
    assert (s.chunk_words, s.index, s.hnsw_ef) == (80, "notes", 50)
    monkeypatch.setenv("RAGCTL_CHUNK_WORDS", "120")
    monkeypatch.setenv("RAGCTL_INCLUDE_HIDDEN", "yes")
    s = load_settings()
    assert s.chunk_words == 120 and s.include_hidden is True and s.index == "notes"
    s = load_settings(chunk_words=60, index=None)
    assert s.chunk_words == 60 and s.index == "notes"


@pytest.mark.parametrize("content, message", [
    ("chunk_wrds = 3", "unknown setting 'chunk_wrds'"),
    ('chunk_words = "many"', "chunk_words must be a int"),
    ("chunk_words = 0", "at least 1"),
    ("this is not toml", "cannot read"),
    ('index = "../escape"', "bad index name"),
])
def test_bad_config_is_a_clear_error(ragctl_home: Path, content: str, message: str) -> None:
    (ragctl_home / "config.toml").write_text(content)
    with pytest.raises(ConfigError, match=message):
        load_settings()


def test_bad_env_value(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAGCTL_MAX_FILE_MB", "lots")
    with pytest.raises(ConfigError, match="RAGCTL_MAX_FILE_MB"):
        load_settings()


def test_index_dir(ragctl_home: Path) -> None:
    assert index_dir("mail") == ragctl_home.resolve() / "index" / "mail"
