"""What the certified release of Algorithm 2 costs on the real-data study itself: its record, paired with the idealisation's.

The real-data study (:mod:`dplr.replication.real.study`, Algorithm 3 on Adult and KDDCup99) releases Algorithm 2's
candidates certified (``release="certified"``, the book's theorem ``thm-op-certified``: 1 % of ε to output noise,
each candidate's point certified at gradient norm 1/n_i² of its part) since the certified release became the
library's default; its previous record released the solver's point as if it were the exact minimiser (the papers'
idealisation). Both records come from the same streams: the same splits, the same selection streams, and the
objective noise from the same underlying draws (rescaled to ε₁ = 0.99 ε; the certified release then draws its
output noise). So each repeat of the new record pairs with the same repeat of the old one, and Algorithm 1's rows,
whose code did not change, must be identical in both -- the script checks it, which checks the pairing.

For every (data set, loss, part, ε, n) it writes Algorithm 2's mean test error in each record, the mean paired
difference (certified minus idealisation) with its 95 % t-interval (:func:`dplr.replication.statistics.paired_t_test`),
and the verdicts of the study's fixed rule (:func:`dplr.replication.real.study.paired_comparisons`, Algorithm 2
against Algorithm 1) on each record, to ``benchmarks/certified_real_study.json``; the real-data chapter reads it. Run
(seconds)::

    PYTHONPATH=. .venv/bin/python benchmarks/certified_real_study.py [--idealised PATH]

``--idealised`` defaults to the record as committed in ``IDEALISED_COMMIT`` (``git show``), the last one written with
the idealisation.
"""
from __future__ import annotations

import argparse
import gzip
import json
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from dplr.replication.real.record import read_record
from dplr.replication.real.study import paired_comparisons
from dplr.replication.statistics import paired_t_test

ROOT = Path(__file__).resolve().parents[1]
OUT = Path(__file__).with_suffix(".json")
RECORD = ROOT / "book" / "data" / "real_study.csv.gz"
#: The last commit whose record released Algorithm 2 as the idealisation.
IDEALISED_COMMIT = "04c5680"
KEY = ["data", "loss", "part", "n", "epsilon", "repeat"]


def _idealised_record(path):
    if path is not None:
        return read_record(path)
    blob = subprocess.run(["git", "show", f"{IDEALISED_COMMIT}:book/data/real_study.csv.gz"], cwd=ROOT, check=True,
                          capture_output=True).stdout
    gzip.decompress(blob)  # a record, not an LFS pointer
    with tempfile.TemporaryDirectory() as tmp:
        target = Path(tmp) / "idealised.csv.gz"
        target.write_bytes(blob)
        return read_record(target)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--idealised", default=None, help="the idealisation's record (default: git show)")
    args = parser.parse_args()
    old, old_settings = _idealised_record(args.idealised)
    new, new_settings = read_record(RECORD)
    assert old_settings["seed"] == new_settings["seed"] and old_settings["n_repeats"] == new_settings["n_repeats"]
    # Algorithm 1 and the non-private references did not change: identical rows, so the repeats pair exactly
    columns = list(new.columns)
    same = {}
    for method in ("sensitivity", "nonprivate"):
        a = old[old.method == method].sort_values(KEY)[columns].reset_index(drop=True)
        b = new[new.method == method].sort_values(KEY)[columns].reset_index(drop=True)
        pd.testing.assert_frame_equal(a, b)
        same[method] = len(a)
    pairs = old[old.method == "objective"].merge(new[new.method == "objective"], on=KEY, validate="one_to_one",
                                                 suffixes=("_idealised", "_certified"))
    assert len(pairs) == int((new.method == "objective").sum())
    rows = []
    for key, group in pairs.groupby(KEY[:-1], sort=True):
        diff = (group.error_private_certified - group.error_private_idealised).to_numpy()
        low, high, p = paired_t_test(diff) if np.ptp(diff) > 0 else (diff.mean(), diff.mean(), 1.0)
        rows.append(dict(zip(KEY[:-1], key), repeats=int(diff.size),
                         error_idealised=float(group.error_private_idealised.mean()),
                         error_certified=float(group.error_private_certified.mean()),
                         difference=float(diff.mean()), ci_low=float(low), ci_high=float(high), p=float(p),
                         lam_changed=float(np.mean(group.lam_private_certified != group.lam_private_idealised))))
    verdicts = []
    old_rule, new_rule = paired_comparisons(old), paired_comparisons(new)
    merged = old_rule.merge(new_rule, on=["data", "loss", "part", "epsilon", "n"], suffixes=("_idealised",
                                                                                             "_certified"))
    for r in merged.itertuples():
        verdicts.append({"data": r.data, "loss": r.loss, "part": r.part, "epsilon": r.epsilon, "n": int(r.n),
                         "idealised": r.verdict_idealised, "certified": r.verdict_certified})
    changed = [v for v in verdicts if v["idealised"] != v["certified"]]
    OUT.write_text(json.dumps({"idealised_commit": IDEALISED_COMMIT, "identical_rows": same, "rows": rows,
                               "verdicts": verdicts, "verdicts_changed": changed}, indent=1) + "\n")
    table = pd.DataFrame(rows)
    print(table[table.part == "tradeoff"].to_string())
    print(f"{len(changed)} of {len(verdicts)} verdicts of the fixed rule changed:", *changed, sep="\n")


if __name__ == "__main__":
    main()
