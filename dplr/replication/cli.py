"""Every figure and table of the two replications, from one command: ``python -m dplr reproduce <target>``.

Targets (``python -m dplr reproduce --help`` lists them):

* the paper, Chaudhuri & Monteleoni (NIPS 2008): ``figure1`` (the test-error table, with our
  verdicts) and ``figure2a`` to ``figure2d`` (learning curves and error against ε);
* the thesis, Veldhuizen (2020): ``thesis-table2`` (Table 2, its pipeline read literally and as
  diagnosed) and ``thesis-figure4`` to ``thesis-figure9`` (learning curves and error against ε);
* the real-data study of JMLR 2011 (:mod:`dplr.replication.real`): ``real-adult-tradeoff``,
  ``real-adult-learning``, ``real-kdd-tradeoff``, ``real-kdd-learning`` (the points with their 95% intervals
  and the paired, Holm-corrected comparison of the two private methods);
* the comparison with today's methods (:mod:`dplr.replication.modern`): ``modern-adult``, ``modern-kdd`` (every
  contender's test error against ε with its 95% interval, both losses, and the paired, Holm-corrected comparison
  with objective perturbation); the run writes its record ``modern-study.csv.gz``;
* tuning without wasting data (:mod:`dplr.replication.real.selection`): ``selection`` (Algorithm 3, private
  selection and a data-independent λ for Algorithms 1 and 2 on Adult and KDDCup99, and for DP-SGD on Adult, the
  paired, Holm-corrected comparison; the table holds both data sets, the figure Adult); the run writes its record
  ``selection-study.csv.gz``;
* an intercept (:mod:`dplr.replication.real.intercept`): ``intercept`` (the real-data trade-off with and without a
  public constant feature, paired per repeat, Holm-corrected gains; ``--restarts`` repeats, default 20);
* the cost of privacy against the model a practitioner would deploy (:mod:`dplr.replication.baseline`):
  ``baseline-adult``, ``baseline-kdd`` (the non-private chain B0, B1, B2 and the gap to each private pipeline in four
  parts, both losses); the run writes its record ``baseline-study.csv.gz`` and reads Algorithm 3's repeats from the
  real-data record ``book/data/real_study.csv.gz`` (``--real-record``);
* ``all``: every target; ``paper``, ``thesis``, ``real``, ``modern``, ``selection``, ``intercept`` and ``baseline``: the targets of one source.

Each target writes ``<target>.csv`` (the numbers) and ``<target>.png`` (the figure) into ``--out``,
and the run writes ``reproduce.json``: the command, the seed each study ran with, restarts, workers, scheduler, wall-clock
seconds per study, the machine and package versions. The paper's targets run only the tasks they
need (:mod:`dplr.replication.paper.protocol`); since every task is seeded by its content, the numbers
are the ones the full study and the book's chapter compute with the same seed and restarts. The
thesis' targets share one run of :func:`dplr.replication.thesis.study.run_thesis_study`. ``--workers``
processes run the tasks on this machine, or ``--scheduler tcp://host:port`` sends them to a Dask
cluster (:mod:`dplr.replication.runner`); the results are the same either way. The figures are drawn
by the same functions as the chapters' (:mod:`dplr.replication.figures`).

This module is over 400 lines because, besides the command and its checks, it holds one short writer per target
(table and figure from a study's named results); they share its plotting set-up and output conventions, and a
module of writers alone would only move the same lines behind another import.
"""
from __future__ import annotations

import argparse
import contextlib
import importlib.metadata as md
import json
import os
import platform
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from dplr.replication.paper import protocol as paper_protocol
from dplr.replication.paper.published import FIGURE2_AXES
from dplr.replication.paper.study import Replication
from dplr.replication import real_data
from dplr.replication.baseline import record as baseline_record
from dplr.replication.baseline import study as baseline_study
from dplr.replication.modern import record as modern_record
from dplr.replication.modern import study as modern_study
from dplr.replication.real import intercept as intercept_study
from dplr.replication.real import record as real_record
from dplr.replication.real import selection as selection_study
from dplr.replication.real import study as real_study
from dplr.replication.runner import progress, use_scheduler
from dplr.replication.thesis import published as thesis_published
from dplr.replication.thesis.cells import verdicts
from dplr.replication.thesis.study import run_thesis_study, target_needs

__all__ = ["TARGETS", "GROUPS", "Target", "resolve_targets", "seed_used", "check_out_folder", "reproduce", "main"]


@dataclass(frozen=True)
class Target:
    """One figure or table: its source (``"paper"`` or ``"thesis"``), a description, and what it needs.

    ``needs`` (paper targets): ``(part, data kind)`` pairs of :mod:`dplr.replication.paper.protocol` cells --
    ``"figure1"``, ``"learning"`` or ``"epsilon"``; (real targets): ``(data set, part)`` of
    :mod:`dplr.replication.real.study` -- ``"tradeoff"`` or ``"curve"``.
    """

    name: str
    source: str
    description: str
    needs: tuple = ()


_KINDS = ("separable", "unseparable")
TARGETS = {t.name: t for t in (
    Target("figure1", "paper", "Figure 1: test error of the three methods on both data sets, with verdicts",
           tuple(("figure1", kind) for kind in _KINDS)),
    Target("figure2a", "paper", "Figure 2(a): learning curves, separable data", (("learning", "separable"),)),
    Target("figure2b", "paper", "Figure 2(b): learning curves, unseparable data", (("learning", "unseparable"),)),
    Target("figure2c", "paper", "Figure 2(c): test error against epsilon, separable data", (("epsilon", "separable"),)),
    Target("figure2d", "paper", "Figure 2(d): test error against epsilon, unseparable data",
           (("epsilon", "unseparable"),)),
    Target("thesis-table2", "thesis", "Table 2: the thesis' nine test errors, pipeline read literally and as diagnosed"),
    Target("thesis-figure4", "thesis", "Figure 4: learning curves, separable data"),
    Target("thesis-figure5", "thesis", "Figure 5: learning curves, inseparable data"),
    Target("thesis-figure6", "thesis", "Figure 6: learning curves, breast-cancer data (thesis and sound pipelines)"),
    Target("thesis-figure7", "thesis", "Figure 7: test error against epsilon, separable data"),
    Target("thesis-figure8", "thesis", "Figure 8: test error against epsilon, inseparable data"),
    Target("thesis-figure9", "thesis", "Figure 9: test error against epsilon, breast-cancer data"),
    Target("real-adult-tradeoff", "real", "JMLR 2011, Adult: test error against epsilon, both losses, Algorithm 3",
           (("adult", "tradeoff"),)),
    Target("real-adult-learning", "real", "JMLR 2011, Adult: learning curves at epsilon 0.1 and 1, both losses",
           (("adult", "curve"),)),
    Target("real-kdd-tradeoff", "real", "JMLR 2011, KDDCup99: test error against epsilon, both losses, Algorithm 3",
           (("kdd", "tradeoff"),)),
    Target("real-kdd-learning", "real", "JMLR 2011, KDDCup99: learning curves at epsilon 0.1 and 1, both losses",
           (("kdd", "curve"),)),
    Target("modern-adult", "modern", "Today's methods on Adult: test error against epsilon, every contender",
           (("adult", "tradeoff"),)),
    Target("modern-kdd", "modern", "Today's methods on KDDCup99: test error against epsilon, every contender",
           (("kdd", "tradeoff"),)),
    Target("selection", "selection", "Adult and KDDCup99: Algorithm 3 vs private selection vs a fixed lambda"),
    Target("intercept", "intercept", "Adult and KDDCup99: gain of a public constant feature, Algorithms 1 and 2"),
    Target("baseline-adult", "baseline", "Cost of privacy on Adult: baseline chain and the gap in four parts",
           (("adult", "parts"),)),
    Target("baseline-kdd", "baseline", "Cost of privacy on KDDCup99: baseline chain and the gap in four parts",
           (("kdd", "parts"),)),
)}
GROUPS = {"all": tuple(TARGETS), "paper": tuple(n for n, t in TARGETS.items() if t.source == "paper"),
          "thesis": tuple(n for n, t in TARGETS.items() if t.source == "thesis"),
          "real": tuple(n for n, t in TARGETS.items() if t.source == "real"),
          "modern": tuple(n for n, t in TARGETS.items() if t.source == "modern"),
          "baseline": tuple(n for n, t in TARGETS.items() if t.source == "baseline")}


def resolve_targets(names):
    """Target names (and groups) -> the targets, in the order of :data:`TARGETS`, each once."""
    wanted = set()
    for name in names:
        if name in GROUPS:
            wanted.update(GROUPS[name])
        elif name in TARGETS:
            wanted.add(name)
        else:
            raise ValueError(f"unknown target {name!r}; choose from {', '.join(list(GROUPS) + list(TARGETS))}.")
    return [TARGETS[n] for n in TARGETS if n in wanted]


# --------------------------------------------------------------------------------------------------
# Computing
# --------------------------------------------------------------------------------------------------
def seed_used(source, seed=None):
    """The root seed a study runs with: ``seed``, or the study's own default (the book's chapters use it)."""
    if seed is not None:
        return seed
    if source in ("real", "modern", "selection", "intercept", "baseline"):
        return real_data.DEFAULT_SEED
    return paper_protocol.DEFAULT_SEED if source == "paper" else thesis_published.THESIS_SEED


def run_paper(targets, seed=None, n_jobs=1, n_restarts=None, show_progress=True):
    """The :class:`~dplr.replication.paper.study.Replication` with exactly the cells the paper targets need."""
    ex = paper_protocol
    seed = seed_used("paper", seed)
    n_restarts = ex.PAPER_RESTARTS if n_restarts is None else n_restarts
    builders = {"figure1": ex.figure1_tasks, "learning": ex.learning_curve_tasks, "epsilon": ex.epsilon_curve_tasks}
    parts = {}
    for target in targets:
        for part, kind in target.needs:
            cells = builders[part](ex.DataSpec(kind), n_restarts=n_restarts)
            parts.setdefault(part, [])
            parts[part] += [c for c in cells if c not in parts[part]]
    tasks = [task for cells in parts.values() for task in ex.expand(cells)]
    start = time.perf_counter()
    with progress(f"paper: {len(set(tasks))} tasks", enabled=show_progress):
        errors, seconds = ex.run_tasks(tasks, seed, n_jobs)
    wall = {"tasks": time.perf_counter() - start}
    return Replication(seed=seed, n_restarts=n_restarts, errors=errors, seconds=seconds, parts=parts, tuning={},
                       wall_seconds=wall, variants=(ex.FIGURE1_VARIANTS[0],))


def run_thesis(seed=None, n_jobs=1, n_restarts=None, show_progress=True, targets=None):
    """:func:`~dplr.replication.thesis.study.run_thesis_study` with the given seed, workers and restarts; for some of
    the thesis' targets only (``targets``, names as in :data:`TARGETS`), only what they need."""
    seed = seed_used("thesis", seed)
    n_restarts = thesis_published.THESIS_RESTARTS if n_restarts is None else n_restarts
    names = None if targets is None else {t.name for t in targets}
    needs = None if names is None or names >= set(GROUPS["thesis"]) else \
        set().union(*(target_needs(name.removeprefix("thesis-")) for name in names))
    with progress("thesis: tasks", enabled=show_progress):
        return run_thesis_study(seed=seed, n_jobs=n_jobs, n_restarts=n_restarts, needs=needs)


def run_real(targets, seed=None, n_jobs=1, n_restarts=None, show_progress=True):
    """:func:`~dplr.replication.real.study.run_real_study` on the data sets the real targets need, both losses."""
    seed = seed_used("real", seed)
    n_restarts = real_study.DEFAULT_REPEATS if n_restarts is None else n_restarts
    keys = tuple(dict.fromkeys(key for target in targets for key, _ in target.needs))
    with progress(f"real: {', '.join(keys)}", enabled=show_progress):
        return real_study.run_real_study(keys, n_repeats=n_restarts, seed=seed, n_jobs=n_jobs, processes=n_jobs > 1)


def run_modern(targets, seed=None, n_jobs=1, n_restarts=None, show_progress=True):
    """:func:`~dplr.replication.modern.study.run_modern_study` on the data sets the modern targets need: every
    contender, both losses; ``n_restarts`` repeats for every contender (default: each contender's own,
    :data:`~dplr.replication.modern.study.REPEATS`)."""
    seed = seed_used("modern", seed)
    keys = tuple(dict.fromkeys(key for target in targets for key, _ in target.needs))
    with progress(f"modern: {', '.join(keys)}", enabled=show_progress):
        return modern_study.run_modern_study(keys, repeats=n_restarts, seed=seed, n_jobs=n_jobs,
                                             processes=n_jobs > 1)


#: Repeats of the ``intercept`` target without ``--restarts`` (the decision guide recomputes fewer live).
INTERCEPT_REPEATS = 20


def run_selection(seed=None, n_restarts=None, show_progress=True):
    """:func:`~dplr.replication.real.selection.run_selection_study` (the arms of
    :data:`~dplr.replication.real.selection.STUDY_ARMS` on each data set): ``(rows, wall_seconds, n_repeats, seed,
    n_test, chance)``, ``chance`` Adult's majority-class error (the figure's)."""
    seed = seed_used("selection", seed)
    n_repeats = selection_study.DEFAULT_REPEATS if n_restarts is None else n_restarts
    frames, seconds, n_test = [], {}, {}
    for key, arms in selection_study.STUDY_ARMS.items():
        with progress(f"selection: {key}", enabled=show_progress):
            rows, wall = selection_study.run_selection_study(n_repeats, data=key, seed=seed, arms=arms)
        frames.append(rows)
        seconds.update(wall)
        n_test[key] = len(real_data.study_data(key, seed)[3])
    _, _, _, y_test = real_data.study_data("adult", seed)
    chance = float(min(np.mean(y_test > 0), np.mean(y_test < 0)))  # the majority class's error
    return pd.concat(frames, ignore_index=True), seconds, n_repeats, seed, n_test, chance


def run_intercept(seed=None, n_restarts=None, show_progress=True):
    """:func:`~dplr.replication.real.intercept.paired_gains` on both data sets and losses: the trade-off with the
    constant feature and without it, the same repeats (``n_restarts``, default :data:`INTERCEPT_REPEATS`)."""
    seed = seed_used("intercept", seed)
    n_repeats = INTERCEPT_REPEATS if n_restarts is None else n_restarts
    keys, losses = real_study.DATASETS, real_study.LOSSES
    with progress("intercept: adult, kdd", enabled=show_progress):
        loaded = {key: real_data.load_data(key, seed) for key in keys}
        with_constant = intercept_study.constant_feature_rows(keys, losses, n_repeats, seed, data=loaded, n_jobs=1)
        without = intercept_study.constant_feature_rows(keys, losses, n_repeats, seed, scale=None, data=loaded,
                                                        n_jobs=1)
    return intercept_study.paired_gains(with_constant, without)


def run_baseline(targets, seed=None, n_restarts=None, show_progress=True, real_record_path=None):
    """:func:`~dplr.replication.baseline.study.run_baseline_study` on the data sets the baseline targets need, both
    losses; Algorithm 3's repeats from the real-data record at ``real_record_path`` (default: the book's)."""
    seed = seed_used("baseline", seed)
    n_restarts = baseline_study.DEFAULT_REPEATS if n_restarts is None else n_restarts
    path = Path(real_record_path or "book/data/real_study.csv.gz")
    if not path.is_file():
        raise ValueError(f"the real-data record {path} is missing: run from the book's repository or give "
                         f"--real-record PATH (make real-record writes it).")
    real_rows, settings = real_record.read_record(path)
    if settings["seed"] != seed:
        raise ValueError(f"the real-data record {path} ran with seed {settings['seed']}, not {seed}: "
                         f"its Algorithm 3 repeats do not pair with this run's.")
    keys = tuple(dict.fromkeys(key for target in targets for key, _ in target.needs))
    with progress(f"baseline: {', '.join(keys)}", enabled=show_progress):
        return baseline_study.run_baseline_study(real_rows, keys, n_repeats=n_restarts, seed=seed)


# --------------------------------------------------------------------------------------------------
# Writing: one CSV and one PNG per target
# --------------------------------------------------------------------------------------------------
_METHOD_NAMES = {"standard": "Standard LR", "sensitivity": "Sensitivity method (Alg. 1)",
                 "objective": "New method (Alg. 2)"}
_SHORT_NAMES = {"standard": "Standard LR", "sensitivity": "Sensitivity\nmethod", "objective": "New method"}
_PIPELINE_NAMES = {"simulated": "thesis pipeline as diagnosed", "real": "thesis pipeline as diagnosed",
                   "sound": "sound pipeline"}


def _plotting():
    """pyplot and the book's figures module: only drawing needs them (matplotlib and seaborn are the extra dplr[plot])."""
    import matplotlib.pyplot as plt  # imported here: the optional extra dplr[plot], needed to draw only

    from dplr.replication import figures  # imported here: it imports matplotlib and seaborn (dplr[plot])

    return plt, figures


def _save(fig, path):
    plt, _ = _plotting()
    if fig.get_layout_engine() is None:  # a constrained layout (legend outside the axes) stays as it is
        fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _figure1(rep, out):
    plt, figures = _plotting()
    METHOD_COLOURS = figures.METHOD_COLOURS
    nips = rep.figure1_table().assign(form="nips2008")
    corrected = rep.figure1_table(form="corrected").query("method == 'objective'").assign(form="corrected")
    table = pd.concat([nips, corrected], ignore_index=True)
    table.loc[table.method != "objective", "form"] = ""
    fig, axs = plt.subplots(1, 2, figsize=(10, 3.8), sharey=True)
    for ax, kind in zip(axs, _KINDS):
        rows = table[table.data == kind].reset_index(drop=True)
        for i, row in rows.iterrows():
            colour = METHOD_COLOURS["objective_nips2008" if row.form == "nips2008" else row.method]
            ax.errorbar(i - 0.12, row["mean"], yerr=[[row["mean"] - row.ci_low], [row.ci_high - row["mean"]]],
                        fmt="o", color=colour, capsize=3, label="ours (95% CI over folds)" if i == 0 else None)
            ax.plot(i + 0.12, row.published_mean, "D", color=METHOD_COLOURS["published"],
                    label="published" if i == 0 else None)
        labels = [_SHORT_NAMES[m] + (f"\n({'NIPS 2008' if f == 'nips2008' else f})" if f else "")
                  for m, f in zip(rows.method, rows.form)]
        ax.set_xticks(range(len(rows)), labels, fontsize="small")
        ax.set(title=f"{kind} data", ylabel="test error" if kind == "separable" else None)
    axs[0].legend(fontsize="small")
    fig.suptitle(f"Figure 1 of Chaudhuri & Monteleoni (2008): ours with {rep.n_restarts} restarts, seed {rep.seed}",
                 fontsize="medium")
    return table, fig


def _figure2(rep, panel, out):
    kind = "separable" if panel in "ac" else "unseparable"
    x = "n_train" if panel in "ab" else "epsilon"
    curves = rep.learning_curves() if x == "n_train" else rep.epsilon_curves()
    table = curves[curves.data == kind].reset_index(drop=True)
    plt, figures = _plotting()
    fig, ax = plt.subplots(figsize=(6.5, 4))
    figures.plot_figure2_panel(ax, table, kind, FIGURE2_AXES[panel], x, scale=1000 if x == "n_train" else 1)
    ax.set(xlabel="training points / 1000" if x == "n_train" else "ε", ylabel="test error",
           title=f"Figure 2({panel}), {kind} data: ours, 95% CI over folds")
    ax.legend(fontsize="small")
    return table, fig


def _thesis_panels(name):
    number = int(name.rsplit("figure", 1)[1])
    kind = {4: "separable", 5: "inseparable", 6: "real", 7: "separable", 8: "inseparable", 9: "real"}[number]
    pipelines = ("simulated",) if kind != "real" else ("real", "sound")
    return number, kind, pipelines, ("n_train" if number <= 6 else "epsilon")


def _thesis_figure(study, name, out):
    epsilon = thesis_published.THESIS_EPSILON
    number, kind, pipelines, x = _thesis_panels(name)
    curves = study.learning_curves() if x == "n_train" else study.epsilon_curves()
    table = curves[(curves.data == kind) & curves.pipeline.isin(pipelines)]
    if x == "n_train":
        table = table[table.epsilon.isna() | np.isclose(table.epsilon.fillna(epsilon), epsilon)]
    table = table.reset_index(drop=True)
    plt, figures = _plotting()
    fig, axs = plt.subplots(1, len(pipelines), figsize=(5.5 * len(pipelines), 3.8), squeeze=False)
    for ax, pipeline in zip(axs[0], pipelines):
        figures.plot_thesis_panel(ax, table, kind, pipeline, x, epsilon)
        ax.set(title=f"Figure {number}: {kind} data, {_PIPELINE_NAMES[pipeline]}", ylabel="test error",
               xlabel="training records" if x == "n_train" else "ε", xscale="linear" if x == "n_train" else "log")
    axs[0][0].legend(fontsize="small")
    return table, fig


def _thesis_table2(study, out):
    literal = verdicts(study.search_fold_means("literal")).assign(pipeline="read literally")
    diagnosed = verdicts(study.table2_errors("thesis")).assign(pipeline="as diagnosed")
    table = pd.concat([literal, diagnosed], ignore_index=True)
    published = {(v.data, v.method): v.value for v in thesis_published.TABLE2}
    table.insert(3, "thesis_value", [published[(d, m)] for d, m in zip(table.data, table.method)])
    plt, _ = _plotting()
    fig, ax = plt.subplots(figsize=(9, 3.8))
    keys = list(dict.fromkeys(zip(literal.data, literal.method)))
    for offset, (label, sub), marker in ((-0.15, ("read literally", literal), "o"),
                                         (0.15, ("as diagnosed", diagnosed), "s")):
        rows = sub.set_index(["data", "method"]).loc[keys]
        ax.errorbar(np.arange(len(keys)) + offset, rows.ours, yerr=[rows.ours - rows.low, rows.high - rows.ours],
                    fmt=marker, capsize=3, label=f"ours, pipeline {label} (accepted range)")
    ax.plot(np.arange(len(keys)), [published[k] for k in keys], "D", color="0.35", label="thesis")
    ax.set_xticks(range(len(keys)), [f"{d}\n{_METHOD_NAMES[m].split(' (')[1][:-1]}" if m != "standard" else f"{d}\nLR"
                                     for d, m in keys], fontsize="x-small")
    ax.set(ylabel="test error", title="Table 2 of Veldhuizen (2020): published and ours")
    ax.legend(fontsize="x-small")
    return table, fig


def _real_figure(study, target, out):
    (key, part), = target.needs
    points = study.points[(study.points.data == key) & (study.points.part == part)]
    comparisons = study.comparisons[(study.comparisons.data == key) & (study.comparisons.part == part)]
    on = ["data", "loss", "part", "epsilon", "n"]
    table = points.merge(comparisons.drop(columns="repeats"), on=on, how="left", suffixes=("", "_difference"))
    _, figures = _plotting()
    return table, figures.real_study_figure(points, study.references, part, real_study.CURVE_EPSILONS)


def _modern_figure(study, target, out):
    (key, _), = target.needs
    points = study.points[study.points.data == key]
    comparisons = study.comparisons[study.comparisons.data == key]
    table = points.merge(comparisons.drop(columns="repeats"), on=["data", "loss", "method", "epsilon"], how="left",
                         suffixes=("", "_difference"))
    _, figures = _plotting()
    return table, figures.modern_study_figure(points, study.references[study.references.data == key])


def _selection_figure(results, out):
    rows, _, _, _, _, chance = results
    points = selection_study.selection_points(rows)
    comparisons = pd.concat([selection_study.selection_comparisons(rows, contrasts=family)  # each its own family
                             for family in (selection_study.CONTRASTS, selection_study.GAUSSIAN_CONTRASTS)],
                            ignore_index=True)
    first = comparisons.assign(method=comparisons.contrast.str.split(" - ").str[0]).drop(columns="repeats")
    table = points.merge(first, on=["data", "contender", "method", "epsilon"], how="left",
                         suffixes=("", "_difference"))
    _, figures = _plotting()
    return table, figures.selection_study_figure(points[points.data == "adult"], chance)


def _intercept_figure(gains, out):
    plt, figures = _plotting()
    panels = list(dict.fromkeys(zip(gains.data, gains.loss)))
    fig, axes = plt.subplots(1, len(panels), figsize=(2.4 * len(panels) + 0.6, 3.4), squeeze=False, sharey="row",
                             layout="constrained")
    for ax, (key, loss) in zip(axes[0], panels):
        for method in ("sensitivity", "objective"):
            sub = gains[(gains.data == key) & (gains.loss == loss) & (gains.method == method)].sort_values("epsilon")
            ax.errorbar(sub.epsilon, sub.mean_difference, yerr=[sub.mean_difference - sub.ci_low,
                                                                 sub.ci_high - sub.mean_difference],
                        fmt="o-", ms=3, capsize=2, color=figures.METHOD_COLOURS[method],
                        label={"sensitivity": "Algorithm 1", "objective": "Algorithm 2"}[method])
        ax.axhline(0.0, color=figures.METHOD_COLOURS["published"], lw=1)
        ax.set(xscale="log")
        ax.minorticks_off()
        ax.set_title(f"{figures.REAL_NAMES.get(key, key)},\n{figures.REAL_NAMES.get(loss, loss)}", fontsize="small")
        ax.set_xlabel("privacy level ε")
    axes[0, 0].set_ylabel("error with − without\n(95% interval)")
    fig.legend(*axes[0, 0].get_legend_handles_labels(), loc="outside lower center", ncols=2, fontsize="small")
    return gains, fig


def _baseline_figure(study, target, out):
    (key, _), = target.needs
    parts = study.parts[study.parts.data == key]
    _, figures = _plotting()
    return parts, figures.baseline_parts_figure(parts)


def _write(target, results, out):
    """Compute the target's table and figure from ``results`` and write ``<name>.csv`` and ``<name>.png``."""
    if target.name == "figure1":
        table, fig = _figure1(results["paper"], out)
    elif target.name.startswith("figure2"):
        table, fig = _figure2(results["paper"], target.name[-1], out)
    elif target.source == "real":
        table, fig = _real_figure(results["real"], target, out)
    elif target.source == "modern":
        table, fig = _modern_figure(results["modern"], target, out)
    elif target.source == "selection":
        table, fig = _selection_figure(results["selection"], out)
    elif target.source == "intercept":
        table, fig = _intercept_figure(results["intercept"], out)
    elif target.source == "baseline":
        table, fig = _baseline_figure(results["baseline"], target, out)
    elif target.name == "thesis-table2":
        table, fig = _thesis_table2(results["thesis"], out)
    else:
        table, fig = _thesis_figure(results["thesis"], target.name, out)
    paths = [out / f"{target.name}.csv", out / f"{target.name}.png"]
    table.to_csv(paths[0], index=False, float_format="%.6g")
    _save(fig, paths[1])
    return paths


def _versions():

    names = ("dplr", "numpy", "scipy", "scikit-learn", "pandas", "joblib", "distributed")
    found = {}
    for name in names:
        try:
            found[name] = md.version(name)
        except md.PackageNotFoundError:
            pass
    return found


def _command(names, out, seed, n_restarts, workers, scheduler, quiet, connect_timeout):
    """The command line equivalent to a call of :func:`reproduce` (for its record)."""
    options = {"--out": out, "--seed": seed, "--restarts": n_restarts, "--workers": workers,
               "--scheduler": scheduler}
    if scheduler:
        options["--connect-timeout"] = connect_timeout
    words = ["python", "-m", "dplr", "reproduce", *names]
    for option, value in options.items():
        if value is not None:
            words += [option, str(value)]
    return words + (["--quiet"] if quiet else [])


def check_out_folder(out) -> Path:
    """Create ``out`` if needed and make sure files can be written into it; raise ``ValueError`` saying what to fix."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {out} is a file, not a folder: give a folder name (it is created if missing).")
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / ".dplr-write-test"
        probe.write_text("")
        probe.unlink()
    except OSError as err:
        raise ValueError(f"--out {out} cannot be written to ({err.strerror or err}): choose a folder you can "
                         f"write to.") from err
    return out


def reproduce(names, out="reproduced", seed=None, n_restarts=None, workers=None, scheduler=None, quiet=False,
              argv=None, connect_timeout=10.0, real_record_path=None):
    """Compute and write the targets ``names`` (targets or groups) into ``out``; returns the run's record.

    ``connect_timeout``: seconds to wait for the Dask scheduler at ``scheduler`` before giving up with a
    ``ConnectionError`` that says what to check. ``real_record_path``: the real-data record the baseline targets
    read Algorithm 3's repeats from (default ``book/data/real_study.csv.gz``).
    """
    targets = resolve_targets(names)
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0):
        raise ValueError(f"--seed must be a non-negative integer, got {seed!r}.")
    out = check_out_folder(out)
    workers = workers or os.cpu_count() or 1
    sources = list(dict.fromkeys(t.source for t in targets))
    command = argv or _command(names, str(out), seed, n_restarts, workers, scheduler, quiet, connect_timeout)
    record = {"command": command, "targets": [t.name for t in targets],
              "seed": {source: seed_used(source, seed) for source in sources}, "restarts": n_restarts,
              "workers": workers, "scheduler": scheduler, "seconds": {}, "files": [],
              "machine": {"platform": platform.platform(), "processor": platform.processor() or platform.machine(),
                          "cores": os.cpu_count(), "python": platform.python_version()},
              "versions": _versions()}
    log = (lambda *a: None) if quiet else (lambda *a: print(*a, file=sys.stderr, flush=True))
    results = {}
    start_all = time.perf_counter()
    with contextlib.ExitStack() as stack:
        if scheduler:
            try:
                stack.enter_context(use_scheduler(scheduler, timeout=connect_timeout))
            except (OSError, TimeoutError) as err:  # distributed raises OSError (or TimeoutError) when unreachable
                raise ConnectionError(
                    f"could not reach the Dask scheduler at {scheduler} within {connect_timeout:g} s "
                    f"({type(err).__name__}): check the address (tcp://host:port) and that 'dask scheduler' runs "
                    f"there, or wait longer with --connect-timeout SECONDS.") from err
        for source in sources:
            start = time.perf_counter()
            log(f"[{source}] running on {'the Dask cluster at ' + scheduler if scheduler else f'{workers} worker(s)'}")
            if source == "paper":
                results["paper"] = run_paper([t for t in targets if t.source == "paper"], seed, workers, n_restarts,
                                             not quiet)
            elif source == "real":
                results["real"] = study = run_real([t for t in targets if t.source == "real"], seed, workers,
                                                   n_restarts, not quiet)
                # the per-repeat rows: the record the real-data chapter reads (dplr.replication.real.record)
                real_record.write_record(study.rows, dict(zip(study.references.data, study.references.n_test)),
                                         out / "real-study.csv.gz", study.seed, study.n_repeats)
                record["files"].append("real-study.csv.gz")
            elif source == "modern":
                results["modern"] = study = run_modern([t for t in targets if t.source == "modern"], seed, workers,
                                                       n_restarts, not quiet)
                # the per-repeat rows: the record the chapter on today's methods reads (dplr.replication.modern.record)
                modern_record.write_record(study, out / "modern-study.csv.gz")
                record["files"].append("modern-study.csv.gz")
            elif source == "selection":
                results["selection"] = run = run_selection(seed, n_restarts, not quiet)
                rows, seconds, n_repeats, used_seed, n_test, _ = run
                # the per-repeat rows: the record the chapter on private selection reads
                selection_study.write_selection_record(rows, out / "selection-study.csv.gz", n_test, used_seed,
                                                       n_repeats, seconds)
                record["files"].append("selection-study.csv.gz")
            elif source == "intercept":
                results["intercept"] = run_intercept(seed, n_restarts, not quiet)
            elif source == "baseline":
                results["baseline"] = study = run_baseline([t for t in targets if t.source == "baseline"], seed,
                                                           n_restarts, not quiet, real_record_path)
                # the rows of the chain and the private learners on the whole set (dplr.replication.baseline.record)
                baseline_record.write_record(study.rows, study.n_test, out / "baseline-study.csv.gz",
                                             {"seed": study.seed, "n_repeats": study.n_repeats, "grids": study.grids,
                                              "wall_seconds": study.wall_seconds})
                record["files"].append("baseline-study.csv.gz")
            else:
                results["thesis"] = run_thesis(seed, workers, n_restarts, not quiet,
                                               [t for t in targets if t.source == "thesis"])
            record["seconds"][source] = round(time.perf_counter() - start, 2)
            log(f"[{source}] done in {record['seconds'][source]:.1f} s")
    plt, figures = _plotting()
    figures.set_book_style()
    with plt.rc_context({"figure.dpi": 120}):
        for target in targets:
            paths = _write(target, results, out)
            record["files"] += [p.name for p in paths]
            log(f"wrote {', '.join(str(p) for p in paths)}")
    record["seconds"]["total"] = round(time.perf_counter() - start_all, 2)
    (out / "reproduce.json").write_text(json.dumps(record, indent=2) + "\n")
    log(f"all done in {record['seconds']['total']:.1f} s; record in {out / 'reproduce.json'}")
    return record


def add_parser(subparsers):
    """The ``reproduce`` subcommand of ``python -m dplr``."""
    listing = "\n".join(f"  {name:16s} {t.description}" for name, t in TARGETS.items())
    groups = "\n".join(f"  {name:16s} {', '.join(members)}" for name, members in GROUPS.items())
    parser = subparsers.add_parser(
        "reproduce", help="compute figures and tables of the replications (CSV + PNG)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Compute figures and tables of the replications and write <target>.csv and <target>.png.",
        epilog=f"targets:\n{listing}\n\ngroups:\n{groups}\n\n"
               "example: python -m dplr reproduce all --out reproduced --workers 2")
    parser.add_argument("targets", nargs="+", metavar="target", help="one or more targets or groups (below)")
    parser.add_argument("--out", default="reproduced", help="output folder (default: %(default)s)")
    parser.add_argument("--restarts", type=int, default=None,
                        help="random restarts per private cell (default: 200, as in the paper and the thesis)")
    parser.add_argument("--seed", type=int, default=None,
                        help="root seed (default: each study's own, as in the book's chapters)")
    parser.add_argument("--workers", type=int, default=None, help="local worker processes (default: all cores)")
    parser.add_argument("--scheduler", default=None, metavar="ADDRESS",
                        help="run the tasks on the Dask cluster at ADDRESS, e.g. tcp://10.0.0.5:8786")
    parser.add_argument("--connect-timeout", type=float, default=10.0, metavar="SECONDS",
                        help="seconds to wait for the Dask scheduler (default: %(default)s)")
    parser.add_argument("--real-record", default=None, metavar="PATH",
                        help="the real-data record the baseline targets read Algorithm 3's repeats from "
                             "(default: book/data/real_study.csv.gz)")
    parser.add_argument("--quiet", action="store_true", help="no progress bars or messages")
    parser.set_defaults(handler=_handle)
    return parser


def _handle(args):
    if args.restarts is not None and args.restarts < 2:
        raise SystemExit("--restarts must be at least 2 (the summaries need a spread over restarts).")
    if args.workers is not None and args.workers < 1:
        raise SystemExit("--workers must be at least 1.")
    if args.seed is not None and args.seed < 0:
        raise SystemExit(f"--seed must be a non-negative integer, got {args.seed}.")
    if not args.connect_timeout > 0:
        raise SystemExit(f"--connect-timeout must be a positive number of seconds, got {args.connect_timeout}.")
    try:
        resolve_targets(args.targets)
        check_out_folder(args.out)
    except ValueError as error:
        raise SystemExit(str(error))
    _plotting()[0].switch_backend("Agg")  # files only: no display needed
    try:
        reproduce(args.targets, args.out, args.seed, args.restarts, args.workers, args.scheduler, args.quiet,
                  connect_timeout=args.connect_timeout, real_record_path=args.real_record)
    except ConnectionError as error:
        raise SystemExit(str(error))
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m dplr", description="dplr command-line tools.")
    subparsers = parser.add_subparsers(dest="command", required=True)
    add_parser(subparsers)
    args = parser.parse_args(argv)
    return args.handler(args)
