"""The read path: a question in, a cited answer out.

``pipeline`` is entered once per question: it runs the loaded ``stages`` (``retrieve``
finds passages, HNSW and BM25 fused; relevance, context filter) and dispatches once, on
the form ``question`` finds, to a strategy — ``span`` (with ``fields`` first), ``choice``,
``quote``, ``yesno``, ``free`` — which calls down into ``documents`` and ``rules`` and never
back; ``answer`` chooses and trims span answers, ``verify`` checks citations, ``longform``
writes long answers from nuggets and facets.
"""
