"""Independent tasks on this machine (joblib) or on a Dask cluster (distributed), with identical results.

dplr's studies are lists of independent calls ``(function, args)``: every task draws its
randomness from its own stream, addressed by the task's content (:mod:`dplr.replication.seeding`),
never from the worker, the order of execution or a global state. So where a task runs cannot
change what it returns, and :func:`run_calls` may run the list anywhere:

* ``n_jobs=1``: in this process, in order, on one thread (BLAS and the solver:
  :func:`dplr.threads.single_threaded`, entered once for the whole list) -- one worker, like each of the others;
* ``n_jobs > 1``: on joblib's loky worker processes on this machine;
* inside :func:`use_scheduler` (or with ``client=``): on a Dask cluster through
  ``distributed.Client(address)``, e.g. a scheduler started with ``dask scheduler`` and workers with
  ``dask worker tcp://host:8786``. ``n_jobs`` is then ignored; the cluster decides. The arrays the tasks share
  (the training data) go to every worker once, before the tasks, not inside each task.

Results come back in the order of the calls. Inside :func:`progress` every :func:`run_calls` shows
a tqdm progress bar (on stderr) that advances as calls finish. A study that runs several batches (the
thesis' second batch depends on the first's results, so its size is not known in advance) shows one bar
per batch, numbered (``thesis: tasks, batch 2``): a bar's total is fixed when it appears and never jumps.

Example::

    from dplr.replication.runner import use_scheduler
    from dplr.replication.paper.study import run_replication

    with use_scheduler("tcp://10.0.0.5:8786"):
        replication = run_replication()   # the same numbers as run_replication(n_jobs=1)

Workers need dplr installed (the same version). Dask's workers and joblib's set ``OMP_NUM_THREADS=1``,
which the solver reads as "use one thread per task" (:func:`dplr.threads.default_threads`).
"""
from __future__ import annotations

import contextlib
import contextvars
import sys

import numpy as np
from joblib import Parallel, delayed

from dplr.threads import single_threaded

__all__ = ["run_calls", "run_call_groups", "use_scheduler", "active_client", "progress"]

_CLIENT = contextvars.ContextVar("dplr_parallel_client", default=None)
_PROGRESS = contextvars.ContextVar("dplr_parallel_progress", default=None)


@contextlib.contextmanager
def use_scheduler(address, **client_kwargs):
    """Run every :func:`run_calls` in this block on the Dask cluster at ``address`` (``tcp://host:port``).

    Connects a ``distributed.Client`` (closed at the end of the block); ``client_kwargs`` go to it.
    An existing ``distributed.Client`` may be passed instead of an address (it is not closed).
    """
    from distributed import Client  # imported here: Dask is heavy and only needed for a cluster

    own = not isinstance(address, Client)
    client = Client(address, set_as_default=False, **client_kwargs) if own else address
    token = _CLIENT.set(client)
    try:
        yield client
    finally:
        _CLIENT.reset(token)
        if own:
            client.close()


def active_client():
    """The Dask client :func:`run_calls` uses now, or ``None`` (local execution)."""
    return _CLIENT.get()


@contextlib.contextmanager
def progress(label="tasks", enabled=True, file=None):
    """Show a tqdm bar (``label``: its description) for every :func:`run_calls` in this block."""
    token = _PROGRESS.set({"label": label, "file": file or sys.stderr, "batches": 0} if enabled else None)
    try:
        yield
    finally:
        _PROGRESS.reset(token)


def _bar(total):
    settings = _PROGRESS.get()
    if settings is None or total == 0:
        return None
    from tqdm.auto import tqdm  # imported here: only when a progress bar is shown

    settings["batches"] += 1
    return tqdm(total=total, desc=f"{settings['label']}, batch {settings['batches']}", file=settings["file"], unit="task", dynamic_ncols=True,
                leave=False)


def run_calls(calls, n_jobs=1, client=None):
    """Run ``(function, args)`` pairs and return their results in order.

    Locally: in this process (``n_jobs=1``) or on ``n_jobs`` loky processes. On Dask: when
    ``client`` is given or inside :func:`use_scheduler`. The functions and their arguments must be
    picklable (module-level functions, plain data) for any but the serial path.
    """
    calls = list(calls)
    client = client if client is not None else _CLIENT.get()
    bar = _bar(len(calls))
    try:
        if client is not None:
            return _run_dask(client, calls, bar)
        if n_jobs == 1 or len(calls) <= 1:
            results = []
            with single_threaded():  # one worker, as a loky or Dask worker is: no oversubscribed cores
                for fn, args in calls:
                    results.append(fn(*args))
                    if bar is not None:
                        bar.update(1)
            return results
        results = [None] * len(calls)
        for i, result in Parallel(n_jobs=n_jobs, backend="loky", return_as="generator_unordered")(
                delayed(_indexed)(i, fn, args) for i, (fn, args) in enumerate(calls)):
            results[i] = result
            if bar is not None:
                bar.update(1)
        return results
    finally:
        if bar is not None:
            bar.close()


def _indexed(i, fn, args):
    return i, fn(*args)


#: Arrays at least this large (bytes) go to a Dask cluster once, before the tasks, instead of inside every task.
SCATTER_BYTES = 1 << 16


def _run_dask(client, calls, bar):
    """Submit the calls; every large array among their arguments is sent to the workers once.

    A study's tasks share their data (every experiment on Adult reads the same 27 MB of training rows): submitted
    inside each task, the arrays would travel with every task (distributed warns of graphs above 10 MB); scattered
    (``client.scatter(..., broadcast=True)``), each goes to every worker once and the tasks carry a reference.
    The same array object, as passed in several calls, is scattered once (identity, not content: no hashing of data).
    """
    from distributed import as_completed  # imported here: Dask is heavy and only needed for a cluster

    scattered = {}

    def remote(value):
        if isinstance(value, np.ndarray) and value.nbytes >= SCATTER_BYTES:
            if id(value) not in scattered:  # the calls keep the array alive, so its id is not reused meanwhile
                scattered[id(value)] = client.scatter(value, broadcast=True, hash=False)
            return scattered[id(value)]
        return value

    futures = [client.submit(fn, *(remote(a) for a in args), pure=False) for fn, args in calls]
    if bar is not None:
        for _ in as_completed(futures):
            bar.update(1)
    return client.gather(futures)


def run_call_groups(groups, n_jobs=1):
    """Run named groups of ``(function, args)`` calls in one batch; returns ``{name: [results, in order]}``.

    One batch keeps every worker busy across groups (put the largest calls first); the names replace
    the hand-kept offsets a flat list of results would need.
    """
    groups = {name: list(calls) for name, calls in groups.items()}
    outputs = iter(run_calls([call for calls in groups.values() for call in calls], n_jobs))
    return {name: [next(outputs) for _ in calls] for name, calls in groups.items()}
