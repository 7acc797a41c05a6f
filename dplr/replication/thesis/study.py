r"""The replication of Veldhuizen (2020), whole: the study the chapter shows, and the per-fit timings.

:func:`run_thesis_study` runs, in two parallel batches, the diagnosis searches
(:mod:`dplr.replication.thesis.diagnosis`), the selection of pipelines by rules fixed in the code, their
λ searches and every cell (:mod:`dplr.replication.thesis.cells`); :class:`ThesisStudy` holds the results
and derives every table of the chapter. :func:`time_fits` measures what one fit of each method costs.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from dplr.algorithms import objective_perturbation, sensitivity_method, standard_erm
from dplr.calibration import objective_perturbation_calibration
from dplr.replication.runner import run_call_groups
from dplr.replication.statistics import paired_fold_difference
from dplr.replication.thesis.cells import (
    SAMPLE_SIZE_LAMBDAS,
    Cell,
    cell_calls,
    cell_errors,
    collect_cells,
    curve_table,
    lambda_calls,
    lambda_table,
    paired_comparison,
    records_needed,
    sample_size_cells,
)
from dplr.replication.thesis.data import full_training_size
from dplr.replication.thesis.diagnosis import best_match, diagnosis_calls, diagnosis_table, joint_match, pipeline_from_row
from dplr.replication.thesis.pipeline import LITERAL, SWITCHES, SoundPipeline
from dplr.replication.thesis.published import (
    EPSILON_GRID,
    FIGURE_CLAIMS,
    KINDS,
    LAMBDA_GRID,
    METHODS,
    REAL_SIZES,
    SIMULATED_SIZES,
    THESIS_EPSILON,
    THESIS_LAMBDA,
    THESIS_RESTARTS,
    THESIS_SEED,
    thesis_value,
)

__all__ = ["CONSISTENT_RULES", "USEFUL_MARGIN", "RANGE_VARIANTS", "RANGE_REPLICAS", "ThesisStudy", "run_thesis_study",
           "target_needs", "time_fits"]

#: Prediction rule / error pairs that agree on labels ±1 (and so with the simulated results).
CONSISTENT_RULES = ("inverted/correct", "sign/misclassified")
#: A private model counts as useful when its mean test error is at most this much above the
#: non-private error of the same (sound) pipeline; fixed before the study was run.
USEFUL_MARGIN = 0.05
#: Public-range variants whose cost the chapter measures (scale, widen).
RANGE_VARIANTS = (("log", 1.0), ("log", 2.0), ("log", 4.0), ("linear", 1.0), ("linear", 2.0))
RANGE_REPLICAS = 10


def _targets(kind, small=False):
    targets = {m: thesis_value(kind, m) for m in METHODS}
    if small:
        targets["standard_small"] = thesis_value(kind, "standard", 50)
    return targets


@dataclass(frozen=True)
class ThesisStudy:
    """Everything :func:`run_thesis_study` computed; the chapter reads it.

    ``searches``: data set -> its diagnosis table; ``pipelines``: name (``"literal"``, ``"simulated"``,
    ``"real"``, ``"real_free"``, ``"sound"``) -> pipeline; ``rankings``: name -> the ranked table it was
    selected from; ``lambda_searches``: ``(data set, pipeline name)`` -> λ search table;
    ``sound_lambda``: the sound pipeline's λ; ``errors[(cell, method, ε)]``: ``(folds, restarts)`` test
    errors; ``seconds[cell]``; ``parts``: part name -> its cells; ``wall``: phase -> wall-clock seconds.
    """

    seed: int
    n_restarts: int
    searches: dict
    pipelines: dict
    rankings: dict
    lambda_searches: dict
    sound_lambda: float
    errors: dict
    seconds: dict
    parts: dict
    wall: dict

    # -- Table 2 ----------------------------------------------------------------------------------
    def full_cell(self, kind, name, method="standard", form=None):
        """The full-size cell of a named pipeline that runs ``method`` (Algorithm 2 in ``form`` if given)."""
        target = self.pipelines[name] if form is None else _with_form(self.pipelines[name], form)
        for cell in self.parts["full"] + self.parts["corrected"]:
            if cell.kind == kind and cell.pipeline == target and method in cell.methods:
                return cell
        raise KeyError((kind, name, method, form))

    def table2_errors(self, name, epsilon=THESIS_EPSILON, form=None):
        """``{(data, method): (folds, restarts) errors}`` of the Table 2 cells of one named pipeline.

        ``name="thesis"`` uses the simulated-data pipeline on the simulated sets and the real-data
        pipeline on the real data.
        """
        out = {}
        for kind in KINDS:
            key = name if name != "thesis" else ("simulated" if kind != "real" else "real")
            if key == "sound" and kind != "real":
                continue
            for method in METHODS:
                f = form if method == "objective" else None
                cell = self.full_cell(kind, key, method, f)
                out[(kind, method)] = cell_errors(self.errors, cell, method, epsilon)
        return out

    def search_fold_means(self, name):
        """Fold means of a pipeline's Table 2 numbers read from the diagnosis searches (no extra runs)."""
        out = {}
        p = self.pipelines[name]
        for kind, table in self.searches.items():
            sub = table
            for switch in SWITCHES:
                if switch in ("normalisation", "labels") and kind != "real":
                    continue
                sub = sub[sub[switch] == getattr(p, switch)]
            row = sub.iloc[0]
            for method in METHODS:
                out[(kind, method)] = row[f"fold_{method}"][:, None]
        return out

    # -- curves -------------------------------------------------------------------------------------
    @property
    def names(self):
        names = {}
        for name, pipeline in self.pipelines.items():
            names.setdefault(pipeline, name)
        return names

    def learning_curves(self):
        return curve_table(self.errors, self.parts["learning"] + self.parts["full"], "n_train", self.names)

    def epsilon_curves(self):
        return curve_table(self.errors, [c for c in self.parts["full"] if len(c.epsilons) > 1], "epsilon", self.names)

    def algorithm_comparison(self, name, kind="real"):
        """Algorithm 1 against Algorithm 2 along a pipeline's curves: paired fold differences (2 minus 1).

        One row per learning-curve size (ε = 0.1) and per ε at the full size; ``better`` says which
        algorithm has the significantly lower error (95% t-interval over folds excludes 0), if any.
        """
        pipeline = self.pipelines[name]
        rows = []
        cells = [c for c in self.parts["learning"] + self.parts["full"] if c.kind == kind and c.pipeline == pipeline]
        for cell in cells:
            for eps in cell.epsilons:
                if cell.n_train is not None and eps != THESIS_EPSILON:
                    continue
                d, low, high = paired_comparison(self.errors, cell, cell, "sensitivity", "objective", eps, eps)
                rows.append({"curve": "learning" if len(cell.epsilons) == 1 or eps == THESIS_EPSILON else "epsilon",
                             "n_train": cell.n_train or full_training_size(kind), "epsilon": eps,
                             "algorithm1": float(cell_errors(self.errors, cell, "sensitivity", eps).mean()),
                             "algorithm2": float(cell_errors(self.errors, cell, "objective", eps).mean()),
                             "difference": d, "ci_low": low, "ci_high": high,
                             "better": "Algorithm 1" if low > 0 else ("Algorithm 2" if high < 0 else "neither")})
        return pd.DataFrame(rows)

    def figure_claims(self, pipelines=(("separable", "simulated"), ("inseparable", "simulated"), ("real", "real"))):
        """The text's statements about Figures 4-9 (:data:`~dplr.replication.thesis.published.FIGURE_CLAIMS`), judged.

        Each claim is tested on the curves of the pipeline ``pipelines`` names for its data set (by default the
        pipelines the chapter's Figures 4-9 draw: the diagnosed one on the simulated sets, the consistent one -- the
        simulated data's switches -- on the real data): the learning curve is every size at
        ε = 0.1, the ε curve every ε at the full training size; "better" is :meth:`algorithm_comparison`'s paired
        test. One row per claim: figure, data, curve, quote, what we measured, ``holds``.
        """
        rows = []
        for claim in FIGURE_CLAIMS:
            c = self.algorithm_comparison(dict(pipelines)[claim.data], claim.data)
            if claim.curve == "learning":
                c = c[np.isclose(c.epsilon, THESIS_EPSILON)].sort_values("n_train")
                x_name, xs = "n", c.n_train.to_numpy()
            else:
                c = c[c.n_train == full_training_size(claim.data)].sort_values("epsilon")
                x_name, xs = "ε", c.epsilon.to_numpy()
            wins = c.better.value_counts()
            counts = (f"Algorithm 1 significantly better at {wins.get('Algorithm 1', 0)}, Algorithm 2 at "
                      f"{wins.get('Algorithm 2', 0)} of {len(c)} points")
            if claim.test == "falls":
                curves = self.learning_curves() if claim.curve == "learning" else self.epsilon_curves()
                x = "n_train" if claim.curve == "learning" else "epsilon"
                sub = curves[(curves.data == claim.data) & (curves.pipeline == dict(pipelines)[claim.data])]
                if claim.curve == "learning":
                    sub = sub[np.isclose(sub.epsilon.fillna(-1.0), THESIS_EPSILON)]
                ends = {name: sub[sub.method == method].sort_values(x).iloc[[0, -1]]
                        for method, name in (("sensitivity", "Algorithm 1"), ("objective", "Algorithm 2"))}
                holds = bool(all(e.ci_high.iloc[1] < e.ci_low.iloc[0] for e in ends.values()))
                measured = f"{x_name} = {xs[0]:g} to {xs[-1]:g}: " + "; ".join(
                    f"{name} {e['mean'].iloc[0]:.3f} [{e.ci_low.iloc[0]:.3f}, {e.ci_high.iloc[0]:.3f}] to "
                    f"{e['mean'].iloc[1]:.3f} [{e.ci_low.iloc[1]:.3f}, {e.ci_high.iloc[1]:.3f}]" for name, e in ends.items())
            elif claim.test == "similar":
                holds, measured = bool(wins.get("neither", 0) > len(c) / 2), counts
            else:
                winner = "Algorithm 1" if claim.test.startswith("algorithm1") else "Algorithm 2"
                needed = len(c) if claim.test.endswith("_all") else len(c) // 2 + 1
                holds, measured = bool(wins.get(winner, 0) >= needed), counts
            rows.append({"figure": claim.figure, "data": claim.data, "curve": claim.curve, "test": claim.test,
                         "where": claim.where, "quote": claim.quote, "measured": measured, "holds": holds})
        return pd.DataFrame(rows)

    def correction(self):
        """Corrected minus NIPS 2008 Algorithm 2 at every ε of the full-size cells (paired draws)."""
        rows = []
        for cell in self.parts["corrected"]:
            p = cell.pipeline
            other = _with_form(p, "nips2008" if p.form == "corrected" else "corrected")
            base = next(c for c in self.parts["full"] + self.parts["corrected"]
                        if c.kind == cell.kind and c.pipeline == other and "objective" in c.methods
                        and set(cell.epsilons) <= set(c.epsilons) and c.lam == cell.lam)
            n = full_training_size(cell.kind)
            for eps in cell.epsilons:
                corrected, nips = (cell, base) if p.form == "corrected" else (base, cell)
                difference, low, high = paired_fold_difference(cell_errors(self.errors, nips, "objective", eps),
                                                               cell_errors(self.errors, corrected, "objective", eps))
                cal = objective_perturbation_calibration(eps, n, cell.lam, form="corrected")
                rows.append({"data": cell.kind, "pipeline": "sound" if isinstance(p, SoundPipeline) else "thesis",
                             "epsilon": eps, "lam": cell.lam, "epsilon_prime": cal.epsilon_prime, "ridge": cal.ridge,
                             "nips2008": float(cell_errors(self.errors, nips, "objective", eps).mean()),
                             "corrected": float(cell_errors(self.errors, corrected, "objective", eps).mean()),
                             "difference": difference, "ci_low": low, "ci_high": high})
        return pd.DataFrame(rows)

    # -- the sound pipeline ---------------------------------------------------------------------------
    @property
    def nonprivate_error(self):
        """Five-fold CV error of the sound pipeline's standard LR at its selected λ."""
        table = self.lambda_searches[("real", "sound")]
        return float(table.loc[table.lam == self.sound_lambda, "mean"].iloc[0])

    @property
    def useful_target(self):
        return self.nonprivate_error + USEFUL_MARGIN

    def sample_size(self):
        return curve_table(self.errors, self.parts["sample"], names=self.names)

    def sample_size_best(self):
        """Per method, ε and n: the sample-size study's error at its best λ (the oracle choice)."""
        table = self.sample_size()
        return table.loc[table.groupby(["method", "epsilon", "n_train"])["mean"].idxmin()].reset_index(drop=True)

    def records_needed(self):
        return records_needed(self.errors, self.parts["sample"], self.useful_target)

    def range_variants(self):
        """Per public-range variant: standard LR and both private methods at ε = 1, n = 10 × 452, best λ of the grid."""
        rows = []
        for (scale, widen) in RANGE_VARIANTS:
            cells = [c for c in self.parts["ranges"] if (c.pipeline.scale, c.pipeline.widen) == (scale, widen)]
            sub = curve_table(self.errors, cells)
            row = {"scale": scale, "widen": widen}
            for method in METHODS:
                m = sub[sub.method == method]
                best = m.loc[m["mean"].idxmin()]
                row[method] = float(best["mean"])
                row[f"{method}_lam"] = float(best.lam)
            rows.append(row)
        return pd.DataFrame(rows)


def _with_form(pipeline, form):
    return replace(pipeline, form=form)


def target_needs(name):
    """The phase-2 cells one published item needs, as ``(part, kind)`` pairs (for :func:`run_thesis_study`'s ``needs``).

    ``"table2"``: the full-size cells of every data set; ``"figure4"`` to ``"figure6"`` (learning curves of the
    separable, inseparable and breast-cancer data): that data set's learning-curve cells and its full-size cell
    (the curve's last point); ``"figure7"`` to ``"figure9"`` (error against ε): that data set's full-size cells.
    """
    if name == "table2":
        return {("full", kind) for kind in KINDS}
    figures = {4: "separable", 5: "inseparable", 6: "real", 7: "separable", 8: "inseparable", 9: "real"}
    number = int(name.removeprefix("figure")) if name.removeprefix("figure").isdigit() else None
    if number not in figures:
        raise ValueError(f"no thesis item {name!r}: 'table2' or 'figure4' to 'figure9'.")
    kind = figures[number]
    return {("learning", kind), ("full", kind)} if number <= 6 else {("full", kind)}


def run_thesis_study(seed=THESIS_SEED, n_jobs=2, n_restarts=THESIS_RESTARTS, needs=None):
    """Run the chapter's whole study: four steps in two parallel batches (``needs=None``), or only what some
    published items need (``needs``: a set of ``(part, kind)`` pairs, e.g. from :func:`target_needs`): steps 1 and 2
    in full, no λ searches of step 3, and of step 4 only the cells of those parts and data sets. A cell's result
    does not depend on which other cells run (each draws from its own stream).

    1. **Diagnosis searches** (:func:`diagnosis_search`) on the three data sets at the thesis'
       protocol (λ = 0.01, ε = 0.1, five folds × ``n_restarts``), and the sound pipeline's λ search.
    2. **Selection**, by rules fixed in this code: the *simulated-data pipeline* is the combination
       with the smallest worst deviation from the six simulated Table 2 numbers (:func:`joint_match`);
       the *real-data pipeline* is the best combination for the three real numbers among those that
       share the simulated pipeline's penalty, noise reading, noise n and (up to the equivalence on
       ±1 labels) prediction rule and error -- the same code run on other data; the *free* pipeline
       is the best real combination without that constraint (post hoc: selected on the numbers it
       is judged by).
    3. **λ searches** (:func:`lambda_search`, 25 values) of the selected pipelines, and
    4. **cells**, in one parallel batch: learning curves (Figures 4-6), full-size cells at every ε (Table 2 and Figures
       7-9), the other form of Algorithm 2 (item 6), the sound pipeline's curves, its sample-size
       study and the public-range variants.
    """
    wall = {}
    sound = SoundPipeline()
    penalties, forms = tuple(SWITCHES["penalty"]), ("nips2008",)
    start = time.perf_counter()
    small_n = {kind: 50 if kind == "real" else None for kind in KINDS}
    diagnosis = {kind: diagnosis_calls(kind, THESIS_LAMBDA, THESIS_EPSILON, n_restarts, small_n[kind], penalties, seed,
                                       forms) for kind in KINDS}
    outputs = run_call_groups({**diagnosis, "sound λ search": lambda_calls("real", sound, LAMBDA_GRID, seed)}, n_jobs)
    searches = {kind: diagnosis_table(kind, diagnosis[kind], outputs[kind], penalties, forms, small_n[kind])
                for kind in KINDS}
    lambda_searches = {("real", "sound"): lambda_table(LAMBDA_GRID, outputs["sound λ search"])}
    sound_lambda = lambda_searches[("real", "sound")].attrs["best"]
    wall["phase 1: diagnosis searches, sound λ search"] = time.perf_counter() - start

    joint = joint_match({k: searches[k] for k in ("separable", "inseparable")},
                        {k: _targets(k) for k in ("separable", "inseparable")})
    simulated = pipeline_from_row(joint.iloc[0])
    rule = f"{simulated.prediction}/{simulated.error}"
    consistent = best_match(searches["real"], _targets("real"), penalty=simulated.penalty, noise=simulated.noise,
                            noise_n=simulated.noise_n, rule=CONSISTENT_RULES if rule in CONSISTENT_RULES else rule)
    free = best_match(searches["real"], _targets("real"))
    with_small = best_match(searches["real"], _targets("real", small=True))
    pipelines = {"literal": LITERAL, "simulated": simulated, "real": pipeline_from_row(consistent.iloc[0]),
                 "real_free": pipeline_from_row(free.iloc[0]), "sound": sound}
    rankings = {"simulated": joint, "real": consistent, "real_free": free, "real_with_small": with_small}

    parts = _study_cells(pipelines, sound_lambda, n_restarts)
    start = time.perf_counter()
    searched = {("separable", "thesis"): simulated, ("inseparable", "thesis"): simulated,
                ("real", "thesis"): pipelines["real"], ("real", "free"): pipelines["real_free"]}
    if needs is not None:
        parts = {part: [c for c in cells if (part, c.kind) in needs] for part, cells in parts.items()}
        searched = {}
    calls = cell_calls([c for cells in parts.values() for c in cells], seed)
    # one batch, largest jobs first (the λ searches, then the cells, largest first)
    outputs = run_call_groups({**{key: lambda_calls(key[0], p, LAMBDA_GRID, seed) for key, p in searched.items()},
                               "cells": calls}, n_jobs)
    lambda_searches.update({key: lambda_table(LAMBDA_GRID, outputs[key]) for key in searched})
    errors, seconds = collect_cells(calls, outputs["cells"])
    wall["phase 2: λ searches and all cells"] = time.perf_counter() - start
    return ThesisStudy(seed=seed, n_restarts=n_restarts, searches=searches, pipelines=pipelines, rankings=rankings,
                       lambda_searches=lambda_searches, sound_lambda=sound_lambda, errors=errors, seconds=seconds,
                       parts=parts, wall=wall)


def _study_cells(pipelines, sound_lambda, n_restarts):
    """The cells of the study's second phase, by part (step 4 of :func:`run_thesis_study`)."""
    R, lam, sound, simulated = n_restarts, THESIS_LAMBDA, pipelines["sound"], pipelines["simulated"]
    parts = {"learning": [], "full": [], "corrected": [], "sample": [], "ranges": []}
    for kind in ("separable", "inseparable"):
        parts["learning"] += [Cell(kind, simulated, n, lam, (THESIS_EPSILON,), METHODS, R) for n in SIMULATED_SIZES[:-1]]
        parts["full"].append(Cell(kind, simulated, None, lam, EPSILON_GRID, METHODS, R))
        parts["corrected"].append(Cell(kind, _with_form(simulated, "corrected"), None, lam, (THESIS_EPSILON,),
                                       ("objective",), R))
    for pipeline, lam_p in ((pipelines["real"], lam), (pipelines["real_free"], lam), (sound, sound_lambda)):
        parts["learning"] += [Cell("real", pipeline, n, lam_p, (THESIS_EPSILON,), METHODS, R) for n in REAL_SIZES]
        parts["full"].append(Cell("real", pipeline, None, lam_p, EPSILON_GRID, METHODS, R))
        if pipeline is pipelines["real_free"]:
            continue
        other = "corrected" if pipeline.form == "nips2008" else "nips2008"
        parts["corrected"].append(Cell("real", _with_form(pipeline, other), None, lam_p, EPSILON_GRID,
                                       ("objective",), R))
    parts["sample"] = sample_size_cells(sound, n_restarts=R)
    for scale, widen in RANGE_VARIANTS:
        parts["ranges"] += [Cell("real", SoundPipeline(scale, widen), None, lam_r, (1.0,), METHODS, R,
                                 RANGE_REPLICAS) for lam_r in SAMPLE_SIZE_LAMBDAS]
    return parts


def time_fits(X, y, epsilon=THESIS_EPSILON, lam=THESIS_LAMBDA, repeats=5, n_draws=THESIS_RESTARTS, random_state=None):
    """Median wall-clock seconds per fit of standard LR, Algorithm 1 and Algorithm 2 in :mod:`dplr`.

    Rows: ``standard`` (:func:`~dplr.algorithms.standard_erm`), ``sensitivity`` and ``objective``
    (one draw each, as a user fits one private model), and both private methods with ``n_draws``
    restarts batched, per draw. Timings vary with the machine and its load: they are measurements.
    """
    rng = np.random.default_rng(random_state)
    calls = {
        "standard LR (one fit)": lambda: standard_erm(X, y, lam),
        "Algorithm 1 (one fit)": lambda: sensitivity_method(X, y, epsilon, lam, random_state=rng),
        "Algorithm 2 (one fit)": lambda: objective_perturbation(X, y, epsilon, lam, random_state=rng),
        f"Algorithm 1 ({n_draws} batched, per draw)": lambda: sensitivity_method(
            X, y, epsilon, lam, n_draws=n_draws, random_state=rng),
        f"Algorithm 2 ({n_draws} batched, per draw)": lambda: objective_perturbation(
            X, y, epsilon, lam, n_draws=n_draws, random_state=rng),
    }
    rows = []
    for name, call in calls.items():
        call()  # warm-up
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            call()
            times.append(time.perf_counter() - start)
        per = float(np.median(times)) / (n_draws if "batched" in name else 1)
        rows.append({"fit": name, "seconds": per})
    return pd.DataFrame(rows)
