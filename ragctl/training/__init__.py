"""The training toolchain: silver labels, training, quantized export (``ragctl[train]``).

- :mod:`.silver` — FilCo's silver labels (StrInc, Lexical, CXMI) and the generator's
  passage likelihoods that the relevance estimator learns from; :mod:`.synth` writes
  training questions from a user's own documents;
- :mod:`.trainer` — trains a filter or a relevance estimator (RE-RAG's KL objective) as one
  of the :mod:`.architectures`;
- :mod:`.export` — converts a run to a CTranslate2 model, int8 weights rounded by
  :mod:`.quantize` (GPTQ).

Nothing here is imported when ``ask`` runs; torch and transformers load on first use.
"""
