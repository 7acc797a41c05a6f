r"""Tuning that does not waste the data: private selection against Algorithm 3 on Adult and KDDCup99, at equal total
privacy.

Six **contenders** (private learners) and up to three **tuners** each, every release private in total at the
study's ε, tested on the data set's test set (logistic loss); :data:`STUDY_ARMS` says which arms run on which data
set (on KDDCup99 all but DP-SGD's and Gaussian objective perturbation's, :data:`KDD_ARMS`):

* contenders: ``"objective"`` (Algorithm 2, :func:`dplr.algorithms.objective_perturbation`, dplr's default release)
  and ``"sensitivity"`` (Algorithm 1, :func:`dplr.algorithms.sensitivity_method`, its default release at
  ``tol`` = :data:`SENSITIVITY_TOL`), both ε-DP over :data:`GRID`; ``"dpsgd"`` (:func:`dplr.dpsgd.dp_sgd`), (ε, δ)-DP
  with δ = :data:`DELTA`, over :data:`DPSGD_GRID` (clipping norm × lot size × λ, 5 epochs); and, added after the
  first record was analysed, the (ε, δ) Gaussian contenders of the modern study (:data:`GAUSSIAN_CONTENDERS`):
  ``"gaussian_output"`` (:func:`dplr.algorithms.gaussian_output_perturbation`, certified at ``tol`` =
  :data:`SENSITIVITY_TOL`), ``"gaussian_objective"`` (:func:`dplr.algorithms.gaussian_objective_perturbation`) and
  ``"amp"`` (:func:`dplr.algorithms.approximate_minima_perturbation`), each at δ = :data:`DELTA` in its default
  release, over :data:`GRID`, on Adult; on KDDCup99 Gaussian output perturbation and AMP only (Gaussian objective
  perturbation's default solver tolerance γ = 1/n², 6.25e-10 at n = 40,000, cannot be certified in float64 at
  λ = 1e-6 there, and its default release refuses it);
* ``"algorithm3"``: JMLR 2011's Algorithm 3 (:func:`dplr.tuning.private_tuning_experiment` for Algorithm 2,
  :func:`dplr.tuning.private_tuning_with` for the others, the (ε, δ) ones at δ = :data:`DELTA`: the parts are
  disjoint and the exponential mechanism is ε-DP, so the release is (ε, δ)-DP): each candidate trains on one part of
  ``len(candidates) + 1``;
* ``"selection"``: Liu & Talwar's random stopping (:func:`dplr.selection.private_selection`), each run on the whole
  training set, γ = :data:`STOP_PROBABILITY`, score share :data:`SCORE_SHARE`; for the (ε, δ) contenders (DP-SGD and
  the Gaussian ones) with ``delta`` = δ, each
  run at :func:`dplr.selection.run_budget` (the book's (ε, δ) proposition), and for DP-SGD the fraction of clipped
  per-example gradients of the released run is recorded (``clipped``, a diagnostic);
* ``"rule"`` (Algorithms 1 and 2 only): one fit at the whole ε with the data-independent λ
  (:func:`dplr.selection.data_independent_lambda`), no tuning.

Algorithms 1 and 2 run in dplr's default release (for Algorithm 2, ``release="certified"``, the release the book's
theorem covers for the solver's point; also inside Algorithm 3), nothing pinned: the record is what the library
releases.

:data:`GRID` runs from 1e-6 (where Adult's non-private optimum lies) to 0.1, one λ per decade, so no curve is
capped by its floor; the real-data study's grid (:data:`dplr.replication.real_data.LAMBDAS`, floor 1e-3) is
Algorithm 3's as published.

**The comparison rule, fixed before any run** (:func:`selection_comparisons`): at every ε of :data:`EPSILONS`, the
per-repeat differences of test errors of :data:`CONTRASTS` -- for each of the first three contenders
(:data:`ORIGINAL_CONTENDERS`), selection − algorithm3,
rule − algorithm3 and rule − selection, where both exist (7 contrasts) -- get a two-sided paired t-test and a 95%
t-interval (:func:`dplr.replication.statistics.paired_t_test`); the p-values of all of them on one data set (7
contrasts × 4 ε on Adult) are Holm-corrected at family-wise level :data:`ALPHA` = 0.05. Each data set is its own
family: KDDCup99 joined after Adult's record was analysed, and Adult's family, hence its verdicts, stay as they were.
**Added later** (after the first record's verdicts were read): the Gaussian contenders' contrasts,
:data:`GAUSSIAN_CONTRASTS` (selection − algorithm3 for each, at every ε), the same test, are a Holm family of their
own per data set (3 contrasts × 4 ε on Adult, 2 × 4 on KDDCup99), so the first family's adjusted p-values and
verdicts are unchanged (``selection_comparisons(rows, contrasts=GAUSSIAN_CONTRASTS)``). A contrast "supports" a
difference only when its
Holm-adjusted p-value is below :data:`ALPHA`; the sign of the mean says which is better. Contenders are not compared
with each other (DP-SGD's δ makes its privacy differ). The repeats are paired by index only (each arm draws from its
own stream), which the paired test allows. Contenders are not compared across families either.

Streams: :func:`dplr.replication.seeding.task_stream` keyed by ("selection-study", data, arm, ε) -- for Algorithm 3
its repeats spawn from that stream in order, for the others repeat ``r`` adds ``r`` to the key -- so repeat ``r``
is the same in a run of 3 repeats and of 30 (the chapter recomputes a prefix). The record is written by
``python -m dplr reproduce selection`` (``make selection-record``).
"""
from __future__ import annotations

import time
from functools import partial

import numpy as np
import pandas as pd

from dplr.algorithms import (approximate_minima_perturbation, gaussian_objective_perturbation,
                             gaussian_output_perturbation, objective_perturbation, sensitivity_method)
from dplr.dpsgd import dpsgd_calibration, dpsgd_train_with_clipping
from dplr.replication import record
from dplr.replication.real_data import DEFAULT_SEED, DELTA, DPSGDConfig, dpsgd_parameters, study_data
from dplr.replication.seeding import task_stream
from dplr.replication.statistics import holm, paired_t_test, t_interval
from dplr.selection import data_independent_lambda, private_selection
from dplr.tuning import private_tuning_experiment, private_tuning_with, test_error

__all__ = ["GRID", "DPSGD_CLIP_NORMS", "DPSGD_LOTS", "DPSGD_LAMBDAS", "DPSGD_EPOCHS", "DPSGD_STEP", "DPSGD_GRID",
           "DELTA", "SENSITIVITY_TOL", "EPSILONS", "STOP_PROBABILITY", "SCORE_SHARE", "ALPHA", "CONTENDERS", "ARMS",
           "METHODS", "CONTRASTS", "ORIGINAL_CONTENDERS", "GAUSSIAN_CONTENDERS",
           "GAUSSIAN_CONTRASTS", "KDD_ARMS", "STUDY_ARMS", "DEFAULT_REPEATS", "FORMAT", "run_selection_study",
           "wall_seconds_key", "selection_points",
           "selection_comparisons", "write_selection_record", "read_selection_record", "check_against_record",
           "compare_selection_records", "merge_selection_records"]

GRID = tuple(10.0 ** np.arange(-6.0, 0.0))  # 1e-6, ..., 1e-1
#: DP-SGD's clipping norms: per-example gradients have norm |ℓ'|·‖x‖ <= 1, so C = 1 never clips; the smaller ones
#: bind (the chapter measures how often).
DPSGD_CLIP_NORMS = (0.01, 0.03, 0.1, 0.3, 1.0)
#: DP-SGD's expected lot sizes (Poisson sampling rate = lot / records)
DPSGD_LOTS = (256, 1024)
#: DP-SGD's ridge λ: the floor of :data:`GRID` and 1e-3 (a larger λ with the learning rates of small C diverges:
#: the step multiplies w by 1 - ηλ)
DPSGD_LAMBDAS = (1e-6, 1e-3)
DPSGD_EPOCHS = 5
#: the learning rate is DPSGD_STEP / C: a lot's mean clipped gradient has norm at most C, so a step moves w by at
#: most DPSGD_STEP plus noise, whatever C
DPSGD_STEP = 2.0
#: DP-SGD's candidates, every (C, lot, λ): :class:`dplr.replication.real_data.DPSGDConfig`
DPSGD_GRID = tuple(DPSGDConfig(DPSGD_EPOCHS, DPSGD_STEP / clip, clip, lam, lot)
                   for clip in DPSGD_CLIP_NORMS for lot in DPSGD_LOTS for lam in DPSGD_LAMBDAS)
#: Algorithm 1's certified gradient norm (``tol`` of :func:`dplr.algorithms.sensitivity_method`): its default,
#: 1e-8, cannot be certified in float64 at λ = 1e-6; 1e-7 can, and adds n·tol/L <= 0.4% to the noise on Adult
SENSITIVITY_TOL = 1e-7
EPSILONS = (0.1, 0.3, 1.0, 3.0)
STOP_PROBABILITY = 0.1  # γ: ten runs expected
SCORE_SHARE = 0.1  # the share of each run's ε spent on its noisy training error
ALPHA = 0.05
#: The contenders of the rule fixed before the first runs (:data:`CONTRASTS`)
ORIGINAL_CONTENDERS = ("objective", "sensitivity", "dpsgd")
#: The (ε, δ) Gaussian contenders of the modern study, added after the first record was analysed (their own Holm
#: family, :data:`GAUSSIAN_CONTRASTS`): :func:`dplr.algorithms.gaussian_output_perturbation`,
#: :func:`dplr.algorithms.gaussian_objective_perturbation` and :func:`dplr.algorithms.approximate_minima_perturbation`
GAUSSIAN_CONTENDERS = ("gaussian_output", "gaussian_objective", "amp")
CONTENDERS = ORIGINAL_CONTENDERS + GAUSSIAN_CONTENDERS
METHODS = ("algorithm3", "selection", "rule")
#: (contender, tuner) pairs the study runs; DP-SGD and the Gaussian contenders have no data-independent rule
#: (:func:`dplr.selection.data_independent_lambda` covers Algorithms 1 and 2 only)
ARMS = tuple((c, m) for c in CONTENDERS for m in METHODS if m != "rule" or c in ("objective", "sensitivity"))
#: (contender, first, second): the differences first − second the rule fixed before the first runs tests, every
#: original contender against itself
CONTRASTS = tuple((c, first, second) for c in ORIGINAL_CONTENDERS
                  for first, second in (("selection", "algorithm3"), ("rule", "algorithm3"), ("rule", "selection"))
                  if (c, first) in ARMS and (c, second) in ARMS)
#: The Gaussian contenders' contrasts (selection − algorithm3), a Holm family of their own per data set
GAUSSIAN_CONTRASTS = tuple((c, "selection", "algorithm3") for c in GAUSSIAN_CONTENDERS)
#: The arms run on KDDCup99 (:func:`dplr.replication.real_data.load_data` ``("kdd")``, the real-data study's sample):
#: Algorithms 1 and 2's, Gaussian output perturbation's and AMP's. DP-SGD's are left out for their cost: its private
#: selection makes about ten DP-SGD runs of 5 epochs per release, and at ten repeats and four ε it did not fit the time
#: the record was written in. Of the Gaussian contenders, added later, Gaussian objective perturbation is left out:
#: its default release refuses λ = 1e-6 on the whole of KDDCup99 (module docstring)
KDD_ARMS = tuple(arm for arm in ARMS if arm[0] in ("objective", "sensitivity", "gaussian_output", "amp"))
#: The data sets of the study and the arms run on each (``python -m dplr reproduce selection`` runs them all)
STUDY_ARMS = {"adult": ARMS, "kdd": KDD_ARMS}
DEFAULT_REPEATS = 10

#: The record's format (:mod:`dplr.replication.record`): one row per contender, tuner, ε and repeat; ``n_fits`` is
#: how many private fits the tuner ran (Algorithm 3: one per candidate; selection: the random number of runs; rule:
#: 1); ``clip_norm``, ``lot`` and ``clipped`` (the fraction of clipped per-example gradients in the released run,
#: selection only) are DP-SGD's, empty for the others.
FORMAT = record.RecordFormat(
    columns=("data", "n", "contender", "method", "epsilon", "repeat", "lam", "clip_norm", "lot", "error", "n_fits",
             "clipped"),
    key=("data", "contender", "method", "epsilon", "repeat"), exact=("lam", "clip_norm", "lot", "n_fits", "clipped"),
    errors=("error",), close=(), floats=("epsilon", "lam", "clip_norm", "lot", "clipped"),
    fix="write the record again with python -m dplr reproduce selection (or make selection-record)",
    unchecked_settings=("wall_seconds",))


def _stream(seed, data, contender, method, eps, *rest):
    # Algorithm 2's arms keep the keys they had before the other contenders joined
    name = method if contender == "objective" else f"{contender}-{method}"
    return task_stream(seed, "selection-study", data, name, str(float(eps)), *rest)


def _dpsgd_fit(X, y, config, epsilon, random_state, delta, clipped=None):
    """DP-SGD at (ε, δ) with ``config`` (:func:`dplr.dpsgd.dpsgd_calibration` then
    :func:`dplr.dpsgd.dpsgd_train_with_clipping`, as :func:`dplr.dpsgd.dp_sgd` does), appending the run's fraction of clipped gradients to the list ``clipped`` if
    given (a diagnostic)."""
    p = dpsgd_parameters(config, len(y))
    calibration = dpsgd_calibration(epsilon, delta, p["sampling_rate"], p["steps"], p["clip_norm"])
    coef, fraction = dpsgd_train_with_clipping(X, y, calibration.noise_multiplier, p["clip_norm"], p["sampling_rate"],
                                               p["steps"], p["learning_rate"], p["lam"], random_state=random_state,
                                               check_input=False, rounding=p["rounding"])  # the record's arithmetic
    if clipped is not None:
        clipped.append(fraction)
    return coef


def _sensitivity_fit(X, y, lam, epsilon, random_state):
    """Algorithm 1 (:func:`dplr.algorithms.sensitivity_method`, its default release) at :data:`SENSITIVITY_TOL`."""
    return sensitivity_method(X, y, epsilon, lam, random_state=random_state, check_input=False, tol=SENSITIVITY_TOL)


_GAUSSIAN_LEARNERS = {"gaussian_output": gaussian_output_perturbation,
                      "gaussian_objective": gaussian_objective_perturbation,
                      "amp": approximate_minima_perturbation}


def _gaussian_fit(X, y, lam, epsilon, random_state, delta, contender):
    """A Gaussian contender (:data:`GAUSSIAN_CONTENDERS`) at (ε, δ) and λ, in its default release; output
    perturbation certified at ``tol`` = :data:`SENSITIVITY_TOL` (its default, 1e-8, cannot be certified at λ = 1e-6,
    as for Algorithm 1)."""
    options = {"tol": SENSITIVITY_TOL} if contender == "gaussian_output" else {}
    return _GAUSSIAN_LEARNERS[contender](X, y, epsilon, delta, lam, random_state=random_state, check_input=False,
                                         **options)


def _fit_of(contender, delta=DELTA):
    """The contender's ``fit(X, y, candidate, epsilon, random_state)``, at δ = ``delta`` for the (ε, δ) ones
    (``delta=None``: the (ε, δ) ones take δ as a last argument, as :func:`dplr.selection.private_selection` passes
    it)."""
    if contender in _GAUSSIAN_LEARNERS:
        fit = partial(_gaussian_fit, contender=contender)
    else:
        fit = {"objective": None, "sensitivity": _sensitivity_fit, "dpsgd": _dpsgd_fit}[contender]
    return partial(fit, delta=delta) if delta is not None and contender in _DELTA_CONTENDERS else fit


_DELTA_CONTENDERS = ("dpsgd",) + GAUSSIAN_CONTENDERS


def _candidates(contender):
    return DPSGD_GRID if contender == "dpsgd" else GRID


def _row(contender, candidate, **values):
    if contender == "dpsgd":
        return {"lam": candidate.lam, "clip_norm": candidate.clip_norm, "lot": float(candidate.lot), **values}
    return {"lam": float(candidate), "clip_norm": np.nan, "lot": np.nan, **values}


def _run_arm(contender, method, X, y, X_test, y_test, eps, n_repeats, stream_of):
    n, d = X.shape
    if method == "algorithm3" and contender == "objective":
        table = private_tuning_experiment(X, y, X_test, y_test, GRID, [eps], n_repeats, methods=("objective",),
                                          random_state=stream_of(), n_jobs=1)
        return [_row(contender, r.lam_private, repeat=int(r.repeat), error=r.error_private, n_fits=len(GRID),
                     clipped=np.nan) for r in table.itertuples()]
    if method == "algorithm3":
        candidates = _candidates(contender)
        table = private_tuning_with(_fit_of(contender), X, y, X_test, y_test, candidates, [eps], n_repeats,
                                    name=contender, random_state=stream_of(), n_jobs=1)
        return [_row(contender, candidates[int(r.candidate)], repeat=int(r.repeat), error=r.error_private,
                     n_fits=len(candidates), clipped=np.nan) for r in table.itertuples()]
    rows = []
    for r in range(n_repeats):
        stream, clipped = stream_of(r), np.nan
        if method == "selection" and contender == "dpsgd":
            fractions = []
            out = private_selection(X, y, DPSGD_GRID, eps, STOP_PROBABILITY, SCORE_SHARE,
                                    fit=partial(_dpsgd_fit, clipped=fractions), random_state=stream, delta=DELTA)
            clipped = fractions[int(np.argmax(out.scores))]
        elif method == "selection" and contender in GAUSSIAN_CONTENDERS:
            out = private_selection(X, y, GRID, eps, STOP_PROBABILITY, SCORE_SHARE, fit=_fit_of(contender, None),
                                    random_state=stream, delta=DELTA)
        elif method == "selection":
            out = private_selection(X, y, GRID, eps, STOP_PROBABILITY, SCORE_SHARE, fit=_fit_of(contender),
                                    random_state=stream)
        if method == "selection":
            candidate, coef, fits = out.lam, out.coef, out.n_runs
        else:
            candidate, fits = data_independent_lambda(n, d, eps, contender), 1
            if contender == "objective":
                coef = objective_perturbation(X, y, eps, candidate, random_state=stream, check_input=False)
            else:
                coef = _sensitivity_fit(X, y, candidate, eps, stream)
        rows.append(_row(contender, candidate, repeat=r, error=test_error(coef, X_test, y_test), n_fits=int(fits),
                         clipped=clipped))
    return rows


def wall_seconds_key(data, contender, method):
    """The key of an arm's wall seconds in a record: ``"contender/method"`` on Adult (the keys it had alone),
    ``"data/contender/method"`` on another data set."""
    return f"{contender}/{method}" if data == "adult" else f"{data}/{contender}/{method}"


def run_selection_study(n_repeats=DEFAULT_REPEATS, epsilons=EPSILONS, data="adult", seed=DEFAULT_SEED, arms=ARMS):
    """Run the study on one data set; returns ``(rows, wall_seconds)`` with one row per arm (contender, tuner), ε and
    repeat (columns of :data:`FORMAT`) and the wall-clock seconds per arm (:func:`wall_seconds_key`). Every arm uses
    dplr's defaults (the release of Algorithms 1 and 2 is the learners' default)."""
    X, y, X_test, y_test = study_data(data, seed)
    rows, seconds = [], {}
    for contender, method in arms:
        if (contender, method) not in ARMS:
            raise ValueError(f"unknown arm {(contender, method)!r}; choose from {ARMS}.")
        start = time.perf_counter()
        for eps in epsilons:
            def stream_of(*rest, eps=eps):
                return _stream(seed, data, contender, method, eps, *rest)
            rows += [{"contender": contender, "method": method, "epsilon": eps, **row}
                     for row in _run_arm(contender, method, X, y, X_test, y_test, eps, n_repeats, stream_of)]
        seconds[wall_seconds_key(data, contender, method)] = round(time.perf_counter() - start, 1)
    frame = pd.DataFrame(rows).assign(data=data, n=len(y))
    return frame.loc[:, list(FORMAT.columns)], seconds


def selection_points(rows, level=0.95):
    """Mean test error and its t-interval per data set (if ``rows`` has the column), contender, tuner and ε."""
    out = []
    keys = ["data"] * ("data" in rows) + ["contender", "method", "epsilon"]
    for values_of_keys, group in rows.groupby(keys, sort=True):
        values = group["error"].to_numpy()
        low, high = t_interval(values, level) if np.ptp(values) > 0 else (values.mean(), values.mean())
        out.append({**dict(zip(keys, values_of_keys)), "mean": float(values.mean()), "ci_low": low, "ci_high": high,
                    "repeats": values.size})
    return pd.DataFrame(out)


def selection_comparisons(rows, level=0.95, alpha=ALPHA, contrasts=CONTRASTS):
    """The fixed rule of the module docstring: one row per contrast of ``contrasts`` and ε with the mean
    difference (first − second), its t-interval, p, Holm-adjusted p (over all rows of its data set: each data set
    is one family) and the verdict. A contrast is tested at the ε where both its arms ran (a record may hold an arm
    at fewer ε). With a ``data`` column, one block of rows per data set (column ``data``), in the record's order.

    ``contrasts`` is the family: :data:`CONTRASTS` (the default), the rule fixed before the first runs, or
    :data:`GAUSSIAN_CONTRASTS`, the Gaussian contenders' family added later; a family is never mixed with another,
    so adding one leaves the other's Holm-adjusted p-values and verdicts as they were."""
    if contrasts not in (CONTRASTS, GAUSSIAN_CONTRASTS):
        raise ValueError("contrasts must be CONTRASTS or GAUSSIAN_CONTRASTS (the study's Holm families): a family "
                         "fixed after seeing the results would not be the study's rule.")
    if "data" in rows:
        return pd.concat([_comparisons(group, level, alpha, contrasts).assign(data=key)
                          for key, group in rows.groupby("data", sort=False)], ignore_index=True)
    return _comparisons(rows, level, alpha, contrasts)


_COMPARISON_COLUMNS = ("contender", "contrast", "epsilon", "mean_difference", "ci_low", "ci_high", "p", "repeats",
                       "p_holm", "verdict")


def _comparisons(rows, level, alpha, contrasts):
    wide = rows.pivot_table(index=["epsilon", "repeat"], columns=["contender", "method"], values="error")
    out = []
    for contender, first, second in contrasts:
        if (contender, first) not in wide or (contender, second) not in wide:
            continue
        for eps, group in wide.groupby(level="epsilon", sort=True):
            diff = (group[(contender, first)] - group[(contender, second)]).dropna().to_numpy()
            if diff.size == 0:  # an arm not run at this ε: no test
                continue
            low, high, p = paired_t_test(diff, level)
            out.append({"contender": contender, "contrast": f"{first} - {second}", "epsilon": eps,
                        "mean_difference": float(diff.mean()), "ci_low": low, "ci_high": high, "p": p,
                        "repeats": diff.size})
    if not out:  # no arm of the family on this data set
        return pd.DataFrame(columns=list(_COMPARISON_COLUMNS))
    table = pd.DataFrame(out)
    table["p_holm"] = holm(table["p"].to_numpy())
    first = table.contrast.str.split(" - ").str[0]
    second = table.contrast.str.split(" - ").str[1]
    table["verdict"] = np.where(table.p_holm >= alpha, "no difference shown",
                                np.where(table.mean_difference < 0, first + " better", second + " better"))
    return table


def write_selection_record(rows, path, n_test, seed, n_repeats, wall_seconds):
    """Write the study's ``rows`` to ``path`` (``n_test``: the test set's size per data set)."""
    record.write_record(rows, FORMAT, n_test, path, {"seed": int(seed), "n_repeats": int(n_repeats),
                                                     "wall_seconds": wall_seconds})


def read_selection_record(path):
    """``(rows, settings)`` of a record written by :func:`write_selection_record`."""
    return record.read_record(path, FORMAT)


def check_against_record(record_rows, live):
    """Raise unless every row of ``live`` is in ``record_rows`` with the same λ, number of fits and test error."""
    return record.check_against_record(record_rows, live, FORMAT)


def compare_selection_records(path, reference, prefix=False):
    """:func:`dplr.replication.record.compare_records` for this study's records (``prefix=True``: ``path`` holds the
    first repeats of ``reference``'s)."""
    return record.compare_records(path, reference, FORMAT, prefix=prefix)


def merge_selection_records(paths, path):
    """Write to ``path`` the union of the records at ``paths`` (arms, an arm's ε, or data sets, run separately with the
    same seed and repeats); an arm's wall seconds are summed over the records. Raises if the settings differ, a data
    set's test size differs or a row appears twice."""
    frames, seconds, first, n_test = [], {}, None, {}
    for source in paths:
        rows, settings = read_selection_record(source)
        wall = settings.pop("wall_seconds", {})
        for key, size in settings.pop("n_test").items():
            if n_test.setdefault(key, size) != size:
                raise ValueError(f"{source} has {size} test records of {key}, another record {n_test[key]}.")
        if first is None:
            first = settings
        elif settings != first:
            raise ValueError(f"{source} was run with other settings ({settings}) than {paths[0]} ({first}).")
        frames.append(rows)
        for arm, value in wall.items():
            seconds[arm] = round(seconds.get(arm, 0.0) + value, 1)
    rows = pd.concat(frames, ignore_index=True)
    if rows.duplicated(list(FORMAT.key)).any():
        raise ValueError("the records share rows: run each arm once.")
    write_selection_record(rows, path, n_test, first["seed"], first["n_repeats"], seconds)
    return len(rows)
