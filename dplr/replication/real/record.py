r"""The record of the real-data study: its per-repeat rows, in the format of :mod:`dplr.replication.record`.

The 200-repeat study (:func:`dplr.replication.real.study.run_real_study`) costs minutes on two cores (the README's
performance table), too long for a chapter that every reader runs and CI tests several times. ``python -m dplr
reproduce real`` writes its rows to ``real-study.csv.gz``; ``make real-record`` runs it and copies the file to
``book/data/real_study.csv.gz``. The chapter recomputes the first repeats of every experiment and
:func:`check_against_record` requires them to be identical to the record's; ``make real-record-check`` recomputes
the first 50 repeats of every experiment and compares them with the record's (:func:`compare_records` with
``prefix=True``; ``make real-record-check REPEATS=200`` compares them all).

What must agree exactly: the chosen λ and the test errors (counts over the test set); the probability that the
selection picks a fewest-validation-errors candidate (``p_chosen_best``) to 1e-9 relative. One line per repeat,
method, ε, data set, loss and training size (:data:`RECORD_COLUMNS`).
"""
from __future__ import annotations

from dplr.replication import record

__all__ = ["RECORD_COLUMNS", "ERROR_COLUMNS", "FORMAT", "write_record", "read_record", "check_against_record",
           "compare_records"]

#: Columns of a record; together they identify a row and hold everything the chapter computes from.
RECORD_COLUMNS = ("data", "loss", "part", "n", "repeat", "method", "epsilon", "lam_private", "error_private",
                  "lam_nonprivate", "error_nonprivate", "error_best", "p_chosen_best")
#: The test-error columns, stored as counts over the test set.
ERROR_COLUMNS = ("error_private", "error_nonprivate", "error_best")
#: The record's format.
FORMAT = record.RecordFormat(
    columns=RECORD_COLUMNS, key=("data", "loss", "part", "n", "method", "epsilon", "repeat"),
    exact=("lam_private", "lam_nonprivate"), errors=ERROR_COLUMNS, close=("p_chosen_best",),
    floats=("epsilon", "lam_private", "lam_nonprivate", "p_chosen_best"),
    fix="write the record again with make real-record (python -m dplr reproduce real, then its real-study.csv.gz)")


def write_record(rows, n_test, path, seed, n_repeats):
    """Write a study's ``rows`` to ``path``; ``n_test`` maps each data set to the size of its test set."""
    record.write_record(rows, FORMAT, n_test, path, {"seed": int(seed), "n_repeats": int(n_repeats)})


def read_record(path):
    """``(rows, settings)``: the rows with the test errors as fractions again, and the header's settings."""
    return record.read_record(path, FORMAT)


def check_against_record(record_rows, live):
    """Raise ``AssertionError`` unless every row of ``live`` (a run's rows) is in ``record_rows`` with the same
    values (exact for the chosen λ and the test errors; 1e-9 relative for ``p_chosen_best``). Returns the number of
    rows compared."""
    return record.check_against_record(record_rows, live, FORMAT)


def compare_records(path, reference, prefix=False):
    """Check the record at ``path`` (a fresh full run's, or with ``prefix=True`` a run of its first repeats) against
    the one at ``reference`` (the book's)."""
    return record.compare_records(path, reference, FORMAT, prefix=prefix)
