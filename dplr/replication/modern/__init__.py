"""Beyond 2011 (issue 20): the book's algorithms beside the methods practitioners use today, on the real data.

* :mod:`~dplr.replication.modern.contenders` -- each contender as one private learner with its hyperparameter
  candidates, for :func:`dplr.tuning.private_tuning_with`
* :mod:`~dplr.replication.modern.audits` -- every contender's privacy claim, and broken variants of the new mechanisms,
  under the black-box auditor (:func:`~dplr.replication.modern.audits.contender_audits`)
"""
