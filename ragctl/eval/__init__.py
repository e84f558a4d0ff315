"""Evaluation on public data: dataset readers (:mod:`.datasets`) and the papers'
measures through ragctl's own pipeline (:mod:`.evaluate`)."""
