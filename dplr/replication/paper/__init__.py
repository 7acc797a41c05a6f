"""Chaudhuri & Monteleoni, NIPS 2008, Section 6: published numbers, protocol, and the study.

* :mod:`~dplr.replication.paper.published` -- Figure 1, the ranges of Figure 2, the text's claims
* :mod:`~dplr.replication.paper.protocol` -- data, readings, tasks, the Figure 1 variants
* :mod:`~dplr.replication.paper.lambda_tuning` -- λ by cross-validation on a holdout
* :mod:`~dplr.replication.paper.summaries` -- a cell's errors, the std readings, curves, the correction
* :mod:`~dplr.replication.paper.study` -- the whole study (:func:`~dplr.replication.paper.study.run_replication`)
"""
