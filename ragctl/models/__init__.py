"""Every model ragctl runs, by name: embedders, relevance estimators, context filters,
span readers and generators.

``registry`` maps names to backends (``load``, ``register``, ``available``); ``backends``
declares what each kind of model does; ``ct2`` runs exported CTranslate2 models, ``embed``
the sentence embedder, ``generate`` and ``llamacpp`` the GGUF generator in llama.cpp,
``relevance`` and ``filter`` RE-RAG's estimator and FilCo's filter. Heavy libraries load
inside the backend that needs them.
"""

from ragctl.models.manifest import bundled_models_dir, search_dirs
from ragctl.models.registry import (
    KINDS,
    ModelInfo,
    available,
    canonical,
    check,
    check_settings,
    exported,
    find_model,
    keep_loaded,
    kept,
    load,
    locate,
    model_dir,
    read_manifest,
    register,
    registered,
    release,
    spec,
    unregister,
    use,
)

__all__ = ["KINDS", "ModelInfo", "available", "bundled_models_dir", "canonical", "check",
           "check_settings", "exported", "find_model", "keep_loaded", "kept", "load",
           "locate", "model_dir", "read_manifest", "register", "registered", "release",
           "search_dirs", "spec", "unregister", "use"]
