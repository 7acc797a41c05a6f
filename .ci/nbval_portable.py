"""Re-run nbval over every chapter under numeric configurations other than this machine's default (--default: it too).

Usage: .venv/bin/python .ci/nbval_portable.py [--default] [chapter.ipynb ...]
       (`make nbval-portable`; with --default, `make nbval-all`: the default configuration too, at the same time)

A reader's CPU, BLAS and core count must not change a stored output. We cannot run the chapters on every
machine, so this script stands in for other machines by changing, on this one, what decides how floating-point
work is done (`make nbval` is the default configuration; this adds the others):

* which OpenBLAS kernels run (``OPENBLAS_CORETYPE``: blocking, vector width and FMA use differ between them, so
  matrix products round differently),
* which SIMD code numpy dispatches to (``NPY_DISABLE_CPU_FEATURES``: its exp, log, sums and sorts have separate
  AVX-512, AVX2 and SSE versions; on a machine without AVX-512 the AVX-512 lines change nothing),
* how many threads BLAS uses (1 and 8: threads split sums differently), and how many threads dplr's solver uses
  (``OMP_NUM_THREADS``).

The configurations run at the same time, one pytest process each, with their logs in _build/nbval-portable/.
Exit status 1 if any cell fails under any configuration. OpenBLAS core types are x86-64 names: on another
architecture the script runs the thread configurations only and says so.
"""
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ALL_DISPATCH = "X86_V3 X86_V4 AVX512_ICL AVX512_SPR"  # numpy 2.4's dispatch targets above its x86-64-v2 baseline
CONFIGURATIONS = {
    # this machine's default (what `make nbval` runs), with --default: all three at once keep both cores busy
    "default": {},
    # SSE only: numpy at its x86-64-v2 baseline, OpenBLAS's Sandy Bridge (AVX, no FMA) kernels, one thread each
    "sse-sandybridge-1thread": {"NPY_DISABLE_CPU_FEATURES": ALL_DISPATCH, "OPENBLAS_CORETYPE": "Sandybridge",
                                "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"},
    # AVX2 without AVX-512 (what most laptops have), OpenBLAS's Nehalem (SSE) kernels, BLAS on 8 threads
    "avx2-nehalem-8threads": {"NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL AVX512_SPR",
                              "OPENBLAS_CORETYPE": "Nehalem", "OPENBLAS_NUM_THREADS": "8"},
}
X86_ONLY = ("NPY_DISABLE_CPU_FEATURES", "OPENBLAS_CORETYPE")
# Not a numeric setting: how long OpenBLAS's idle threads spin before they sleep (2^4 cycles instead of 2^28, about
# 0.1 s after every BLAS call). Spinning threads take the cores from the configurations running beside them; this
# cut the CPU time of two chapters under the 8-thread configuration by a fifth (30.7 -> 24.5 s), under the default
# by a tenth, and changes no result (the threads and their split of the work are the same).
QUIET_THREADS = {"OPENBLAS_THREAD_TIMEOUT": "4"}


def main(arguments):
    with_default = "--default" in arguments
    chapters = [a for a in arguments if a != "--default"]
    configurations = {k: v for k, v in CONFIGURATIONS.items() if with_default or k != "default"}
    chapters = chapters or sorted(str(p.relative_to(ROOT)) for p in (ROOT / "book").glob("*.ipynb"))
    x86 = platform.machine().lower() in ("x86_64", "amd64")
    if not x86:
        print(f"{platform.machine()}: OpenBLAS core types and numpy's x86 dispatch do not apply; "
              "varying thread counts only")
    logs = ROOT / "_build" / "nbval-portable"
    logs.mkdir(parents=True, exist_ok=True)
    runs = {}
    for name, settings in configurations.items():
        env = {**QUIET_THREADS, **os.environ}  # the environment may set it otherwise
        env.update({k: v for k, v in settings.items() if x86 or k not in X86_ONLY})
        command = [sys.executable, "-m", "pytest", "--nbval", "--nbval-current-env", "--nbval-sanitize-with",
                   "tests/nbval_sanitize.cfg", "-p", "no:cacheprovider", "-q", *chapters]
        log = open(logs / f"{name}.log", "w")
        runs[name] = (subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT), log,
                      time.perf_counter())
        print(f"{name}: " + " ".join(f"{k}={env[k]}" for k in settings if k in env))
    failed = []
    for name, (process, log, start) in runs.items():
        status = process.wait()
        log.close()
        text = (logs / f"{name}.log").read_text()
        summary = [line for line in text.splitlines() if line.startswith("FAILED") or " passed" in line
                   or " failed" in line or " error" in line]
        print(f"\n{name}: {'passed' if status == 0 else 'FAILED'} in {time.perf_counter() - start:.0f} s "
              f"(log: {logs.relative_to(ROOT) / (name + '.log')})")
        print("\n".join("  " + line for line in summary[-15:]))
        if status != 0:
            failed.append(name)
    if failed:
        print(f"\nstored outputs differ under: {', '.join(failed)} -- see the logs"
              + ("; an output that another machine prints differently shows more digits than its computation supports"
                 if failed != ["default"] else " (the default configuration: run make nbval, or make notebooks)"))
        return 1
    print("\nevery chapter's stored outputs reproduced under every configuration")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
