r"""The record of the real-data study: its per-repeat rows, written once by a full run, checked by every reader.

The 200-repeat study (:func:`dplr.replication.real.study.run_real_study`) costs minutes on two cores (the README's
performance table), too long for a chapter that every reader runs and CI tests several times. The real-data
chapter therefore reads its per-repeat rows from a **record**, written by a full run (``python -m dplr reproduce
real`` writes ``real-study.csv.gz`` into its output folder; ``make real-record`` runs it and copies the file to
``book/data/real_study.csv.gz``), and recomputes the first repeats of every experiment in place:
:func:`check_against_record` requires them to be identical to the record's. That check can fail: a record that the
code no longer produces, or a change of the code that changes any released classifier of those repeats, stops the
chapter with the command that writes a new record. It checks a prefix of the repeats: the repeats draw from
independent streams spawned in order (:func:`dplr.tuning.private_tuning_experiment`), so repeat ``r`` of a run of 3
repeats is repeat ``r`` of a run of 200. ``make real-record-check`` recomputes every repeat and compares them all
(:func:`compare_records`).

What must agree exactly: every column that the released classifier and the comparisons depend on (the chosen λ and
the test errors, which are counts over the test set divided by its size) and the selection probability of the best
candidate to 1e-9 relative (an exponential, whose last bits may differ between math libraries).

The file: gzip-compressed CSV, the test errors as counts over the test set (exact), one line per repeat, method,
ε, data set, loss and training size (:data:`RECORD_COLUMNS`), and a header line with the seed and the repeats.
"""
from __future__ import annotations

import gzip
import io
import json
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = ["RECORD_COLUMNS", "ERROR_COLUMNS", "write_record", "read_record", "check_against_record",
           "compare_records"]

#: Columns of a record; together they identify a row and hold everything the chapter computes from.
RECORD_COLUMNS = ("data", "loss", "part", "n", "repeat", "method", "epsilon", "lam_private", "error_private",
                  "lam_nonprivate", "error_nonprivate", "error_best", "p_chosen_best")
#: The test-error columns, stored as counts over the test set.
ERROR_COLUMNS = ("error_private", "error_nonprivate", "error_best")
_KEY = ["data", "loss", "part", "n", "method", "epsilon", "repeat"]


def write_record(rows, n_test, path, seed, n_repeats):
    """Write a study's ``rows`` to ``path``; ``n_test`` maps each data set to the size of its test set."""
    frame = rows.loc[:, list(RECORD_COLUMNS)].copy()
    scale = frame["data"].map(n_test).astype(float)
    for column in ERROR_COLUMNS:
        counts = frame[column] * scale
        if not np.allclose(counts[counts.notna()], np.round(counts[counts.notna()]), rtol=0, atol=1e-6):
            raise ValueError(f"{column} is not a count over the test set: is n_test right?")
        frame[column] = np.round(counts).astype("Int64")
    header = json.dumps({"seed": int(seed), "n_repeats": int(n_repeats), "n_test": {k: int(v) for k, v in n_test.items()}})
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wt", encoding="utf-8", compresslevel=9) as out:
        out.write("# " + header + "\n")
        frame.to_csv(out, index=False, float_format="%.17g")


def read_record(path):
    """``(rows, settings)``: the rows with the test errors as fractions again, and the header's settings."""
    with gzip.open(path, "rt", encoding="utf-8") as source:
        first = source.readline()
        if not first.startswith("# "):
            raise ValueError(f"{path} is not a record of the real-data study (no settings line).")
        settings = json.loads(first[2:])
        # the floats written with 17 digits are parsed by Python's float (exact), not by the parser of the
        # installed pandas (older ones are off by an ulp)
        floats = ("epsilon", "lam_private", "lam_nonprivate", "p_chosen_best")
        rows = pd.read_csv(io.StringIO(source.read()), dtype={column: str for column in floats})
    missing = set(RECORD_COLUMNS) - set(rows.columns)
    if missing:
        raise ValueError(f"{path} lacks the columns {sorted(missing)}: write it again with make real-record.")
    for column in floats:
        rows[column] = [float(v) if isinstance(v, str) else np.nan for v in rows[column]]
    scale = rows["data"].map(settings["n_test"]).astype(float)
    for column in ERROR_COLUMNS:
        rows[column] = rows[column] / scale  # count / n: the float test_error returns
    rows["n"] = rows["n"].astype(int)
    return rows, settings


def check_against_record(record, live):
    """Raise ``AssertionError`` unless every row of ``live`` (a run's rows) is in ``record`` with the same values.

    Exact for the chosen λ and the test errors; 1e-9 relative for ``p_chosen_best``. Returns the number of rows
    compared.
    """
    live = live.loc[:, list(RECORD_COLUMNS)]
    merged = live.merge(record.loc[:, list(RECORD_COLUMNS)], on=_KEY, how="left", suffixes=("", "_record"),
                        indicator=True)
    absent = merged[merged["_merge"] != "both"]
    fix = "write the record again with make real-record (python -m dplr reproduce real, then its real-study.csv.gz)"
    if len(absent):
        raise AssertionError(f"{len(absent)} recomputed rows are not in the record (first: "
                             f"{absent.iloc[0][_KEY].to_dict()}); {fix}")
    for column in ("lam_private", "lam_nonprivate") + ERROR_COLUMNS:
        a, b = merged[column].to_numpy(float), merged[column + "_record"].to_numpy(float)
        differ = ~((a == b) | (np.isnan(a) & np.isnan(b)))
        if differ.any():
            first = merged[differ].iloc[0]
            raise AssertionError(f"{int(differ.sum())} recomputed rows differ from the record in {column} (first: "
                                 f"{first[_KEY].to_dict()}: {first[column]!r} here, {first[column + '_record']!r} "
                                 f"in the record); {fix}")
    a, b = merged["p_chosen_best"].to_numpy(float), merged["p_chosen_best_record"].to_numpy(float)
    close = np.isclose(a, b, rtol=1e-9, atol=0) | (np.isnan(a) & np.isnan(b))
    if not close.all():
        raise AssertionError(f"{int((~close).sum())} recomputed selection probabilities differ from the record; {fix}")
    return len(merged)


def compare_records(path, reference):
    """Check the record at ``path`` (a fresh full run's) against the one at ``reference`` (the book's): the same
    settings, the same rows, the same values (:func:`check_against_record`). Returns the number of rows compared."""
    rows, settings = read_record(path)
    expected, expected_settings = read_record(reference)
    if settings != expected_settings:
        raise AssertionError(f"the runs differ in their settings: {settings} here, {expected_settings} in {reference}")
    if len(rows) != len(expected):
        raise AssertionError(f"{len(rows)} rows here, {len(expected)} in {reference}")
    return check_against_record(expected, rows)
