"""Threads inside one process: the one place that decides how many, and keeps BLAS out of their way.

Three parts of ``dplr`` run work on threads or on tiny matrices: the batched solver (chunks of
problems, :mod:`dplr.solver`), private tuning (the parts of Algorithm 3, :mod:`dplr.tuning`) and the
exact analyses (:mod:`dplr.analysis`). All three want the same two things, provided here once:

* :func:`default_threads`: every core, or ``OMP_NUM_THREADS`` when that is set (joblib and Dask set
  it to 1 in their worker processes, which already run one task per core);
* :func:`one_blas_thread` (a context manager and decorator): BLAS limited to one thread. Their
  matrix products are small, where BLAS's own threads cost far more in start-up and spinning than
  they save (and stall badly on a busy machine);
* :func:`thread_map`: a function over items on up to ``n_threads`` threads, results in order;
* :func:`single_threaded`: one worker's worth of work -- BLAS and the solver on one thread each -- for a
  serial run of many tasks (``python -m dplr reproduce --workers 1``), so that it does not oversubscribe
  the cores it shares and is at least as fast per core as several worker processes.

BLAS's thread count is a process-wide setting, so the limit is shared: the first caller (on any thread)
sets it to one, later callers only count themselves in, and the last one out restores what was there
before (a lock guards the count). Concurrent fits from several user threads therefore never undo each
other's limit, and entering it again inside a limited block costs a counter increment. While any block
holds it, every BLAS call in the process runs on one thread. One caveat is OpenBLAS's, not ours: it ignores
a request to *raise* its thread count made from a thread other than the main one (seen with OpenBLAS 0.3.31), so
when the last block to leave runs on another thread, BLAS may stay on one thread until a block next ends on the
main thread, which restores the limits from before the first block (a serial run on the main thread, or
``with one_blas_thread():`` around a pool of fits, avoids the wait).

Every result computed on these threads depends only on its own inputs, never on the number of
threads or the order in which they finish.
"""
from __future__ import annotations

import contextlib
import contextvars
import functools
import os
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

from threadpoolctl import ThreadpoolController

__all__ = ["default_threads", "one_blas_thread", "single_threaded", "thread_map"]

_CONTROLLER = None  # inspecting the loaded libraries (~3 ms) is the expensive part: redone only after imports
_MODULES_SEEN = -1  # len(sys.modules) when _CONTROLLER was built: an import may have loaded another BLAS
_LOCK = threading.Lock()
_HOLDERS = 0  # blocks inside one_blas_thread, on any thread
_LIMITER = None  # threadpoolctl's limiter, holding the limits from before the first block
_APPLIED = None  # the limiter of the current limit (kept alive while it holds)
_THREADS = contextvars.ContextVar("dplr_threads", default=None)  # set by single_threaded


def default_threads() -> int:
    """Every core, or ``OMP_NUM_THREADS`` when it is set to a smaller positive number; 1 inside :func:`single_threaded`."""
    if _THREADS.get() is not None:
        return _THREADS.get()
    cores = os.cpu_count() or 1
    try:
        return max(1, min(cores, int(os.environ.get("OMP_NUM_THREADS", cores))))
    except ValueError:
        return cores


def _controller():
    """The libraries loaded now (a library loaded after an earlier inspection would escape the limit)."""
    global _CONTROLLER, _MODULES_SEEN
    if _CONTROLLER is None or len(sys.modules) != _MODULES_SEEN:
        _CONTROLLER, _MODULES_SEEN = ThreadpoolController(), len(sys.modules)
    return _CONTROLLER


class _OneBlasThread(contextlib.ContextDecorator):
    """The shared, counted limit (module docstring)."""

    def __enter__(self):
        global _HOLDERS, _LIMITER, _APPLIED
        with _LOCK:
            if _HOLDERS == 0:
                applied = _controller().limit(limits=1, user_api="blas")
                # the original limits are the ones before the first block whose restore has not yet taken effect
                _LIMITER = _LIMITER or applied
                _APPLIED = applied
            _HOLDERS += 1
        return self

    def __exit__(self, *exc):
        global _HOLDERS, _LIMITER, _APPLIED
        with _LOCK:
            _HOLDERS -= 1
            if _HOLDERS == 0:
                _LIMITER.restore_original_limits()
                _APPLIED = None
                if threading.current_thread() is threading.main_thread():
                    _LIMITER = None
                # else: OpenBLAS may have ignored the raise (module docstring); the main thread restores later
        return False


def one_blas_thread(func=None):
    """BLAS on one thread: ``with one_blas_thread(): ...`` or ``@one_blas_thread`` on a function."""
    if func is None:
        return _OneBlasThread()

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with _OneBlasThread():
            return func(*args, **kwargs)

    return wrapper


@contextlib.contextmanager
def single_threaded():
    """BLAS on one thread and :func:`default_threads` = 1 (in this context) for the whole block: one worker."""
    token = _THREADS.set(1)
    try:
        with _OneBlasThread():
            yield
    finally:
        _THREADS.reset(token)


def thread_map(function, items, n_threads):
    """``[function(item) for item in items]``, on up to ``n_threads`` threads (NumPy releases the GIL)."""
    items = list(items)
    if n_threads > 1 and len(items) > 1:
        with ThreadPoolExecutor(min(n_threads, len(items))) as pool:
            return list(pool.map(function, items))
    return [function(item) for item in items]
