"""The cost of privacy on Adult and KDDCup99: the non-private baseline a practitioner would deploy, and the gap
between it and each private pipeline decomposed into its parts (issue 39).

* :mod:`~dplr.replication.baseline.study` -- the chain of pipelines, its paired parts and the study
  (:func:`~dplr.replication.baseline.study.run_baseline_study`)
* :mod:`~dplr.replication.baseline.record` -- its record's format
"""
