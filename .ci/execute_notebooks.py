"""Execute chapters in place, top to bottom in a fresh kernel, storing their outputs.

Usage: .venv/bin/python .ci/execute_notebooks.py book/some_chapter.ipynb [...]   (or `make notebooks`)

The stored outputs are what `pytest --nbval` compares against and what the site renders.

Each chapter's wall-clock run time (kernel start to last cell, in this process), the time it finished
(UTC), the machine it ran on, the commit checked out (`git rev-parse HEAD`) and the files that differed from
it when the chapter started (`git status`: the code that ran is that commit plus those changes) are stored in
the notebook's metadata under `dplr.execution`; the site's "Execution statistics" page (book/exec_stats.md, rendered
by book/_ext/dplr_site.py) reports them.
"""
import os
import platform
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import nbclient
import nbformat


def coalesce_streams(nb):
    """Merge consecutive stream outputs of one cell with the same name (stdout, stderr) into one, as Jupyter's
    front ends show them: how a cell's prints are split into messages depends on when the kernel flushed them (the
    machine's load), not on what the cell printed, and stored outputs should not."""
    for cell in nb.cells:
        merged = []
        for output in cell.get("outputs", []):
            if (merged and output.output_type == "stream" and merged[-1].output_type == "stream"
                    and merged[-1].name == output.name):
                merged[-1].text += output.text
            else:
                merged.append(output)
        if cell.cell_type == "code":
            cell.outputs = merged


def git(*args):
    result = subprocess.run(["git", *args], capture_output=True, text=True)
    return result.stdout if result.returncode == 0 else None


# What ran: the commit plus the uncommitted changes to anything but the chapters themselves (a chapter's code is
# stored in it; its outputs are what this run writes). Read once, before any chapter runs and rewrites itself.
commit = (git("rev-parse", "HEAD") or "").strip() or None
status = git("status", "--porcelain", "--untracked-files=no") or ""
uncommitted = sorted(line[3:] for line in status.splitlines() if not line[3:].endswith(".ipynb"))

for name in sys.argv[1:] or sorted(str(p) for p in Path("book").glob("*.ipynb")):
    path = Path(name)
    nb = nbformat.read(path, as_version=4)
    start = time.perf_counter()
    client = nbclient.NotebookClient(nb, kernel_name="python3", timeout=1800,
                                     resources={"metadata": {"path": str(path.parent)}})
    client.execute()
    seconds = time.perf_counter() - start
    coalesce_streams(nb)
    nb.metadata.setdefault("dplr", {})["execution"] = {
        "seconds": round(seconds, 1),
        "finished": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M"),
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "platform": f"{platform.system()} {platform.machine()}",
        "by": "make notebooks (.ci/execute_notebooks.py)",
        "commit": commit,
        "uncommitted": uncommitted,
    }
    nbformat.write(nb, path)
    print(f"{path}: executed in {seconds:.1f} s")
