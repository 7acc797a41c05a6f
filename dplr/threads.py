"""Threads inside one process: the one place that decides how many, and keeps BLAS out of their way.

Three parts of ``dplr`` run work on threads or on tiny matrices: the batched solver (chunks of
problems, :mod:`dplr.solver`), private tuning (the parts of Algorithm 3, :mod:`dplr.tuning`) and the
exact analyses (:mod:`dplr.analysis`). All three want the same two things, provided here once:

* :func:`default_threads`: every core, or ``OMP_NUM_THREADS`` when that is set (joblib and Dask set
  it to 1 in their worker processes, which already run one task per core);
* :func:`one_blas_thread` (a context manager and decorator): BLAS limited to one thread. Their
  matrix products are small, where BLAS's own threads cost far more in start-up and spinning than
  they save (and stall badly on a busy machine);
* :func:`thread_map`: a function over items on up to ``n_threads`` threads, results in order.

Every result computed on these threads depends only on its own inputs, never on the number of
threads or the order in which they finish.
"""
from __future__ import annotations

import contextlib
import functools
import os
from concurrent.futures import ThreadPoolExecutor

from threadpoolctl import ThreadpoolController

__all__ = ["default_threads", "one_blas_thread", "thread_map"]

_CONTROLLER = ThreadpoolController()  # inspecting the loaded libraries once is the expensive part


def default_threads() -> int:
    """Every core, or ``OMP_NUM_THREADS`` when it is set to a smaller positive number."""
    cores = os.cpu_count() or 1
    try:
        return max(1, min(cores, int(os.environ.get("OMP_NUM_THREADS", cores))))
    except ValueError:
        return cores


class _OneBlasThread(contextlib.ContextDecorator):
    def __enter__(self):
        self._limit = _CONTROLLER.limit(limits=1, user_api="blas")
        self._limit.__enter__()
        return self

    def __exit__(self, *exc):
        return self._limit.__exit__(*exc)


def one_blas_thread(func=None):
    """BLAS on one thread: ``with one_blas_thread(): ...`` or ``@one_blas_thread`` on a function."""
    if func is None:
        return _OneBlasThread()

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with _OneBlasThread():
            return func(*args, **kwargs)

    return wrapper


def thread_map(function, items, n_threads):
    """``[function(item) for item in items]``, on up to ``n_threads`` threads (NumPy releases the GIL)."""
    items = list(items)
    if n_threads > 1 and len(items) > 1:
        with ThreadPoolExecutor(min(n_threads, len(items))) as pool:
            return list(pool.map(function, items))
    return [function(item) for item in items]
