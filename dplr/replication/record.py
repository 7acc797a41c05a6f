r"""Records of long studies: their per-repeat rows, written once by a full run, checked by every reader.

A study too long for a chapter that every reader runs (the real-data study, the comparison with today's methods)
is run in full by ``python -m dplr reproduce``, which writes its rows as a **record**; the chapter reads the record
and recomputes the first repeats in place, and :func:`check_against_record` requires them to equal the record's.
That check can fail: a record that the code no longer produces, or a change of the code that changes any released
classifier of those repeats, stops the chapter with the command that writes a new record. A prefix of the repeats
suffices because the repeats draw from independent streams spawned in order (:func:`dplr.tuning.private_tuning_with`),
so repeat ``r`` of a run of 3 repeats is repeat ``r`` of a run of 200. :func:`compare_records` compares two whole
records (a fresh full run's with the book's).

A :class:`RecordFormat` says which columns identify a row (``key``), which must agree exactly (the choice and the
test errors, which are counts over the test set divided by its size), and which to a relative 1e-9 (a selection
probability: an exponential, whose last bits may differ between math libraries).

The file: gzip-compressed CSV, the test errors as counts over the test set (exact), one line per row, and a first
line ``# {json}`` with the run's settings (seed, repeats, test-set sizes, and anything else the study keeps, such as
timings, which :func:`compare_records` ignores when listed in ``RecordFormat.unchecked_settings``).
"""
from __future__ import annotations

import gzip
import io
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = ["RecordFormat", "write_record", "read_record", "check_against_record", "compare_records"]


@dataclass(frozen=True)
class RecordFormat:
    """A record's columns: all of them in file order, the key, the exact ones, the test-error counts, the close ones
    and the floats (parsed by Python's float: exact under every pandas); ``fix`` says how to write a new record."""

    columns: tuple
    key: tuple
    exact: tuple
    errors: tuple
    close: tuple
    floats: tuple
    fix: str
    unchecked_settings: tuple = ()


def write_record(rows, fmt, n_test, path, settings):
    """Write ``rows`` (a study's) in format ``fmt`` to ``path``; ``n_test`` maps each data set to its test-set size,
    ``settings`` (a JSON-able dict) goes to the first line with ``n_test``."""
    frame = rows.loc[:, list(fmt.columns)].copy()
    scale = frame["data"].map(n_test).astype(float)
    for column in fmt.errors:
        counts = frame[column] * scale
        known = counts.notna()
        if not np.allclose(counts[known], np.round(counts[known]), rtol=0, atol=1e-6):
            raise ValueError(f"{column} is not a count over the test set: is n_test right?")
        frame[column] = np.round(counts).astype("Int64")
    header = json.dumps({**settings, "n_test": {k: int(v) for k, v in n_test.items()}})
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wt", encoding="utf-8", compresslevel=9) as out:
        out.write("# " + header + "\n")
        frame.to_csv(out, index=False, float_format="%.17g")


def read_record(path, fmt):
    """``(rows, settings)``: the rows with the test errors as fractions again, and the first line's settings."""
    with gzip.open(path, "rt", encoding="utf-8") as source:
        first = source.readline()
        if not first.startswith("# "):
            raise ValueError(f"{path} is not a record (no settings line); {fmt.fix}.")
        settings = json.loads(first[2:])
        # the floats written with 17 digits are parsed by Python's float (exact), not by the parser of the
        # installed pandas (older ones are off by an ulp)
        rows = pd.read_csv(io.StringIO(source.read()), dtype={column: str for column in fmt.floats})
    missing = set(fmt.columns) - set(rows.columns)
    if missing:
        raise ValueError(f"{path} lacks the columns {sorted(missing)}; {fmt.fix}.")
    for column in fmt.floats:
        rows[column] = [float(v) if isinstance(v, str) else np.nan for v in rows[column]]
    scale = rows["data"].map(settings["n_test"]).astype(float)
    for column in fmt.errors:
        rows[column] = rows[column] / scale  # count / n: the float test_error returns
    if "n" in rows.columns:  # the training-set size, where a record keeps it
        rows["n"] = rows["n"].astype(int)
    return rows, settings


def check_against_record(record, live, fmt):
    """Raise ``AssertionError`` unless every row of ``live`` (a run's rows) is in ``record`` with the same values:
    exact for ``fmt.exact`` and ``fmt.errors``, 1e-9 relative for ``fmt.close``. Returns the number of rows compared."""
    key = list(fmt.key)
    live = live.loc[:, list(fmt.columns)]
    merged = live.merge(record.loc[:, list(fmt.columns)], on=key, how="left", suffixes=("", "_record"),
                        indicator=True)
    absent = merged[merged["_merge"] != "both"]
    if len(absent):
        raise AssertionError(f"{len(absent)} recomputed rows are not in the record (first: "
                             f"{absent.iloc[0][key].to_dict()}); {fmt.fix}")
    for column in fmt.exact + fmt.errors:
        a, b = merged[column].to_numpy(float), merged[column + "_record"].to_numpy(float)
        differ = ~((a == b) | (np.isnan(a) & np.isnan(b)))
        if differ.any():
            first = merged[differ].iloc[0]
            raise AssertionError(f"{int(differ.sum())} recomputed rows differ from the record in {column} (first: "
                                 f"{first[key].to_dict()}: {first[column]!r} here, {first[column + '_record']!r} "
                                 f"in the record); {fmt.fix}")
    for column in fmt.close:
        a, b = merged[column].to_numpy(float), merged[column + "_record"].to_numpy(float)
        close = np.isclose(a, b, rtol=1e-9, atol=0) | (np.isnan(a) & np.isnan(b))
        if not close.all():
            raise AssertionError(f"{int((~close).sum())} recomputed values of {column} differ from the record; "
                                 f"{fmt.fix}")
    return len(merged)


def compare_records(path, reference, fmt, prefix=False):
    """Check the record at ``path`` (a fresh full run's) against the one at ``reference`` (the book's): the same
    settings (but ``fmt.unchecked_settings``), the same rows, the same values (:func:`check_against_record`).
    Returns the number of rows compared.

    ``prefix=True``: ``path`` may hold fewer repeats (its ``n_repeats`` setting at most the reference's, every other
    setting equal) -- a run at a depth that still computes every experiment -- and must equal the reference's rows of
    those repeats, and only those. Sound because repeat ``r`` draws from its own stream whatever the number of repeats
    (this module's docstring)."""
    rows, settings = read_record(path, fmt)
    expected, expected_settings = read_record(reference, fmt)
    for name in fmt.unchecked_settings:
        settings.pop(name, None)
        expected_settings.pop(name, None)
    if prefix:
        repeats, recorded = settings.pop("n_repeats", None), expected_settings.pop("n_repeats", None)
        if repeats is None or recorded is None or not 1 <= repeats <= recorded:
            raise AssertionError(f"a prefix of the record needs 1 <= n_repeats <= the record's: {repeats} here, "
                                 f"{recorded} in {reference}")
        expected = expected[expected["repeat"] < repeats]
    if settings != expected_settings:
        raise AssertionError(f"the runs differ in their settings: {settings} here, {expected_settings} in {reference}")
    if len(rows) != len(expected):
        raise AssertionError(f"{len(rows)} rows here, {len(expected)} in {reference}")
    return check_against_record(expected, rows, fmt)
