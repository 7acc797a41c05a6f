r"""The paper's whole study (NIPS 2008, Section 6) and everything its chapter reads from it.

:func:`run_replication` runs the λ tuning, Figure 1, Figure 2 a–d and Figure 1 under every reading the
text leaves open (:data:`~dplr.replication.paper.protocol.FIGURE1_VARIANTS`), in two parallel batches,
and returns a :class:`Replication`: the errors of every task, and the tables the chapter shows --
Figure 1 with verdicts (:mod:`dplr.replication.verdicts`), the curves, the text's claims checked, the
paper's plotted ranges, the effect of the correction, the ε that best explains the published means.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import pandas as pd

from dplr.replication.paper.lambda_tuning import lambda_tuning_result, tuning_fold_errors
from dplr.replication.paper.protocol import (
    DEFAULT_SEED,
    EPSILON_CURVE_N,
    EPSILON_GRID,
    FIGURE1_EPSILONS,
    FIGURE1_VARIANTS,
    KINDS,
    LAMBDA_GRID,
    LEARNING_CURVE_SIZES,
    PAPER_FOLDS,
    PAPER_HOLDOUT,
    PAPER_N,
    PAPER_RESTARTS,
    DataSpec,
    Figure1Variant,
    Task,
    epsilon_curve_tasks,
    expand,
    figure1_tasks,
    learning_curve_tasks,
    method_label,
    run_tasks,
    timed_task,
)
from dplr.replication.paper.published import FIGURE1, FIGURE2_AXES, TEXT_CLAIMS
from dplr.replication.paper.summaries import (
    STD_READINGS,
    cell_errors,
    correction_effect,
    curve_table,
    effective_epsilon,
    summarise_cell,
)
from dplr.replication.runner import run_call_groups
from dplr.replication.statistics import paired_fold_difference
from dplr.replication.verdicts import replication_verdict

__all__ = ["Replication", "run_replication"]


@dataclass(frozen=True)
class Replication:
    """Everything the replication chapter shows: errors of every task, timings and the λ tuning.

    ``errors[task]`` and ``seconds[task]``: test errors of a task's restarts and its worker seconds;
    ``parts``: part name (``"figure1"``, ``"learning"``, ``"epsilon"``, ``"variant:<name>"``) -> its
    cells (tasks of fold 0); ``tuning``: data set -> :class:`~dplr.replication.paper.lambda_tuning.LambdaTuning`;
    ``wall_seconds``: phase -> wall-clock seconds; ``variants``: the Figure 1 variants run;
    ``fitted_epsilon``: the common ε fitted to the published means, if it was.
    """

    seed: int
    n_restarts: int
    errors: dict
    seconds: dict
    parts: dict
    tuning: dict
    wall_seconds: dict
    variants: tuple = FIGURE1_VARIANTS
    fitted_epsilon: float | None = None

    # -- Figure 1 ----------------------------------------------------------------------------------
    def figure1_cell(self, kind, method, form="nips2008", variant="default"):
        for cell in self.parts["figure1"] if variant == "default" else self.parts[f"variant:{variant}"]:
            if cell.data.kind == kind and cell.method == method and (method != "objective" or cell.form == form):
                return cell
        raise KeyError((kind, method, form, variant))

    def figure1_table(self, variant="default", form="nips2008", std_reading="fold"):
        """One row per published Figure 1 entry: ours, our 95% CI, the published value and the verdicts."""
        statistic = STD_READINGS[std_reading][1]
        rows = []
        variant_spec = next(v for v in self.variants if v.name == variant)
        for pub in FIGURE1:
            if pub.data not in variant_spec.kinds:
                continue
            cell = self.figure1_cell(pub.data, pub.method, form, variant)
            E = cell_errors(self.errors, cell)
            s = summarise_cell(E)
            mean_verdict = replication_verdict(pub.mean, E, lambda F: F.mean(axis=1).mean(), pub.decimals)
            std_verdict = replication_verdict(pub.std, E, statistic, pub.decimals)
            rows.append({"data": pub.data, "method": pub.method, "published": pub.printed,
                         "published_mean": pub.mean, "published_std": pub.std,
                         "mean": s["mean"], "ci_low": s["ci_low"], "ci_high": s["ci_high"],
                         "std": statistic(E), "mean_low": mean_verdict.low, "mean_high": mean_verdict.high,
                         "mean_reproduced": mean_verdict.reproduced, "std_low": std_verdict.low,
                         "std_high": std_verdict.high, "std_reproduced": std_verdict.reproduced})
        return pd.DataFrame(rows)

    def readings_summary(self, std_reading="fold"):
        """Per variant: how many published means and stds its Figure 1 reproduces."""
        rows = []
        for variant in self.variants:
            table = self.figure1_table(variant.name, std_reading=std_reading)
            private = table[table.method != "standard"]
            rows.append({"variant": variant.name, "description": variant.description,
                         "means": int(table.mean_reproduced.sum()), "stds": int(table.std_reproduced.sum()),
                         "private_means": int(private.mean_reproduced.sum()), "numbers": len(table)})
        return pd.DataFrame(rows)

    def effective_epsilons(self):
        """Per private Figure 1 cell: the ε at which our mean error equals the published mean.

        Interpolates (linearly in log ε) over the Figure 1 runs at ``FIGURE1_EPSILONS`` and the default ε.
        """
        grid_names = {"default"} | {f"epsilon={eps:g}" for eps in FIGURE1_EPSILONS}
        eps_variants = [v for v in self.variants if v.name in grid_names]
        rows = []
        for pub in FIGURE1:
            if pub.method == "standard":
                continue
            grid, means = [], []
            for v in eps_variants:
                grid.append(v.epsilon)
                means.append(float(cell_errors(self.errors, self.figure1_cell(pub.data, pub.method, "nips2008",
                                                                              v.name)).mean()))
            rows.append({"data": pub.data, "method": pub.method, "published_mean": pub.mean,
                         "epsilon_hat": effective_epsilon(grid, means, pub.mean)})
        return pd.DataFrame(rows)

    # -- curves ------------------------------------------------------------------------------------
    def learning_curves(self):
        return curve_table(self.errors, self.parts["learning"], "n_train")

    def epsilon_curves(self):
        return curve_table(self.errors, self.parts["epsilon"], "epsilon")

    def correction(self):
        """Corrected minus NIPS 2008 Algorithm 2, for every Figure 1, learning-curve and ε-curve cell."""
        cells = list(dict.fromkeys(self.parts["figure1"] + self.parts["learning"] + self.parts["epsilon"]))
        return correction_effect(self.errors, cells)

    def _fold_difference(self, better, worse):
        """Per-fold difference of fold-mean errors (worse minus better) and its 95% t-interval."""
        return paired_fold_difference(cell_errors(self.errors, better), cell_errors(self.errors, worse))

    def claims(self, form="nips2008"):
        """The text's qualitative claims (:data:`dplr.replication.paper.published.TEXT_CLAIMS`), checked on our runs.

        "A is better than B" means the 95% t-interval of the per-fold difference of mean test errors
        (B minus A; folds paired) lies above 0. ``holds`` is the claim's verdict for that data set.
        """
        rows = []
        for kind in KINDS:
            fig1 = {c.method: c for c in self.parts["figure1"]
                    if c.data.kind == kind and (c.method != "objective" or c.form == form)}
            d_ns, lo_ns, _ = self._fold_difference(fig1["standard"], fig1["objective"])
            d_os, lo_os, _ = self._fold_difference(fig1["objective"], fig1["sensitivity"])
            rows.append({"claim": "figure1_order", "data": kind, "holds": bool(lo_ns > 0 and lo_os > 0),
                         "measured": f"new − standard = {d_ns:.4f} (95% CI low {lo_ns:.4f}); "
                                     f"sensitivity − new = {d_os:.4f} (low {lo_os:.4f})"})
            curve = [c for c in self.parts["learning"] if c.data.kind == kind]
            by_n = {}
            for c in curve:
                n = c.n_train or c.data.n * (c.n_splits - 1) // c.n_splits
                if c.method == "sensitivity" or (c.method == "objective" and c.form == form):
                    by_n.setdefault(n, {})[c.method] = c
            sizes = sorted(by_n)
            better = {n: self._fold_difference(by_n[n]["objective"], by_n[n]["sensitivity"]) for n in sizes}
            final = sizes[-1]
            rows.append({"claim": "learning_final", "data": kind, "holds": bool(better[final][1] > 0),
                         "measured": f"n = {final}: sensitivity − new = {better[final][0]:.4f} "
                                     f"(95% CI {better[final][1]:.4f} to {better[final][2]:.4f})"})
            smaller = [n for n in sizes[:-1]]
            wins = sum(better[n][1] > 0 for n in smaller)
            rows.append({"claim": "learning_smaller", "data": kind, "holds": bool(wins > len(smaller) / 2),
                         "measured": f"new method significantly better at {wins} of {len(smaller)} smaller sizes"})
            by_eps = {}
            for c in self.parts["epsilon"]:
                if c.data.kind == kind and (c.method == "sensitivity" or (c.method == "objective" and c.form == form)):
                    by_eps.setdefault(c.epsilon, {})[c.method] = c
            eps = sorted(by_eps)
            diffs = {e: self._fold_difference(by_eps[e]["objective"], by_eps[e]["sensitivity"]) for e in eps}
            wins = sum(diffs[e][1] > 0 for e in eps)
            losses = [e for e in eps if diffs[e][2] < 0]
            rows.append({"claim": "epsilon_majority", "data": kind, "holds": bool(wins > len(eps) / 2),
                         "measured": f"new method significantly better at {wins} of {len(eps)} ε values"})
            smallest = eps[0]
            sens_mean = float(cell_errors(self.errors, by_eps[smallest]["sensitivity"]).mean())
            rows.append({"claim": "epsilon_small", "data": kind, "holds": bool(diffs[smallest][2] < 0),
                         "measured": f"ε = {smallest:g}: sensitivity − new = {diffs[smallest][0]:.4f} "
                                     f"(95% CI {diffs[smallest][1]:.4f} to {diffs[smallest][2]:.4f}), sensitivity "
                                     f"error {sens_mean:.3f}; sensitivity significantly better at "
                                     f"{len(losses)} of {len(eps)} ε values"})
        table = pd.DataFrame(rows)
        table.insert(1, "quote", [TEXT_CLAIMS[c][0] for c in table.claim])
        return table

    def axis_check(self, form="nips2008"):
        """Per panel of Figure 2: how many of our curve points fall inside the paper's plotted y-range."""
        rows = []
        for panel, kind, curves in (("a", "separable", self.learning_curves()),
                                    ("b", "unseparable", self.learning_curves()),
                                    ("c", "separable", self.epsilon_curves()),
                                    ("d", "unseparable", self.epsilon_curves())):
            axes = FIGURE2_AXES[panel]
            methods = ["Sensitivity method", method_label(Task(DataSpec(kind), 0, "objective", epsilon=0.1,
                                                               form=form))]
            if panel in ("a", "b"):
                methods.append("Standard LR")
            sub = curves[(curves.data == kind) & curves.method.isin(methods)]
            low, high = axes.y_range
            inside = int(((sub["mean"] >= low) & (sub["mean"] <= high)).sum())
            rows.append({"panel": panel, "data": kind, "y_range": f"{low:g}–{high:g}", "points": len(sub),
                         "inside": inside, "our_min": float(sub["mean"].min()), "our_max": float(sub["mean"].max())})
        return pd.DataFrame(rows)

    def figure2_judgements(self, form="nips2008"):
        """Every panel of Figure 2 judged on three counts: plotting window, shape and ordering.

        Window: all of the private methods' curve points lie inside the y-range the paper plotted (standard LR is
        left out: the paper plots it, but the window was chosen for the private curves it compares). Shape: panels
        a-b, both private methods' 95% interval over folds at the largest N below the one at the smallest (the
        curves fall);
        panels c-d, the text's claim about very small ε (``epsilon_small`` of :meth:`claims`). Ordering: the
        text's claims about the panel (:meth:`claims`: ``learning_final`` and ``learning_smaller`` for a-b,
        ``epsilon_majority`` for c-d). One row per judgement: panel, data, item, published, ours, holds.
        """
        claims = self.claims(form).set_index(["claim", "data"])
        curves = {"n_train": self.learning_curves(), "epsilon": self.epsilon_curves()}
        rows = []
        for panel, kind, x in (("a", "separable", "n_train"), ("b", "unseparable", "n_train"),
                               ("c", "separable", "epsilon"), ("d", "unseparable", "epsilon")):
            axes = FIGURE2_AXES[panel]
            methods = ["Sensitivity method", method_label(Task(DataSpec(kind), 0, "objective", epsilon=0.1, form=form))]
            sub = curves[x][(curves[x].data == kind) & curves[x].method.isin(methods)]
            low, high = axes.y_range
            inside = int(((sub["mean"] >= low) & (sub["mean"] <= high)).sum())
            rows.append({"panel": panel, "data": kind, "item": "plotting window",
                         "published": f"test error plotted from {low:g} to {high:g}",
                         "ours": f"{inside} of {len(sub)} private points inside (ours {sub['mean'].min():.3f} to "
                                 f"{sub['mean'].max():.3f})", "holds": inside == len(sub)})
            if x == "n_train":
                ends = {m: sub[sub.method == m].sort_values(x).iloc[[0, -1]] for m in methods}
                rows.append({"panel": panel, "data": kind, "item": "shape: the private curves fall with N",
                             "published": "falling learning curves",
                             "ours": "; ".join(f"{m} {e['mean'].iloc[0]:.3f} [{e.ci_low.iloc[0]:.3f}, {e.ci_high.iloc[0]:.3f}]"
                                               f" to {e['mean'].iloc[1]:.3f} [{e.ci_low.iloc[1]:.3f}, {e.ci_high.iloc[1]:.3f}]"
                                               for m, e in ends.items()),
                             "holds": bool(all(e.ci_high.iloc[1] < e.ci_low.iloc[0] for e in ends.values()))})
                names = ("learning_final", "learning_smaller")
            else:
                names = ("epsilon_small", "epsilon_majority")
            for name in names:
                item = "shape: very small ε" if name == "epsilon_small" else f"ordering: {name.replace('_', ' ')}"
                rows.append({"panel": panel, "data": kind, "item": item, "published": claims.loc[(name, kind), "quote"],
                             "ours": claims.loc[(name, kind), "measured"], "holds": bool(claims.loc[(name, kind), "holds"])})
        return pd.DataFrame(rows)

    def part_seconds(self):
        """Worker seconds spent per part (a task shared by parts counts for the first)."""
        seen, out = set(), {}
        for part, cells in self.parts.items():
            total = 0.0
            for task in expand(cells):
                if task not in seen:
                    seen.add(task)
                    total += self.seconds.get(task, 0.0)
            out[part] = total
        return out



def run_replication(seed=DEFAULT_SEED, n_jobs=2, n_restarts=PAPER_RESTARTS, variants=FIGURE1_VARIANTS,
                    sizes=LEARNING_CURVE_SIZES, epsilons=EPSILON_GRID, fit_epsilon=True, n_total=PAPER_N,
                    n_holdout=PAPER_HOLDOUT, epsilon_n=EPSILON_CURVE_N):
    """Run the whole study: λ tuning, Figure 1, Figure 2 a–d, and Figure 1 under every variant.

    Phase 1 runs, in one parallel batch, the λ tuning on the holdouts and every task that does not
    depend on it. Phase 2 runs the variants that depend on phase 1: λ as tuned (``lambda=tuned``) and,
    with ``fit_epsilon``, Figure 1 at the single ε that best matches the four published private
    means (the geometric mean of the per-cell effective ε of :meth:`Replication.effective_epsilons`,
    rounded to three significant digits).

    The defaults are the paper's full protocol; ``n_total``, ``n_holdout``, ``sizes``, ``epsilon_n``
    and ``n_restarts`` exist so that the unit tests can run the same code small.
    """
    wall = {}
    independent = [v for v in variants if v.lam is not None]
    dependent = [v for v in variants if v.lam is None]
    main = {kind: DataSpec(kind, n=n_total) for kind in KINDS}
    parts = {"figure1": [c for kind in KINDS for c in figure1_tasks(main[kind], n_restarts=n_restarts)],
             "learning": [c for kind in KINDS for c in learning_curve_tasks(main[kind], sizes,
                                                                             n_restarts=n_restarts)],
             "epsilon": [c for kind in KINDS for c in epsilon_curve_tasks(main[kind], epsilons, epsilon_n,
                                                                           n_restarts=n_restarts)]}
    for variant in independent:
        parts[f"variant:{variant.name}"] = variant.cells(None, n_restarts, n_total)

    start = time.perf_counter()
    holdouts = {kind: DataSpec(kind, n=n_holdout, role="holdout") for kind in KINDS}
    unique = sorted(set(t for cells in parts.values() for t in expand(cells)), key=lambda t: -t.cost)
    calls = {("tuning", kind): [(tuning_fold_errors, (holdouts[kind], f, LAMBDA_GRID, seed, PAPER_FOLDS))
                                for f in range(PAPER_FOLDS)] for kind in KINDS}
    calls["tasks"] = [(timed_task, (t, seed)) for t in unique]
    outputs = run_call_groups(calls, n_jobs)
    wall["phase 1"] = time.perf_counter() - start
    tuning = {kind: lambda_tuning_result(LAMBDA_GRID, outputs[("tuning", kind)]) for kind in KINDS}
    errors = {t: out[0] for t, out in zip(unique, outputs["tasks"])}
    seconds = {t: out[1] for t, out in zip(unique, outputs["tasks"])}
    phase1 = Replication(seed=seed, n_restarts=n_restarts, errors=errors, seconds=seconds, parts=parts, tuning=tuning,
                         wall_seconds=dict(wall), variants=tuple(independent))

    later, fitted = list(dependent), None
    if fit_epsilon:
        eps_hat = phase1.effective_epsilons().epsilon_hat.to_numpy()
        eps_hat = eps_hat[np.isfinite(eps_hat)]
        if eps_hat.size:
            fitted = float(f"{np.exp(np.mean(np.log(eps_hat))):.3g}")
            later.append(Figure1Variant("epsilon=fitted", f"Figure 1 at the fitted common ε = {fitted:g}",
                                        epsilon=fitted))
    if not later:
        return phase1
    tuned = {kind: t.best for kind, t in tuning.items()}
    later_parts = {f"variant:{variant.name}": variant.cells(tuned, n_restarts, n_total) for variant in later}
    start = time.perf_counter()
    more = [t for cells in later_parts.values() for t in expand(cells)]
    more_errors, more_seconds = run_tasks([t for t in more if t not in errors], seed, n_jobs)
    wall["phase 2"] = time.perf_counter() - start
    return Replication(seed=seed, n_restarts=n_restarts, errors={**errors, **more_errors},
                       seconds={**seconds, **more_seconds}, parts={**parts, **later_parts}, tuning=tuning,
                       wall_seconds=wall, variants=tuple(independent) + tuple(later), fitted_epsilon=fitted)
