"""One plotting style for the whole book, and the replication figures the chapters and the CLI share.

Every chapter calls :func:`set_book_style` once; figures then share fonts, sizes and colours, and
the methods keep one colour each across chapters (:data:`METHOD_COLOURS`). The curve panels of both
replications are drawn by one function each, used by the chapters and by ``python -m dplr reproduce``
(:mod:`dplr.replication.cli`), so the two cannot drift apart.

(Over 400 lines: every study's figure is drawn here, beside the style, palette and legend checks it shares with the
others, so that a chapter and the command line cannot draw it differently.)
"""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import seaborn as sns
from matplotlib.patches import Rectangle

__all__ = ["METHOD_COLOURS", "PAPER_CURVE_STYLES", "THESIS_CURVE_STYLES", "set_book_style", "plot_curves",
           "plot_figure2_panel", "plot_thesis_panel", "legend_covered_points", "check_legends", "legend_below",
           "SITE_COLUMN_PX", "MIN_TEXT_PX", "smallest_text_px", "check_legible", "label_line_ends",
           "REAL_NAMES", "real_study_figure", "CONTENDER_STYLES", "modern_study_figure", "TUNER_STYLES",
           "SELECTION_CONTENDER_NAMES", "selection_study_figure", "PART_COLOURS",
           "baseline_parts_figure"]

_PALETTE = sns.color_palette("colorblind")
METHOD_COLOURS = {
    "standard": _PALETTE[2],
    "sensitivity": _PALETTE[3],
    "objective": _PALETTE[0],
    "objective_nips2008": _PALETTE[4],
    "published": "0.35",
}
#: The paper's curves (the ``method`` labels of :func:`dplr.replication.paper.protocol.method_label`): colour, line.
PAPER_CURVE_STYLES = {"Standard LR": (METHOD_COLOURS["standard"], "-"),
                      "Sensitivity method": (METHOD_COLOURS["sensitivity"], "-"),
                      "New method (NIPS 2008)": (METHOD_COLOURS["objective_nips2008"], "-"),
                      "New method (corrected)": (METHOD_COLOURS["objective"], "--")}
#: The thesis' curves (its ``method`` column): colour, legend label.
THESIS_CURVE_STYLES = {"standard": (METHOD_COLOURS["standard"], "standard LR"),
                       "sensitivity": (METHOD_COLOURS["sensitivity"], "Algorithm 1"),
                       "objective": (METHOD_COLOURS["objective_nips2008"], "Algorithm 2")}


def set_book_style():
    """Apply the book's seaborn theme (white grid, colour-blind palette, fixed figure size and DPI)."""
    sns.set_theme(context="notebook", style="whitegrid", palette="colorblind")
    plt.rcParams.update({"figure.figsize": (7.0, 4.0), "figure.dpi": 100, "savefig.dpi": 100,
                         "axes.titlesize": "medium"})


def plot_curves(ax, table, x, curves, scale=1.0):
    """Mean test error against ``x`` with its 95% band, one curve per ``(selection, colour, line, label)``.

    ``table`` has the columns ``x``, ``mean``, ``ci_low`` and ``ci_high``; ``selection`` is a boolean
    mask of its rows. Empty curves are skipped. ``x`` is divided by ``scale`` (e.g. thousands of points).
    """
    for selection, colour, line, label in curves:
        sub = table[selection]
        if sub.empty:
            continue
        xs = sub[x].to_numpy() / scale
        ax.plot(xs, sub["mean"], color=colour, ls=line, marker="o", ms=3, label=label)
        ax.fill_between(xs, sub["ci_low"], sub["ci_high"], color=colour, alpha=0.2, lw=0)


def plot_figure2_panel(ax, curves, kind, axes, x, scale=1.0):
    """One panel of the paper's Figure 2: our curves on data set ``kind`` and, dotted, the window the paper plotted.

    ``curves`` is a :meth:`~dplr.replication.paper.study.Replication.learning_curves` or
    ``epsilon_curves`` table, ``axes`` the panel's :class:`~dplr.replication.paper.published.AxisRange`.
    """
    plot_curves(ax, curves, x, [((curves.data == kind) & (curves.method == method), colour, line, method)
                                for method, (colour, line) in PAPER_CURVE_STYLES.items()], scale)
    (x0, x1), (y0, y1) = axes.x_range, axes.y_range
    ax.add_patch(Rectangle((x0, y0), x1 - x0, y1 - y0, fill=False, ls=":", lw=1.5, ec=METHOD_COLOURS["published"],
                           label="the paper's axes"))


def plot_thesis_panel(ax, curves, kind, pipeline, x, epsilon=None):
    """One curve panel of the thesis' Figures 4-9: the three methods of one pipeline on data set ``kind``.

    ``curves`` is a :meth:`~dplr.replication.thesis.study.ThesisStudy.learning_curves` or
    ``epsilon_curves`` table; for learning curves (``x="n_train"``) only the rows at ``epsilon`` (and
    standard LR, which has none) are drawn.
    """
    rows = (curves.data == kind) & (curves.pipeline == pipeline)
    if x == "n_train":
        rows &= curves.epsilon.isna() | np.isclose(curves.epsilon.fillna(epsilon), epsilon)
    plot_curves(ax, curves, x, [(rows & (curves.method == method), colour, "-", label)
                                for method, (colour, label) in THESIS_CURVE_STYLES.items()])


def plot_real_panel(ax, points, x):
    """One panel of the real-data study: both private methods (Algorithm 3) and the non-private same-split
    reference against ``x`` (``"epsilon"`` or ``"n"``), mean test error with its 95% band."""
    points = points.sort_values(x)
    curves = [(points.method == "objective", METHOD_COLOURS["objective"], "-", "objective perturbation (Alg. 2)"),
              (points.method == "sensitivity", METHOD_COLOURS["sensitivity"], "-", "sensitivity method (Alg. 1)")]
    if x == "n":
        curves.append((points.method == "nonprivate", METHOD_COLOURS["standard"], "--", "non-private, same split"))
    plot_curves(ax, points, x, curves)
    ax.set(xscale="log", ylim=(0, None))


def _drawn_points(ax):
    """Display coordinates of the data points drawn in ``ax``: line vertices and markers, scatter offsets,
    error-bar and band vertices (reference lines spanning the axes, ``axhline``/``axvline``, count at their ends)."""
    points = []
    for line in ax.get_lines():
        if line.get_visible() and len(line.get_xydata()):
            points.append(line.get_transform().transform(np.asarray(line.get_xydata(), float)))
    for collection in ax.collections:
        if not collection.get_visible():
            continue
        offsets = collection.get_offsets()
        if len(offsets) and collection.get_offset_transform() is not None and not len(collection.get_paths()) > 1:
            points.append(collection.get_offset_transform().transform(np.asarray(offsets, float)))
        for path in collection.get_paths():
            if len(path.vertices):
                points.append(collection.get_transform().transform(path.vertices))
    if not points:
        return np.empty((0, 2))
    points = np.vstack(points)
    points = points[np.isfinite(points).all(axis=1)]
    box = ax.get_window_extent()
    inside = ((points[:, 0] >= box.x0) & (points[:, 0] <= box.x1) & (points[:, 1] >= box.y0) & (points[:, 1] <= box.y1))
    return points[inside]  # what lies outside the axes is clipped away, not drawn


def legend_covered_points(fig):
    """``[(legend, number of data points under it)]`` for every legend of ``fig`` that covers a drawn point.

    Drawn points are those of :func:`_drawn_points` in every axes of the figure; a legend covers a point when the
    point lies inside the legend's bounding box (its window extent, after the figure is laid out and drawn).
    """
    fig.draw_without_rendering()
    legends = [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None] + list(fig.legends)
    points = np.vstack([_drawn_points(ax) for ax in fig.axes] or [np.empty((0, 2))])
    covered = []
    for legend in legends:
        box = legend.get_window_extent()
        n = int(((points[:, 0] > box.x0) & (points[:, 0] < box.x1)
                 & (points[:, 1] > box.y0) & (points[:, 1] < box.y1)).sum())
        if n:
            covered.append((legend, n))
    return covered


def check_legends(fig):
    """Raise ``AssertionError`` if a legend of ``fig`` covers a plotted point (see :func:`legend_covered_points`)."""
    covered = legend_covered_points(fig)
    assert not covered, "a legend covers data: " + "; ".join(
        f"{n} point(s) under the legend with {[t.get_text() for t in legend.get_texts()]}" for legend, n in covered)
    return fig


#: Width of the site's content column (the article's content box) at a 1280 px window, in CSS pixels: a wider image
#: is scaled down to it (``tests/browser`` measures the column and fails when it differs from this by more than 5%).
SITE_COLUMN_PX = 688
#: The smallest text a figure may show on the site at that width, in CSS pixels.
MIN_TEXT_PX = 9.0


def smallest_text_px(fig, column_px=SITE_COLUMN_PX):
    """The height in CSS pixels of the smallest visible text of ``fig`` as the site shows it.

    The notebook stores the figure as a PNG of ``width * dpi`` pixels, shown at that size or, when wider than the
    content column, scaled down to ``column_px``; a font of ``s`` points is ``s * dpi / 72`` image pixels tall. Texts
    are every visible title, label, tick label, legend entry and annotation with a non-empty string. The stored width
    is the figure's tight bounding box plus Jupyter's 0.1 in of padding on each side (the inline backend saves with
    ``bbox_inches="tight"``), which is wider than the figure when a legend or label sits outside it."""
    fig.canvas.draw()  # tick labels exist once drawn
    scale = _shown_scale(fig, column_px)
    sizes = [text.get_fontsize() for text in fig.findobj(lambda a: hasattr(a, "get_text") and hasattr(a, "get_fontsize"))
             if text.get_visible() and text.get_text().strip() and _inside_figure(text, fig)]
    return min(sizes) * fig.dpi / 72 * scale if sizes else float("inf")


def _shown_scale(fig, column_px):
    """The factor by which the site scales the figure's stored PNG: at most 1, and below 1 when the stored width (the
    tight bounding box plus 0.1 in of padding each side, or the figure's width if larger) exceeds ``column_px``."""
    tight = fig.get_tightbbox(fig.canvas.get_renderer()).width + 0.2  # inches
    return min(1.0, column_px / (max(fig.get_figwidth(), tight) * fig.dpi))


def _inside_figure(text, fig):
    """Whether ``text`` is drawn (tick labels beyond an axis' limits are kept by matplotlib but not drawn)."""
    box = text.get_window_extent()
    figure_box = fig.bbox
    return box.width > 0 and box.x1 >= figure_box.x0 - 1 and box.x0 <= figure_box.x1 + 1 \
        and box.y1 >= figure_box.y0 - 1 and box.y0 <= figure_box.y1 + 1


def check_legible(fig, column_px=SITE_COLUMN_PX):
    """Raise ``AssertionError`` if the smallest text of ``fig`` is below :data:`MIN_TEXT_PX` on the site (see
    :func:`smallest_text_px`): make the figure narrower, use fewer panels, or larger fonts."""
    px = smallest_text_px(fig, column_px)
    assert px >= MIN_TEXT_PX, (
        f"the smallest text of this figure is {px:.1f} px on the site (at least {MIN_TEXT_PX:g}): its "
        f"{fig.get_figwidth():g} in at {fig.dpi:g} dpi is shown at {_shown_scale(fig, column_px):.2f} of its size; make "
        "it narrower, split its panels, or enlarge its fonts")
    return fig


def label_line_ends(ax, fontsize=10, gap=1.25, pad=6):
    """Name every labelled line of ``ax`` at its right end, in its colour, moved apart vertically just enough that
    no two names overlap: direct labels instead of a legend, for curves too alike to tell apart by a legend's
    swatches. The names sit as close to the curves' ends as spacing allows (pool-adjacent-violators on the sorted
    ends). The figure's layout must be fixed before: positions are in pixels. Returns ``ax``."""
    fig = ax.figure
    fig.canvas.draw()  # settles the axes' limits
    ends = []
    for line in ax.get_lines():
        if line.get_label().startswith("_"):
            continue
        x, y = line.get_xydata()[-1]
        ends.append((ax.transData.transform((x, y))[1], (x, y), line))
    ends.sort(key=lambda end: end[0])
    step = fontsize * fig.dpi / 72 * gap
    # the positions closest to the ends that are at least `step` apart: pool adjacent violators on y_i - i step
    blocks = []  # [mean, count]
    for i, (y, _, _) in enumerate(ends):
        blocks.append([y - i * step, 1])
        while len(blocks) > 1 and blocks[-2][0] > blocks[-1][0]:
            (m2, c2), (m1, c1) = blocks.pop(), blocks.pop()
            blocks.append([(m1 * c1 + m2 * c2) / (c1 + c2), c1 + c2])
    placed = [m for m, c in blocks for _ in range(c)]
    for i, (y, xy, line) in enumerate(ends):
        ax.annotate(line.get_label(), xy=xy, xytext=(pad, (placed[i] + i * step - y) * 72 / fig.dpi),
                    textcoords="offset points", va="center", ha="left", color=line.get_color(), fontsize=fontsize,
                    annotation_clip=False)
    return ax


def legend_below(fig, ax=None, ncols=None, **kwargs):
    """One legend for the figure, below its axes (outside them), from the handles of ``ax`` (default the first axes).

    The figure must use the constrained layout (``plt.subplots(..., layout="constrained")``), which makes room for it.
    """
    handles, labels = (ax or fig.axes[0]).get_legend_handles_labels()
    return fig.legend(handles, labels, loc="outside lower center", ncols=ncols or min(len(labels), 4), **kwargs)


#: Panel titles of the real-data study's data sets and losses.
REAL_NAMES = {"adult": "Adult", "kdd": "KDDCup99", "logistic": "logistic regression", "huber": "Huber SVM"}


def _legend_below_panels(fig, axes, ncols):
    """One legend below a grid of panels (each label once, from the first panel that has it), checked."""
    handles = {}
    for ax in axes.flat:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(label, handle)
    fig.legend(handles.values(), handles.keys(), loc="outside lower center", ncols=ncols, fontsize="small")
    check_legends(fig)
    return fig


def real_study_figure(points, references, part, epsilons=(0.1, 1.0)):
    """The real-data study (:mod:`dplr.replication.real.study`) in one figure, shared by the chapter and the CLI.

    ``part="tradeoff"``: one panel per data set (rows) and loss (columns), test error against ε; ``part="curve"``:
    one panel per data set (rows) and loss and ε of ``epsilons`` (columns), against the training-set size. Every
    curve is the mean over the repeats with its 95% band (:func:`plot_curves`); chance and non-private ERM on all
    training data (``references``) are horizontal lines. One legend below the panels, checked against the data.
    """
    order = ("adult", "kdd", "logistic", "huber")
    datasets = sorted(dict.fromkeys(points.data), key=lambda k: order.index(k) if k in order else len(order))
    losses = sorted(dict.fromkeys(points.loss), key=lambda k: order.index(k) if k in order else len(order))
    columns = [(loss, None) for loss in losses] if part == "tradeoff" else \
        [(loss, eps) for loss in losses for eps in epsilons]
    fig, axes = plt.subplots(len(datasets), len(columns), figsize=(2.6 * len(columns) + 1.8, 3.0 * len(datasets)),
                             squeeze=False, sharey="row", layout="constrained")
    for row, key in enumerate(datasets):
        reference = references[references.data == key].set_index("loss")
        for col, (loss, eps) in enumerate(columns):
            ax = axes[row, col]
            sub = points[(points.data == key) & (points.loss == loss) & (points.part == part)]
            if eps is not None:
                sub = sub[(sub.epsilon == eps) | (sub.method == "nonprivate")]
            else:
                sub = sub[sub.method != "nonprivate"]
            plot_real_panel(ax, sub, "n" if part == "curve" else "epsilon")
            ax.minorticks_off()
            if part == "curve":  # the training sizes themselves, in thousands
                sizes = sorted(sub.n.unique())
                ax.set_xticks(sizes, [f"{size / 1000:.0f}k" for size in sizes])
            else:
                ax.set_xticks(sorted(sub.epsilon.unique()), [f"{e:g}" for e in sorted(sub.epsilon.unique())],
                              fontsize="x-small")
            ax.axhline(reference.loc[loss, "error_all_data"], color=METHOD_COLOURS["standard"], lw=1,
                       label="non-private, all data")
            ax.axhline(reference.loc[loss, "chance"], color=METHOD_COLOURS["published"], ls=":", lw=1,
                       label="chance (majority class)")
            title = f"{REAL_NAMES.get(key, key)}, {REAL_NAMES.get(loss, loss)}"
            ax.set_title(title if eps is None else f"{title},\nε = {eps:g}", fontsize="small")
            if row == len(datasets) - 1:
                ax.set_xlabel("privacy level ε" if part == "tradeoff" else "training records n")
            if col == 0:
                ax.set_ylabel("test error")
    return _legend_below_panels(fig, axes, ncols=3)


#: The contenders of :mod:`dplr.replication.modern` (and diffprivlib's recorded run): colour, line, legend label.
CONTENDER_STYLES = {
    "objective": (METHOD_COLOURS["objective"], "-", "objective perturbation (Alg. 2), ε"),
    "sensitivity": (METHOD_COLOURS["sensitivity"], "-", "output perturbation (Alg. 1), ε"),
    "gaussian_output": (_PALETTE[4], "--", "Gaussian output perturbation, (ε, δ)"),
    "gaussian_objective": (_PALETTE[9], "--", "Gaussian objective perturbation, (ε, δ)"),
    "amp": (_PALETTE[5], "--", "approximate minima perturbation, (ε, δ)"),
    "dpsgd": ("0.15", "-.", "DP-SGD, (ε, δ)"),
    "diffprivlib": (_PALETTE[7], ":", "diffprivlib LogisticRegression, ε"),
}


def modern_study_figure(points, references):
    """The comparison with today's methods (:mod:`dplr.replication.modern.study`): one panel per data set (rows) and
    loss (columns), the mean test error of every contender against ε with its 95% band, chance and the non-private
    floor (``references``) as horizontal lines, one legend below the panels (checked against the data).

    Two panels per row fit the site's content column at full size (:func:`check_legible`), so the chapter and the
    CLI draw one figure per data set (``points`` and ``references`` of that data set only)."""
    order = ("adult", "kdd", "logistic", "huber")
    datasets = sorted(dict.fromkeys(points.data), key=order.index)
    losses = sorted(dict.fromkeys(points.loss), key=order.index)
    fig, axes = plt.subplots(len(datasets), len(losses), figsize=(3.4 * len(losses) - 0.1, 2.9 * len(datasets) + 1.5),
                             squeeze=False, sharey="row", layout="constrained")
    for row, key in enumerate(datasets):
        reference = references[references.data == key].set_index("loss")
        for col, loss in enumerate(losses):
            ax = axes[row, col]
            sub = points[(points.data == key) & (points.loss == loss)].sort_values("epsilon")
            plot_curves(ax, sub, "epsilon", [(sub.method == name, colour, line, label)
                                             for name, (colour, line, label) in CONTENDER_STYLES.items()])
            ax.axhline(reference.loc[loss, "error_nonprivate_best"], color=METHOD_COLOURS["standard"], lw=1,
                       label="non-private ERM, best λ (floor)")
            ax.axhline(reference.loc[loss, "chance"], color=METHOD_COLOURS["published"], ls=":", lw=1,
                       label="chance (majority class)")
            ax.set(xscale="log", ylim=(0, None))
            ax.minorticks_off()
            ax.set_xticks(sorted(sub.epsilon.unique()), [f"{e:g}" for e in sorted(sub.epsilon.unique())],
                          fontsize="x-small")
            ax.set_title(f"{REAL_NAMES.get(key, key)}, {REAL_NAMES.get(loss, loss)}", fontsize="small")
            if row == len(datasets) - 1:
                ax.set_xlabel("privacy level ε")
            if col == 0:
                ax.set_ylabel("test error")
    return _legend_below_panels(fig, axes, ncols=2)


#: The tuners of :mod:`dplr.replication.real.selection`: colour, line, legend label.
TUNER_STYLES = {
    "algorithm3": (_PALETTE[0], "-", "Algorithm 3 (split)"),
    "selection": (_PALETTE[1], "--", "private selection (random stopping)"),
    "rule": (_PALETTE[2], ":", "data-independent λ"),
}
#: Panel titles of the selection study's contenders.
SELECTION_CONTENDER_NAMES = {"objective": "Algorithm 2, ε", "sensitivity": "Algorithm 1, ε", "dpsgd": "DP-SGD, (ε, δ)"}


def selection_study_figure(points, chance=None):
    """The selection study (:mod:`dplr.replication.real.selection`): one panel per contender, the mean test error of
    every tuner against ε with its 95% band, chance (the majority class, if given) as a horizontal line, one legend
    below the panels (checked against the data). Shared by the chapter and the CLI."""
    contenders = [c for c in SELECTION_CONTENDER_NAMES if c in set(points.contender)]
    fig, axes = plt.subplots(1, len(contenders), figsize=(2.3 * len(contenders) + 0.5, 3.6), squeeze=False,
                             sharey="row", layout="constrained")
    for ax, contender in zip(axes[0], contenders):
        sub = points[points.contender == contender].sort_values("epsilon")
        plot_curves(ax, sub, "epsilon", [(sub.method == name, colour, line, label)
                                         for name, (colour, line, label) in TUNER_STYLES.items()])
        if chance is not None:
            ax.axhline(chance, color=METHOD_COLOURS["published"], ls=":", lw=1, label="chance (majority class)")
        ax.set(xscale="log")
        ax.minorticks_off()
        ax.set_xticks(sorted(sub.epsilon.unique()), [f"{e:g}" for e in sorted(sub.epsilon.unique())],
                      fontsize="x-small")
        ax.set_title(SELECTION_CONTENDER_NAMES[contender], fontsize="small")
        ax.set_xlabel("privacy level ε")
    axes[0, 0].set_ylabel("test error")
    return _legend_below_panels(fig, axes, ncols=2)


#: The colours of the cost-of-privacy parts (:data:`dplr.replication.baseline.study.PARTS`), in the chain's order.
PART_COLOURS = {"feature map": _PALETTE[7], "candidate grid": _PALETTE[2], "noise": _PALETTE[0],
                "split and selection": _PALETTE[3]}


def baseline_parts_figure(parts):
    """The gap between the deployed baseline and Algorithm 3 in four parts (:func:`dplr.replication.baseline.study.
    decompose`), for one data set: one panel per method (rows) and loss (columns); at each ε a bar stacked from the
    parts' means (positive parts upwards, negative downwards from 0), and the total's mean with its 95% interval as a
    black point; one legend below the panels (checked against the data)."""
    order = ("logistic", "huber", "sensitivity", "objective")
    losses = sorted(dict.fromkeys(parts.loss), key=order.index)
    methods = sorted(dict.fromkeys(parts.method), key=order.index)
    key = parts.data.iloc[0]
    names = {"sensitivity": "Algorithm 1", "objective": "Algorithm 2"}
    fig, axes = plt.subplots(len(methods), len(losses), figsize=(3.4 * len(losses) - 0.1, 2.6 * len(methods) + 1.3),
                             squeeze=False, sharey=True, layout="constrained")
    for row, method in enumerate(methods):
        for col, loss in enumerate(losses):
            ax = axes[row, col]
            cell = parts[(parts.loss == loss) & (parts.method == method)]
            epsilons = sorted(cell.epsilon.unique())
            x = np.arange(len(epsilons))
            up, down = np.zeros(len(epsilons)), np.zeros(len(epsilons))
            for part, colour in PART_COLOURS.items():
                values = cell[cell.part == part].set_index("epsilon").loc[epsilons, "mean"].to_numpy()
                bottom = np.where(values >= 0, up, down)
                ax.bar(x, values, bottom=bottom, color=colour, width=0.7, label=part)
                up, down = up + np.maximum(values, 0), down + np.minimum(values, 0)
            total = cell[cell.part == "total"].set_index("epsilon").loc[epsilons]
            ax.errorbar(x, total["mean"], yerr=[total["mean"] - total.ci_low, total.ci_high - total["mean"]],
                        fmt="o", color="black", ms=3, lw=1, capsize=2, label="total gap (95% interval)")
            ax.axhline(0, color="0.3", lw=0.8)
            ax.set_xticks(x, [f"{e:g}" for e in epsilons], fontsize="x-small")
            ax.set_title(f"{REAL_NAMES.get(key, key)}, {REAL_NAMES.get(loss, loss)}, {names.get(method, method)}",
                         fontsize="small")
            if row == len(methods) - 1:
                ax.set_xlabel("privacy level ε")
            if col == 0:
                ax.set_ylabel("test error above B0")
    return _legend_below_panels(fig, axes, ncols=3)
