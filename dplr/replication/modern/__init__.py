"""Beyond 2011 (issue 20): the book's algorithms beside the methods practitioners use today, on the real data.

* :mod:`~dplr.replication.modern.contenders` -- each contender as one private learner with its hyperparameter
  candidates, for :func:`dplr.tuning.private_tuning_with`
"""
