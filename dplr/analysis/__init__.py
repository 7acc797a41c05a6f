"""Analysis of the private learners: what their guarantees mean, and whether they hold.

* :mod:`dplr.analysis.neighbours` -- neighbouring data sets, and the hard pairs the book uses
* :mod:`dplr.analysis.privacy_loss` -- exact privacy loss of both algorithms (change of variables for
  Algorithm 2) and the proven bounds; :mod:`dplr.analysis.privacy_loss_search` -- its largest value, by search
* :mod:`dplr.analysis.sensitivity` -- adversarial search for the neighbours that move the minimiser most;
  :mod:`dplr.analysis.lasso` -- the same for L1-regularised ERM, which has no such bound
* :mod:`dplr.analysis.guarantees` -- the learning guarantees (Lemmas 3-4, Theorems 4-5) and their simulation
* :mod:`dplr.analysis.audit` -- black-box privacy auditing with Clopper-Pearson bounds;
  :mod:`dplr.analysis.auditable` -- the library's mechanisms as auditable callables;
  :mod:`dplr.analysis.broken` -- deliberately broken mechanisms for the audit to catch

Everything here builds on the core (:mod:`dplr`) and on nothing else of the package.
"""
