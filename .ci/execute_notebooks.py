"""Execute chapters in place, top to bottom in a fresh kernel, storing their outputs.

Usage: .venv/bin/python .ci/execute_notebooks.py book/some_chapter.ipynb [...]   (or `make notebooks`)

The stored outputs are what `pytest --nbval` compares against and what the site renders.

Each chapter's wall-clock run time (kernel start to last cell, in this process), the time it finished
(UTC) and the machine it ran on are stored in the notebook's metadata under `dplr.execution`; the site's
"Execution statistics" page (book/exec_stats.md, rendered by book/_ext/dplr_site.py) lists them.
"""
import os
import platform
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import nbclient
import nbformat

for name in sys.argv[1:] or sorted(str(p) for p in Path("book").glob("*.ipynb")):
    path = Path(name)
    nb = nbformat.read(path, as_version=4)
    start = time.perf_counter()
    client = nbclient.NotebookClient(nb, kernel_name="python3", timeout=1800,
                                     resources={"metadata": {"path": str(path.parent)}})
    client.execute()
    seconds = time.perf_counter() - start
    nb.metadata.setdefault("dplr", {})["execution"] = {
        "seconds": round(seconds, 1),
        "finished": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M"),
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "platform": f"{platform.system()} {platform.machine()}",
        "by": "make notebooks (.ci/execute_notebooks.py)",
    }
    nbformat.write(nb, path)
    print(f"{path}: executed in {seconds:.1f} s")
