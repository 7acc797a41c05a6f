"""dplr.replication.figures: the legend check fails on a legend over data and passes on one outside."""
import pytest
import pandas as pd


@pytest.fixture
def figures():
    """dplr.replication.figures needs the optional extra dplr[plot]: each test skips without it (make test-oldest)."""
    pytest.importorskip("matplotlib").use("Agg")
    pytest.importorskip("seaborn")
    from dplr.replication import figures

    return figures


@pytest.fixture
def plt(figures):
    import matplotlib.pyplot as plt  # available: the figures fixture imported matplotlib

    yield plt
    plt.close("all")


def _figure(plt, layout=None):
    fig, ax = plt.subplots(figsize=(4, 3), layout=layout)
    ax.plot([0, 1, 2, 3], [0.0, 0.1, 0.2, 0.3], marker="o", label="rising")
    ax.scatter([0.05], [2.9], label="top left point")  # where an upper-left legend goes
    ax.set(xlim=(-0.1, 3.1), ylim=(-0.1, 3.1))
    return fig, ax


def test_legend_over_a_point_fails(figures, plt):
    fig, ax = _figure(plt)
    ax.legend(loc="upper left")
    assert figures.legend_covered_points(fig)
    with pytest.raises(AssertionError, match="covers data"):
        figures.check_legends(fig)


def test_legend_in_an_empty_region_or_outside_passes(figures, plt):
    fig, ax = _figure(plt)
    ax.legend(loc="center right")  # nothing is plotted there
    assert figures.check_legends(fig) is fig
    fig, ax = _figure(plt, layout="constrained")
    figures.legend_below(fig)
    assert not figures.legend_covered_points(fig)


def test_band_vertices_count_as_data(figures, plt):
    fig, ax = plt.subplots(figsize=(4, 3))
    xs = [i / 20 for i in range(21)]
    ax.fill_between(xs, [0.88] * 21, [0.9] * 21, label="band")
    ax.plot([0, 1], [0, 0.1], label="line")
    ax.set(xlim=(0, 1), ylim=(0, 1))
    ax.legend(loc="upper left")
    assert figures.legend_covered_points(fig)


def _real_points():
    import pandas as pd

    rows = []
    for data in ("adult", "kdd"):
        for loss in ("logistic", "huber"):
            for part, values in (("tradeoff", [(e, 1000) for e in (0.1, 1.0)]),
                                 ("curve", [(e, n) for e in (0.1, 1.0) for n in (250, 500, 1000)])):
                for eps, n in values:
                    for method, mean in (("objective", 0.2), ("sensitivity", 0.3)):
                        rows.append(dict(data=data, loss=loss, part=part, method=method, epsilon=eps, n=n, mean=mean,
                                         ci_low=mean - 0.01, ci_high=mean + 0.01))
                    rows.append(dict(data=data, loss=loss, part=part, method="nonprivate", epsilon=float("inf"), n=n,
                                     mean=0.15, ci_low=0.14, ci_high=0.16))
    references = pd.DataFrame([dict(data=d, loss=l, chance=0.25, error_all_data=0.15) for d in ("adult", "kdd")
                               for l in ("logistic", "huber")])
    return pd.DataFrame(rows).drop_duplicates(["data", "loss", "part", "method", "epsilon", "n"]), references


@pytest.mark.parametrize("part, panels", [("tradeoff", 4), ("curve", 8)])
def test_real_study_figure_has_a_panel_per_setting_and_its_legend_outside(figures, plt, part, panels):
    points, references = _real_points()
    fig = figures.real_study_figure(points, references, part)
    assert len(fig.axes) == panels and len(fig.legends) == 1
    assert not figures.legend_covered_points(fig)
    titles = [ax.get_title() for ax in fig.axes]
    assert titles[0].startswith("Adult, logistic regression") and titles[-1].startswith("KDDCup99, Huber SVM")


def _modern_points():
    import pandas as pd

    rows = []
    for data in ("adult", "kdd"):
        for loss in ("logistic", "huber"):
            for i, method in enumerate(("objective", "sensitivity", "gaussian_output", "gaussian_objective", "amp",
                                        "dpsgd")):
                for eps in (0.01, 0.1, 1.0, 10.0):
                    mean = 0.15 + 0.2 / (1 + 10 * eps) + 0.01 * i
                    rows.append({"data": data, "loss": loss, "method": method, "epsilon": eps, "mean": mean,
                                 "ci_low": mean - 0.01, "ci_high": mean + 0.01, "repeats": 10})
    references = pd.DataFrame([{"data": d, "loss": loss, "chance": 0.24, "error_nonprivate_best": 0.15}
                               for d in ("adult", "kdd") for loss in ("logistic", "huber")])
    return pd.DataFrame(rows), references


def test_modern_study_figure_has_every_contender_and_its_legend_outside(figures, plt):
    points, references = _modern_points()
    fig = figures.modern_study_figure(points, references)
    assert len(fig.axes) == 4 and len(fig.legends) == 1
    assert not figures.legend_covered_points(fig)
    labels = [text.get_text() for text in fig.legends[0].get_texts()]
    assert len(labels) == 6 + 2 and any(label.startswith("DP-SGD") for label in labels)
    # each contender's style differs from every other's (colour and line together)
    styles = [(colour, line) for colour, line, _ in figures.CONTENDER_STYLES.values()]
    assert len(set(map(str, styles))) == len(styles)


def test_smallest_text_is_measured_as_the_site_shows_it(figures, plt):
    SITE_COLUMN_PX, check_legible, smallest_text_px = (figures.SITE_COLUMN_PX, figures.check_legible,
                                                        figures.smallest_text_px)
    fig, ax = plt.subplots(figsize=(5, 3), dpi=100)  # 500 px: shown at its size
    ax.set_title("t", fontsize=12)
    ax.set_xticks([])
    ax.set_yticks([])
    assert smallest_text_px(fig) == pytest.approx(12 * 100 / 72)
    fig.set_size_inches(15, 3)  # 1,500 px: shown at SITE_COLUMN_PX / 1500 of its size
    assert smallest_text_px(fig) == pytest.approx(12 * 100 / 72 * SITE_COLUMN_PX / 1500)
    with pytest.raises(AssertionError, match="smallest text"):
        check_legible(fig)


def test_every_figure_of_the_book_checks_its_legibility(figures):
    """Every code cell that stores a figure calls check_legible, itself or through a figure function of dplr that
    does (found by reading dplr.replication.figures' source)."""
    import inspect
    import json
    import re
    from pathlib import Path

    checking = {name for name, f in vars(figures).items() if inspect.isfunction(f) and f.__module__ == figures.__name__
                and "check_legible(" in inspect.getsource(f) and name != "check_legible"}
    pattern = re.compile(r"\b(check_legible|" + "|".join(map(re.escape, sorted(checking))) + r")\(") if checking \
        else re.compile(r"\bcheck_legible\(")
    unchecked = []
    for path in sorted(Path(__file__).resolve().parents[1].glob("book/*.ipynb")):
        for i, cell in enumerate(json.loads(path.read_text())["cells"]):
            if cell["cell_type"] == "code" and any("image/png" in o.get("data", {}) for o in cell.get("outputs", [])):
                if not pattern.search("".join(cell["source"])):
                    unchecked.append(f"{path.name} cell {i}")
    assert not unchecked, f"figures whose legibility is not checked (call figures.check_legible(fig)): {unchecked}"


def test_baseline_parts_figure_has_a_panel_per_method_and_loss_and_its_legend_outside(figures, plt):
    rows = []
    for loss in ("logistic", "huber"):
        for method in ("sensitivity", "objective"):
            for eps in (0.1, 1.0, 3.0):
                for i, part in enumerate(("feature map", "candidate grid", "noise", "split and selection")):
                    mean = (-0.002 if part == "feature map" else 0.01 * (i + 1) / eps)
                    rows.append({"data": "adult", "loss": loss, "method": method, "epsilon": eps, "part": part,
                                 "mean": mean, "ci_low": mean - 0.01, "ci_high": mean + 0.01})
                total = sum(r["mean"] for r in rows[-4:])
                rows.append({"data": "adult", "loss": loss, "method": method, "epsilon": eps, "part": "total",
                             "mean": total, "ci_low": total - 0.01, "ci_high": total + 0.01})
    fig = figures.baseline_parts_figure(pd.DataFrame(rows))
    assert len(fig.axes) == 4 and len(fig.legends) == 1
    assert [t.get_text() for t in fig.legends[0].get_texts()] == list(figures.PART_COLOURS) + [
        "total gap (95% interval)"]
    figures.check_legible(fig)
