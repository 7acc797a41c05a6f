r"""The record of the cost-of-privacy study, in the format of :mod:`dplr.replication.record`.

``python -m dplr reproduce baseline`` writes its rows to ``baseline-study.csv.gz``; ``make baseline-record`` copies
it to ``book/data/baseline_study.csv.gz``. The chapter recomputes a slice
(:func:`dplr.replication.baseline.study.recompute_rows`: B2's refit and the first repeat of the private learners on
the whole set at a few ε) and :func:`check_against_record` requires it to equal the record's; ``make
baseline-record-check`` recomputes every stage with the first two repeats and compares them with the record's
(:func:`compare_records` with ``prefix=True``). Algorithm 3's rows are not in this record: the study reads them from
the real-data record (:func:`dplr.replication.baseline.study.tuned_rows`).

What must agree exactly: the λ and the test errors (counts over the test set); the paired intervals of the
non-private steps (``diff_low``, ``diff_high``) to 1e-9 relative. One line per stage, method, ε, data set, loss and
repeat (:data:`RECORD_COLUMNS`).
"""
from __future__ import annotations

from dplr.replication import record

__all__ = ["RECORD_COLUMNS", "FORMAT", "write_record", "read_record", "check_against_record", "compare_records"]

#: Columns of a record.
RECORD_COLUMNS = ("data", "loss", "stage", "method", "epsilon", "repeat", "lam", "error", "diff_low", "diff_high")
#: The record's format.
FORMAT = record.RecordFormat(
    columns=RECORD_COLUMNS, key=("data", "loss", "stage", "method", "epsilon", "repeat"),
    exact=("lam",), errors=("error",), close=("diff_low", "diff_high"),
    floats=("epsilon", "lam", "diff_low", "diff_high"),
    fix="write the record again with make baseline-record (python -m dplr reproduce baseline)",
    unchecked_settings=("wall_seconds",))


def write_record(rows, n_test, path, settings):
    """Write a study's ``rows`` to ``path``; ``n_test`` maps each data set to the size of its test set."""
    record.write_record(rows, FORMAT, n_test, path, settings)


def read_record(path):
    """``(rows, settings)``: the rows with the test errors as fractions again, and the header's settings."""
    return record.read_record(path, FORMAT)


def check_against_record(record_rows, live):
    """Raise ``AssertionError`` unless every row of ``live`` is in ``record_rows`` with the same values."""
    return record.check_against_record(record_rows, live, FORMAT)


def compare_records(path, reference, prefix=False):
    """Check the record at ``path`` against the one at ``reference`` (the book's); ``prefix=True`` for a run of the
    first repeats."""
    return record.compare_records(path, reference, FORMAT, prefix=prefix)
