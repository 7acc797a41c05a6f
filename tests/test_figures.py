"""dplr.replication.figures: the legend check fails on a legend over data and passes on one outside."""
import pytest


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
