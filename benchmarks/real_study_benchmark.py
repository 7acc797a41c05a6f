"""Wall clock, CPU time and peak memory of the real-data study (dplr.replication.real.study), and its numbers.

Runs :func:`dplr.replication.real.study.run_real_study` (default: every data set and loss, 200 repeats) in this
process with ``--threads`` threads, prints wall-clock and CPU seconds, the peak resident memory of the process
(``resource.getrusage``; the study runs on threads, so this is the whole run), the load average, and writes the
points, comparisons and references as CSV into ``--out``.

    DPLR_DATA_DIR=/work/shared/datasets .venv/bin/python benchmarks/real_study_benchmark.py [--data adult]
"""
import argparse
import os
import resource
import time
from pathlib import Path

from dplr.replication.real.study import DATASETS, DEFAULT_REPEATS, LOSSES, run_real_study


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", nargs="+", default=list(DATASETS))
    parser.add_argument("--losses", nargs="+", default=list(LOSSES))
    parser.add_argument("--repeats", type=int, default=DEFAULT_REPEATS)
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--out", default="real-study")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    wall, cpu = time.perf_counter(), time.process_time()
    study = run_real_study(args.data, args.losses, n_repeats=args.repeats, n_jobs=args.threads)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    study.points.to_csv(out / "points.csv", index=False, float_format="%.6g")
    study.comparisons.to_csv(out / "comparisons.csv", index=False, float_format="%.6g")
    study.references.to_csv(out / "references.csv", index=False, float_format="%.6g")
    print(f"{os.cpu_count()} cores, {args.threads} threads, load average {load:.1f} at the start, "
          f"{os.getloadavg()[0]:.1f} at the end")
    print(f"per cell (s): {study.wall_seconds}")
    print(f"real-data study, {args.repeats} repeats, {args.data} x {args.losses}: wall {wall:.1f} s, "
          f"CPU {cpu:.1f} s, peak memory {peak:.0f} MB")


if __name__ == "__main__":
    main()
