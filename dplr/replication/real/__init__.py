"""The real-data study of Chaudhuri, Monteleoni & Sarwate (JMLR 2011, Section 7): Adult and KDDCup99.

* :mod:`~dplr.replication.real.study` -- the protocol, the fixed comparison rule and the study
  (:func:`~dplr.replication.real.study.run_real_study`)
"""
