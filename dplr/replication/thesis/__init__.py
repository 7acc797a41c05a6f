"""Veldhuizen (2020): published numbers, data, the pipeline as switches, and the study.

* :mod:`~dplr.replication.thesis.published` -- Table 2, the text's numbers, the protocol
* :mod:`~dplr.replication.thesis.data` -- the simulated sets, the breast-cancer subset, the folds
* :mod:`~dplr.replication.thesis.pipeline` -- the pipeline's switches, a sound pipeline, fitting and evaluation
* :mod:`~dplr.replication.thesis.cells` -- cells of the protocol, their runner and summaries, λ search, verdicts
* :mod:`~dplr.replication.thesis.diagnosis` -- every combination of switches, ranked against the published numbers
* :mod:`~dplr.replication.thesis.study` -- the whole study (:func:`~dplr.replication.thesis.study.run_thesis_study`)
"""
