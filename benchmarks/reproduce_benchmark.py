"""Wall time and peak memory of `python -m dplr reproduce all`, measured from outside.

Runs the command as a child process (with the arguments given after `--`, default `all`) and, every
--interval seconds, sums the resident set size (RSS) of the child and all its descendants (the
worker processes). RSS counts shared pages (the libraries every worker maps) once per process, so
the sum is an upper bound on the memory the run needs. Also reported: the largest single process,
the CPU seconds of the whole process tree (user + system, the last sample of every process seen, so
a process's final fraction of a sampling interval is missed), the machine (model, cores, memory)
and its load average before and after -- the machine may be shared, and other work slows the run.

Run with the project's environment:

    .venv/bin/python benchmarks/reproduce_benchmark.py                    # reproduce all, full fidelity
    .venv/bin/python benchmarks/reproduce_benchmark.py -- paper --restarts 20

The output folder is a temporary directory unless --out is given. The last line is a JSON record.
"""
import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time

import psutil


def _sample(process, cpu):
    """(sum of RSS over the process and its descendants, largest single RSS) in bytes; updates ``cpu``.

    ``cpu`` maps each process seen to its latest user + system CPU seconds.
    """
    total, largest = 0, 0
    try:
        members = [process] + process.children(recursive=True)
    except psutil.NoSuchProcess:
        return 0, 0
    for member in members:
        try:
            with member.oneshot():
                rss = member.memory_info().rss
                times = member.cpu_times()
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
        cpu[(member.pid, member.create_time())] = times.user + times.system
        total += rss
        largest = max(largest, rss)
    return total, largest


def _cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=None, help="output folder of the run (default: a temporary folder)")
    parser.add_argument("--interval", type=float, default=0.1, help="seconds between memory samples")
    parser.add_argument("arguments", nargs="*", default=["all"],
                        help="arguments of `python -m dplr reproduce` (after --), default: all")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        out = args.out or tmp
        command = [sys.executable, "-m", "dplr", "reproduce", *args.arguments, "--out", out, "--quiet"]
        machine = {"cpu": _cpu_model(), "cores": os.cpu_count(),
                   "memory_gb": round(psutil.virtual_memory().total / 2**30, 1), "platform": platform.platform(),
                   "python": platform.python_version()}
        load_before = os.getloadavg()
        peak_total = peak_single = 0
        cpu = {}
        start = time.perf_counter()
        child = subprocess.Popen(command)
        watched = psutil.Process(child.pid)
        while child.poll() is None:
            total, single = _sample(watched, cpu)
            peak_total, peak_single = max(peak_total, total), max(peak_single, single)
            time.sleep(args.interval)
        wall = time.perf_counter() - start
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu_seconds = max(sum(cpu.values()), usage.ru_utime + usage.ru_stime)
        load_after = os.getloadavg()
        record_path = os.path.join(out, "reproduce.json")
        run = json.load(open(record_path)) if os.path.exists(record_path) else {}
    if child.returncode:
        raise SystemExit(f"the run failed with exit code {child.returncode}")
    result = {"command": "python -m dplr reproduce " + " ".join(args.arguments), "wall_seconds": round(wall, 1),
              "study_seconds": run.get("seconds"), "cpu_seconds": round(cpu_seconds, 1),
              "peak_rss_mb_sum": round(peak_total / 2**20), "peak_rss_mb_largest_process": round(peak_single / 2**20),
              "machine": machine, "load_average_before": [round(x, 2) for x in load_before],
              "load_average_after": [round(x, 2) for x in load_after]}
    print(f"command:      {result['command']}")
    print(f"machine:      {machine['cpu']}, {machine['cores']} cores, {machine['memory_gb']} GB, {machine['platform']}")
    print(f"load average: {load_before[0]:.2f} before, {load_after[0]:.2f} after (1-minute)")
    print(f"wall time:    {wall:.1f} s (studies: {run.get('seconds')})")
    print(f"CPU time:     {result['cpu_seconds']:.1f} s (user + system over the process tree, sampled)")
    print(f"peak memory:  {result['peak_rss_mb_sum']} MB RSS summed over processes, "
          f"{result['peak_rss_mb_largest_process']} MB largest process")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
