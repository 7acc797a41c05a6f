r"""An intercept, privately: the real-data study's trade-off run again with a constant feature at a public scale.

Both algorithms fit separators through the origin. :func:`dplr.preprocessing.append_constant_feature` gives them an
intercept without touching their proofs: every record :math:`x` becomes :math:`(\sqrt{1 - s^2}\,x,\ s)` with a
public :math:`s`, still in the unit ball. Whether that helps is an empirical question -- the intercept comes at the
price of shrinking every other feature by :math:`\sqrt{1 - s^2}`, so their signal competes with more noise -- and
this module measures it on the real-data study's protocol:

* :func:`constant_feature_rows` runs Algorithm 3 with Algorithms 1 and 2 on the trade-off experiment of
  :mod:`dplr.replication.real.study` -- the same data, λ grid, ε grid and **the same streams**, so each repeat draws
  the same split as the study's record (the split depends only on :math:`n`): the records with and without the
  constant feature are paired repeat by repeat;
* :func:`paired_gains` applies **the rule fixed before the run** (:data:`SCALE` and :data:`ALPHA`): per data set,
  loss, method and ε, the per-repeat differences with − without of the released classifiers' test errors get a
  two-sided paired t-test and a 95% t-interval; the p-values of one data set and loss (both methods, every ε) are
  Holm-corrected at family-wise level :data:`ALPHA`. The non-private minimisers of the same parts (chosen by
  fewest validation errors) are compared too, outside the family, as a description.

Only Algorithms 1 and 2 are measured: today's other methods cost too much to rerun in a chapter.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from dplr.preprocessing import append_constant_feature
from dplr.replication.real_data import EPSILONS, HUBER_H, LAMBDAS, study_data, tradeoff_stream
from dplr.replication.statistics import holm, paired_t_test
from dplr.tuning import private_tuning_experiment

__all__ = ["SCALE", "ALPHA", "constant_feature_rows", "paired_gains"]

#: The public scale of the constant feature, fixed before the comparison (an equal split would be :math:`1/\sqrt2`;
#: a half keeps three quarters of the other features' squared norm).
SCALE = 0.5
#: Family-wise level of the Holm-corrected comparisons, per data set and loss.
ALPHA = 0.05


def constant_feature_rows(keys, losses, n_repeats, seed, scale=SCALE, data=None, n_jobs=None):
    """The trade-off experiment of the real-data study with the constant feature appended: one row per data set,
    loss, repeat, method and ε, as :func:`dplr.tuning.private_tuning_experiment` returns them, plus ``data``,
    ``loss`` and ``scale``. ``data`` maps keys to loaded data sets (:func:`dplr.replication.real_data.load_data`).
    ``scale=None``: without the constant feature -- the real-data study's own trade-off rows (its record's, for the
    same repeats), with ``part="tradeoff"``, as :func:`paired_gains` takes them."""
    out = []
    for key in keys:
        X, y, X_test, y_test = study_data(key, seed, data)
        if scale is not None:
            X, X_test = append_constant_feature(X, scale), append_constant_feature(X_test, scale)
        for loss in losses:
            rows = private_tuning_experiment(X, y, X_test, y_test, LAMBDAS, list(EPSILONS), n_repeats, loss=loss,
                                             huber_h=HUBER_H, random_state=tradeoff_stream(seed, key, loss),
                                             n_jobs=n_jobs)
            out.append(rows.assign(data=key, loss=loss, scale=float(scale)) if scale is not None else
                       rows.assign(data=key, loss=loss, part="tradeoff"))
    return pd.concat(out, ignore_index=True)


def paired_gains(with_constant, record_rows, level=0.95, alpha=ALPHA):
    """The rule of the module docstring: one row per data set, loss, method and ε with the mean difference
    with − without (negative: the constant feature helps), its t-interval, p-value, Holm-adjusted p-value (private
    methods only) and the verdict. ``record_rows`` are the real-data study's rows (its record); the trade-off rows of
    the repeats in ``with_constant`` are paired with them."""
    base = record_rows[record_rows.part == "tradeoff"]
    merged = with_constant.merge(base, on=["data", "loss", "method", "epsilon", "repeat"], suffixes=("", "_without"),
                                 validate="one_to_one")
    if len(merged) != len(with_constant):
        raise ValueError("some rows with the constant feature have no partner in the record (repeats beyond it?).")
    out = []
    for (data, loss, method, eps), group in merged.groupby(["data", "loss", "method", "epsilon"], sort=True):
        column = "error_nonprivate" if method == "nonprivate" else "error_private"
        diff = (group[column] - group[column + "_without"]).to_numpy()
        low, high, p = paired_t_test(diff, level)
        out.append({"data": data, "loss": loss, "method": method, "epsilon": eps, "mean_difference": float(diff.mean()),
                    "ci_low": low, "ci_high": high, "p": p, "repeats": diff.size})
    table = pd.DataFrame(out)
    private = table.method != "nonprivate"
    table["p_holm"] = np.nan
    table.loc[private, "p_holm"] = (table[private].groupby(["data", "loss"])["p"]
                                    .transform(lambda p: holm(p.to_numpy())))
    table["verdict"] = np.where(~private, "described, not tested",
                                np.where(table.p_holm >= alpha, "no difference shown",
                                         np.where(table.mean_difference < 0, "constant better", "without better")))
    return table
