"""Execute chapters in place, top to bottom in a fresh kernel, storing their outputs.

Usage: .venv/bin/python .ci/execute_notebooks.py book/some_chapter.ipynb [...]   (or `make notebooks`)

The stored outputs are what `pytest --nbval` compares against and what the site renders.
"""
import sys
import time
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
    nbformat.write(nb, path)
    print(f"{path}: executed in {time.perf_counter() - start:.1f} s")
