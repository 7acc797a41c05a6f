"""The replications: Chaudhuri & Monteleoni (NIPS 2008, :mod:`dplr.replication.paper`) and Veldhuizen
(2020, :mod:`dplr.replication.thesis`), and what both share.

Each replication has its published numbers (``published``), its protocol or pipeline, and its
study (``study``). Shared:

* :mod:`dplr.replication.seeding` -- content-addressed random streams (results independent of workers)
* :mod:`dplr.replication.runner` -- independent tasks locally (joblib) or on a Dask cluster, same results
* :mod:`dplr.replication.statistics`, :mod:`dplr.replication.verdicts` -- intervals over folds, and
  the rule that judges every published number
* :mod:`dplr.replication.figures` -- the book's plotting style and the curve panels of both replications;
  :mod:`dplr.replication.tables` -- fixed-width text tables
* :mod:`dplr.replication.summary` -- every published number beside ours, for the summary page
* :mod:`dplr.replication.cli` -- ``python -m dplr reproduce``: every figure and table, as CSV and PNG

Everything here builds on the core (:mod:`dplr`), :mod:`dplr.analysis` and :mod:`dplr.datasets`.
"""
