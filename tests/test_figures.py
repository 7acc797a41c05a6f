"""dplr.replication.figures: the legend check fails on a legend over data and passes on one outside."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from dplr.replication.figures import check_legends, legend_below, legend_covered_points  # noqa: E402


def _figure(layout=None):
    fig, ax = plt.subplots(figsize=(4, 3), layout=layout)
    ax.plot([0, 1, 2, 3], [0.0, 0.1, 0.2, 0.3], marker="o", label="rising")
    ax.scatter([0.05], [2.9], label="top left point")  # where an upper-left legend goes
    ax.set(xlim=(-0.1, 3.1), ylim=(-0.1, 3.1))
    return fig, ax


def test_legend_over_a_point_fails():
    fig, ax = _figure()
    ax.legend(loc="upper left")
    assert legend_covered_points(fig)
    with pytest.raises(AssertionError, match="covers data"):
        check_legends(fig)
    plt.close(fig)


def test_legend_in_an_empty_region_or_outside_passes():
    fig, ax = _figure()
    ax.legend(loc="center right")  # nothing is plotted there
    assert check_legends(fig) is fig
    plt.close(fig)
    fig, ax = _figure(layout="constrained")
    legend_below(fig)
    assert not legend_covered_points(fig)
    plt.close(fig)


def test_band_vertices_count_as_data():
    fig, ax = plt.subplots(figsize=(4, 3))
    xs = [i / 20 for i in range(21)]
    ax.fill_between(xs, [0.88] * 21, [0.9] * 21, label="band")
    ax.plot([0, 1], [0, 0.1], label="line")
    ax.set(xlim=(0, 1), ylim=(0, 1))
    ax.legend(loc="upper left")
    assert legend_covered_points(fig)
    plt.close(fig)
