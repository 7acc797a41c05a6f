"""One plotting style for the whole book, set in one place.

Every chapter calls :func:`set_book_style` once; figures then share fonts, sizes and colours, and
the three methods keep one colour each across chapters (:data:`METHOD_COLOURS`).
"""
from __future__ import annotations

import matplotlib.pyplot as plt
import seaborn as sns

__all__ = ["METHOD_COLOURS", "set_book_style"]

_PALETTE = sns.color_palette("colorblind")
METHOD_COLOURS = {
    "standard": _PALETTE[2],
    "sensitivity": _PALETTE[3],
    "objective": _PALETTE[0],
    "objective_nips2008": _PALETTE[4],
    "published": "0.35",
}


def set_book_style():
    """Apply the book's seaborn theme (white grid, colour-blind palette, fixed figure size and DPI)."""
    sns.set_theme(context="notebook", style="whitegrid", palette="colorblind")
    plt.rcParams.update({"figure.figsize": (7.0, 4.0), "figure.dpi": 100, "savefig.dpi": 100,
                         "axes.titlesize": "medium"})
