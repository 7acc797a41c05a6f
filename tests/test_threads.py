"""dplr.threads: the BLAS limit is shared and counted, so concurrent users never undo each other's limit."""
import threading

import numpy as np
from threadpoolctl import threadpool_info

from dplr.threads import default_threads, one_blas_thread, single_threaded


def _blas_threads():
    return [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]


def test_a_thread_leaving_its_limit_does_not_lift_another_threads_limit():
    before = _blas_threads()
    assert before, "no BLAS library loaded"
    a_inside, b_inside, a_left, b_checked = (threading.Event() for _ in range(4))
    seen = {}

    def first():
        with one_blas_thread():
            a_inside.set()
            b_inside.wait(10)
        a_left.set()

    def second():
        a_inside.wait(10)
        with one_blas_thread():
            b_inside.set()
            a_left.wait(10)
            seen["after the other left"] = _blas_threads()
            np.ones((50, 50)) @ np.ones((50, 50))
        b_checked.set()

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(20)
    assert b_checked.is_set()
    assert set(seen["after the other left"]) == {1}
    with one_blas_thread():  # the count is back to zero: this block sets the limit and restores it
        assert set(_blas_threads()) == {1}
    assert _blas_threads() == before


def test_single_threaded_is_one_worker_and_nests():
    before = _blas_threads()
    with single_threaded():
        assert default_threads() == 1 and set(_blas_threads()) == {1}
        with one_blas_thread():
            pass
        assert set(_blas_threads()) == {1}
    assert _blas_threads() == before
