"""The read path: a question in, a cited answer out.

``retrieve`` finds passages (HNSW and BM25, fused), ``answer`` chooses and trims span
answers, ``verify`` checks citations, ``longform`` writes long answers from nuggets and
facets, and ``pipeline`` runs the stages in order.
"""
