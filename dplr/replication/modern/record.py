r"""The record of the comparison with today's methods: its per-repeat rows, in the format of
:mod:`dplr.replication.record`.

The full comparison (:func:`dplr.replication.modern.study.run_modern_study`) costs most of an hour on two cores (the
README's performance table). ``python -m dplr reproduce modern`` writes its rows to ``modern-study.csv.gz``;
``make modern-record`` runs it and copies the file to ``book/data/modern_study.csv.gz``. The chapter recomputes the
first repeat of every experiment at some ε (the streams are named by contender and ε, so any subset of ε gives the
record's rows) and :func:`check_against_record` requires them to be identical to the record's.

What must agree exactly: the chosen candidate and the test errors (counts over the test set); the probability
that the selection picks a fewest-validation-errors candidate (``p_chosen_best``) to 1e-9 relative. The
experiments' wall seconds are kept in the settings line and are not compared (:data:`FORMAT`).
"""
from __future__ import annotations

from dplr.replication import record

__all__ = ["RECORD_COLUMNS", "FORMAT", "write_record", "read_record", "check_against_record", "compare_records"]

#: Columns of the record, in file order.
RECORD_COLUMNS = ("data", "loss", "n", "repeat", "method", "epsilon", "candidate", "error_private",
                  "error_nonprivate", "error_best", "p_chosen_best")
#: The record's format (the seconds are timings, not results: never compared).
FORMAT = record.RecordFormat(
    columns=RECORD_COLUMNS, key=("data", "loss", "n", "method", "epsilon", "repeat"), exact=("candidate",),
    errors=("error_private", "error_nonprivate", "error_best"), close=("p_chosen_best",),
    floats=("epsilon", "p_chosen_best"),
    fix="write the record again with make modern-record (python -m dplr reproduce modern, then its "
        "modern-study.csv.gz)",
    unchecked_settings=("seconds",))


def write_record(study, path):
    """Write a :class:`~dplr.replication.modern.study.ModernStudy`'s rows and settings to ``path``."""
    n_test = dict(zip(study.references.data, study.references.n_test))
    settings = {"seed": int(study.seed), "repeats": {k: int(v) for k, v in study.repeats.items()},
                "epsilons": sorted(float(e) for e in study.rows.epsilon.unique()), "seconds": study.seconds}
    record.write_record(study.rows, FORMAT, n_test, path, settings)


def read_record(path):
    """``(rows, settings)``: the rows with the test errors as fractions again, and the settings line."""
    return record.read_record(path, FORMAT)


def check_against_record(record_rows, live):
    """Raise ``AssertionError`` unless every row of ``live`` is in ``record_rows`` with the same values; returns the
    number of rows compared."""
    return record.check_against_record(record_rows, live, FORMAT)


def compare_records(path, reference):
    """Check the record at ``path`` (a fresh full run's) against the one at ``reference`` (the book's)."""
    return record.compare_records(path, reference, FORMAT)
