"""Wall clock, CPU time and peak memory of the real-data study (dplr.replication.real.study), and its numbers.

Runs :func:`dplr.replication.real.study.run_real_study` (default: every data set and loss, 200 repeats) as
``python -m dplr reproduce real`` does -- its experiments on ``--workers`` local processes (loky) -- and prints
wall-clock seconds, the CPU seconds of this process and its workers, the peak resident memory (of this process and
of the largest worker, from ``/proc``, sampled every 0.2 s, and their sum), the load average, and writes the points,
comparisons and references as CSV into ``--out``. ``--workers 1`` runs everything in this process.

    DPLR_DATA_DIR=/work/shared/datasets .venv/bin/python benchmarks/real_study_benchmark.py [--data adult]
"""
import argparse
import os
import resource
import threading
import time
from pathlib import Path

import psutil

from dplr.replication.real.study import DATASETS, DEFAULT_REPEATS, LOSSES, run_real_study


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", nargs="+", default=list(DATASETS))
    parser.add_argument("--losses", nargs="+", default=list(LOSSES))
    parser.add_argument("--repeats", type=int, default=DEFAULT_REPEATS)
    parser.add_argument("--workers", type=int, default=os.cpu_count())
    parser.add_argument("--out", default="real-study")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    peaks, done, worker_cpu = {"sum": 0.0, "largest": 0.0}, threading.Event(), {}

    def sample():  # resident memory of this process and its workers, and the workers' CPU time, every 0.2 s
        me = psutil.Process()
        while not done.is_set():
            try:
                children = me.children(recursive=True)
                sizes = [me.memory_info().rss] + [c.memory_info().rss for c in children]
                for c in children:
                    times = c.cpu_times()
                    worker_cpu[c.pid] = times.user + times.system
            except psutil.Error:
                continue
            peaks["sum"] = max(peaks["sum"], sum(sizes) / 2**20)
            peaks["largest"] = max(peaks["largest"], max(sizes) / 2**20)
            done.wait(0.2)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    wall, cpu = time.perf_counter(), psutil.Process().cpu_times()
    study = run_real_study(args.data, args.losses, n_repeats=args.repeats, n_jobs=args.workers,
                           processes=args.workers > 1)
    wall = time.perf_counter() - wall
    done.set()
    sampler.join()
    after = psutil.Process().cpu_times()
    cpu = after.user + after.system - cpu.user - cpu.system + sum(worker_cpu.values())
    peak = max(peaks["sum"], resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    study.points.to_csv(out / "points.csv", index=False, float_format="%.6g")
    study.comparisons.to_csv(out / "comparisons.csv", index=False, float_format="%.6g")
    study.references.to_csv(out / "references.csv", index=False, float_format="%.6g")
    print(f"{os.cpu_count()} cores, {args.workers} workers, load average {load:.1f} at the start, "
          f"{os.getloadavg()[0]:.1f} at the end")
    print(f"per cell (s): {study.wall_seconds}")
    print(f"real-data study, {args.repeats} repeats, {args.data} x {args.losses}: wall {wall:.1f} s, "
          f"CPU {cpu:.1f} s (with the workers' up to 0.2 s before the end), peak memory {peak:.0f} MB (largest process "
          f"{peaks['largest']:.0f} MB)")


if __name__ == "__main__":
    main()
