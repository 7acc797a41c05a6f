r"""The decision guide: which private pipeline to use, read off the records of the studies -- nothing typed.

A practitioner brings a data set of :math:`n` records in :math:`d` dimensions, a budget :math:`\varepsilon`, and
either no :math:`\delta` (pure :math:`\varepsilon`-DP) or a small one. The book measured every pipeline it
implements on two real data sets at their full training size (today's methods, :mod:`dplr.replication.modern`:
every contender tuned by Algorithm 3 over the same λ grid, at every ε of the study) and the two pure-ε
algorithms on nested subsamples (the real-data study, :mod:`dplr.replication.real`). This module turns those
records into the guide's tables; it tests nothing new:

* :func:`choices` -- per data set, loss and ε, the pipeline to use **with pure ε** (Algorithm 1 or Algorithm 2) and
  **with (ε, δ)** (any contender), each the one the studies' fixed comparison rule supports: a contender is
  "shown" better only where its Holm-corrected paired test says so (the rule of
  :func:`dplr.replication.modern.study.paired_comparisons`); otherwise the reference (Algorithm 2) is kept and the
  row says that nothing was shown. Beside each choice: its mean test error with a 95% t-interval, the excess over the
  non-private reference of the same study, and the wall seconds one private model cost when the record was written;
* :func:`size_table` -- the excess error of the pure-ε choice on subsamples, from the real-data study's learning
  curves: how the cost of privacy grows as :math:`n` shrinks;
* :func:`deployed_offsets` -- how far the studies' non-private reference lies above the model a practitioner would
  deploy (:mod:`dplr.replication.baseline`: standardised features, an intercept, λ by cross-validation), to add to
  every excess;
* :func:`tuning_table` -- the selection study's verdicts (:mod:`dplr.replication.real.selection`): where private
  selection or a data-independent λ was shown better or worse than Algorithm 3, at equal total privacy.

What the guide can say is bounded by what was measured: two data sets (:math:`n` about 33,000 and 40,000, :math:`d`
about 100), the studies' ε grid and λ grid, one δ. Outside that range it extrapolates, and the chapter says so.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from dplr.replication.tables import CONTENDER_NAMES, result_table, signed

__all__ = ["PURE_EPSILON", "REFERENCE", "choices", "size_table", "guide_table", "size_result_table", "intercept_table",
           "deployed_offsets", "deployed_table", "TUNERS", "tuning_table"]

#: The contenders whose guarantee is pure ε-DP (NIPS 2008 Algorithm 1; JMLR 2011's corrected Algorithm 2).
PURE_EPSILON = ("sensitivity", "objective")
#: The reference every comparison is made against (:data:`dplr.replication.modern.study.REFERENCE`).
REFERENCE = "objective"


def _pure_choice(comparison):
    """Algorithm 1 where the rule shows it better than Algorithm 2, else Algorithm 2 (shown better, or kept)."""
    if comparison is None:
        return REFERENCE, False
    if comparison.verdict == "sensitivity better":
        return "sensitivity", True
    return REFERENCE, comparison.verdict == REFERENCE + " better"


def choices(comparisons, recommendations, points, references, costs):
    """One row per data set, loss and ε: the pure-ε choice and the (ε, δ) choice, with their evidence.

    Parameters are the modern study's tables: ``comparisons``
    (:func:`~dplr.replication.modern.study.paired_comparisons`), ``recommendations``
    (:func:`~dplr.replication.modern.study.recommendations`), ``points``
    (:func:`~dplr.replication.modern.study.points`), ``references``
    (:func:`~dplr.replication.modern.study.references`: ``error_nonprivate_best``, non-private ERM's best test
    error over the λ grid, chosen on the test set -- a reference, not a learner) and ``costs``
    (:func:`~dplr.replication.modern.study.costs`: ``per_model`` wall seconds).

    Columns: ``data``, ``loss``, ``epsilon``; for ``pure`` and ``approx`` each: the method, whether the rule
    *showed* it better than the alternative (``*_shown``: for pure ε, Algorithm 1 shown better than Algorithm 2 or
    the reverse; for (ε, δ), a contender shown better than Algorithm 2), its mean test error and interval
    (``*_error``, ``*_low``, ``*_high``), its excess over the non-private reference (``*_excess``) and its seconds per
    private model (``*_seconds``, NaN where the record has no time).
    """
    mean = points.set_index(["data", "loss", "method", "epsilon"])
    reference = references.set_index(["data", "loss"])["error_nonprivate_best"]
    seconds = costs.set_index(["data", "loss", "method"])["per_model"]
    pairs = comparisons.set_index(["data", "loss", "method", "epsilon"])
    rows = []
    for _, advice in recommendations.sort_values(["data", "loss", "epsilon"]).iterrows():
        key = (advice.data, advice.loss)
        versus = (pairs.loc[(*key, "sensitivity", advice.epsilon)]
                  if (*key, "sensitivity", advice.epsilon) in pairs.index else None)
        pure, pure_shown = _pure_choice(versus)
        row = {"data": advice.data, "loss": advice.loss, "epsilon": float(advice.epsilon)}
        for kind, method, shown in (("pure", pure, pure_shown),
                                    ("approx", advice.use, advice.use != REFERENCE)):
            point = mean.loc[(*key, method, advice.epsilon)]
            row.update({kind: method, f"{kind}_shown": bool(shown), f"{kind}_error": float(point["mean"]),
                        f"{kind}_low": float(point["ci_low"]), f"{kind}_high": float(point["ci_high"]),
                        f"{kind}_excess": float(point["mean"] - reference[key]),
                        f"{kind}_seconds": float(seconds.get((*key, method), np.nan))})
        rows.append(row)
    return pd.DataFrame(rows)


def size_table(points):
    """The cost of privacy as the training set shrinks, from the real-data study's ``points``
    (:class:`~dplr.replication.real.study.RealStudy`): per data set, loss, ε of the learning curves and size
    :math:`n`, the lower of the two pure-ε methods' mean test errors (``method``: which), the non-private reference
    at that size (``nonprivate``: ERM on the same records with the λ its own choice picks most often) and the
    excess. The lower mean is a description of the record, not a tested choice: the chapter on real data tests
    the two methods against each other at every point."""
    curve = points[points.part.isin(["curve", "tradeoff"])]
    # the whole-set point is both the trade-off's and the curve's: one reference per data set, loss and size
    nonprivate = (curve[curve.method == "nonprivate"].drop_duplicates(["data", "loss", "n"])
                  .set_index(["data", "loss", "n"])["mean"])
    curve_eps = set(points[points.part == "curve"].epsilon)
    private = (curve[curve.method.isin(PURE_EPSILON) & curve.epsilon.isin(curve_eps)]
               .drop_duplicates(["data", "loss", "method", "epsilon", "n"]))
    rows = []
    for (data, loss, eps, n), group in private.groupby(["data", "loss", "epsilon", "n"], sort=True):
        best = group.sort_values(["mean", "method"]).iloc[0]
        reference = nonprivate.get((data, loss, n), np.nan)
        rows.append({"data": data, "loss": loss, "epsilon": float(eps), "n": int(n), "method": best.method,
                     "error": float(best["mean"]), "nonprivate": float(reference),
                     "excess": float(best["mean"] - reference)})
    return pd.DataFrame(rows)


_LOSS_ORDER = {"logistic": 0, "huber": 1}
_LOSS_NAMES = {"logistic": "logistic", "huber": "Huber"}


def guide_table(rows, key, name, caption=None):
    """The guide's table for data set ``key`` from :func:`choices`: per loss and ε, the pure-ε and the (ε, δ) choice,
    each with its mean test error (95% t-interval half-width), its excess over the non-private reference and its
    seconds per private model. A choice the comparison rule did not show better than its alternative is marked "*"
    (kept for want of a shown difference)."""
    sub = rows[rows.data == key]
    sub = sub.assign(_l=sub.loss.map(_LOSS_ORDER)).sort_values(["_l", "epsilon"])
    out = []
    for _, r in sub.iterrows():
        line = {"loss": _LOSS_NAMES.get(r.loss, r.loss), "ε": f"{r.epsilon:g}"}
        for kind, title in (("pure", "pure ε"), ("approx", "(ε, δ)")):
            mark = "" if r[f"{kind}_shown"] else "*"
            line[title] = CONTENDER_NAMES[r[kind]] + mark
            half = (r[f"{kind}_high"] - r[f"{kind}_low"]) / 2
            line[f"{title}: error"] = f"{r[f'{kind}_error']:.3f} ± {half:.3f}"
            line[f"{title}: excess"] = signed(r[f"{kind}_excess"], 3)
            line[f"{title}: s"] = f"{r[f'{kind}_seconds']:.2f}"
        out.append(line)
    right = [c for c in out[0] if c not in ("loss", "pure ε", "(ε, δ)")]
    return result_table(out, name=name, caption=caption, right=right, compact=True)


def size_result_table(sizes, name, caption=None, names=None):
    """:func:`size_table` as a table: per data set, loss and ε (rows) and training-set size (columns), the excess
    test error of the better pure-ε method over the non-private reference at that size; ``names`` maps the data sets'
    keys to the names shown."""
    frame = sizes.assign(_l=sizes.loss.map(_LOSS_ORDER))
    out = []
    for (data, _, loss, eps), group in frame.groupby(["data", "_l", "loss", "epsilon"], sort=True):
        line = {"data": (names or {}).get(data, data), "loss": _LOSS_NAMES.get(loss, loss), "ε": f"{eps:g}"}
        for i, (_, r) in enumerate(group.sort_values("n").iterrows()):
            line[f"n{i + 1}"] = f"{r.n:,}: {signed(r.excess, 3)}"
        out.append(line)
    return result_table(out, name=name, caption=caption, right=[c for c in out[0] if c.startswith("n")],
                        rename={f"n{i}": f"size {i}" for i in range(1, 9)}, compact=True)


def intercept_table(gains, name, caption=None, names=None, epsilons=None):
    """The constant feature's paired comparisons (:func:`dplr.replication.real.intercept.paired_gains`) as a table:
    per data set, loss and method (rows) and ε (columns), the mean difference with − without in test error and the
    rule's verdict -- "better" or "worse" with the constant feature where the Holm-corrected test supports it, "~"
    where it does not. ``names`` maps the data sets' keys to the names shown; ``epsilons`` keeps those ε only (a
    narrower table)."""
    private = gains[gains.method != "nonprivate"]
    if epsilons is not None:
        private = private[private.epsilon.isin(list(epsilons))]
    private = private.assign(_l=private.loss.map(_LOSS_ORDER))
    out = []
    for (data, _, loss, method), group in private.groupby(["data", "_l", "loss", "method"], sort=True):
        line = {"data": (names or {}).get(data, data), "loss": _LOSS_NAMES.get(loss, loss),
                "method": CONTENDER_NAMES[method]}
        for _, r in group.sort_values("epsilon").iterrows():
            word = {"constant better": "better", "without better": "worse"}.get(r.verdict, "~")
            line[f"ε = {r.epsilon:g}"] = f"{signed(r.mean_difference)} {word}"
        out.append(line)
    return result_table(out, name=name, caption=caption, right=[c for c in out[0] if c.startswith("ε")],
                        compact=True)


def deployed_offsets(baseline_rows, references):
    """Per data set and loss: the deployed baseline's test error and λ (stage ``B0`` of the baseline record,
    :mod:`dplr.replication.baseline`), the studies' non-private reference (``error_nonprivate_best`` of
    :func:`dplr.replication.modern.study.references`) and ``offset``, the reference minus the baseline: the amount to add
    to an excess over the reference for the excess over the deployed model. For the Huber SVM the deployed model is
    the logistic one (the baseline study's choice: the best deployable linear model)."""
    b0 = baseline_rows[baseline_rows.stage == "B0"].drop_duplicates(["data", "loss"]).set_index(["data", "loss"])
    rows = []
    for _, ref in references.iterrows():
        base = b0.loc[(ref.data, ref.loss)]
        rows.append({"data": ref.data, "loss": ref.loss, "deployed": float(base.error), "deployed_lam": float(base.lam),
                     "reference": float(ref.error_nonprivate_best),
                     "offset": float(ref.error_nonprivate_best - base.error)})
    return pd.DataFrame(rows)


def deployed_table(offsets, name, caption=None, names=None):
    """:func:`deployed_offsets` as a table; ``names`` maps the data sets' keys to the names shown."""
    frame = offsets.assign(_l=offsets.loss.map(_LOSS_ORDER)).sort_values(["data", "_l"])
    out = [{"data": (names or {}).get(r.data, r.data), "loss": _LOSS_NAMES.get(r.loss, r.loss),
            "deployed: error": f"{r.deployed:.4f}", "deployed: λ": f"{r.deployed_lam:.0e}",
            "reference": f"{r.reference:.4f}", "add to every excess": signed(r.offset, 4)}
           for _, r in frame.iterrows()]
    return result_table(out, name=name, caption=caption, right=[c for c in out[0] if c not in ("data", "loss")],
                        compact=True)


#: The tuners of the selection study compared with Algorithm 3, with the names the guide shows.
TUNERS = {"selection": "private selection", "rule": "fixed λ"}


def tuning_table(comparisons, name, caption=None):
    """The selection study's comparisons with Algorithm 3 (:func:`dplr.replication.real.selection.
    selection_comparisons`): per contender and tuner (rows) and ε (columns), the mean difference of test errors,
    tuner − Algorithm 3, with "better" or "worse" where the fixed, Holm-corrected rule shows a difference."""
    vs = comparisons[comparisons.contrast.isin([f"{t} - algorithm3" for t in TUNERS])]
    epsilons = sorted(vs.epsilon.unique())
    out = []
    for contender in dict.fromkeys(vs.contender):
        for tuner, title in TUNERS.items():
            sub = vs[(vs.contender == contender) & (vs.contrast == f"{tuner} - algorithm3")].set_index("epsilon")
            if sub.empty:
                continue
            line = {"learner": CONTENDER_NAMES[contender], "tuner": title}
            for eps in epsilons:
                if eps not in sub.index:
                    line[f"ε = {eps:g}"] = ""
                    continue
                r = sub.loc[eps]
                mark = {f"{tuner} better": " better", "algorithm3 better": " worse"}.get(r.verdict, "")
                line[f"ε = {eps:g}"] = signed(r.mean_difference, 3) + mark
            out.append(line)
    return result_table(out, name=name, caption=caption, right=[f"ε = {e:g}" for e in epsilons], compact=True)
