"""dplr.threads: the BLAS limit is shared and counted, so concurrent users never undo each other's limit."""
import threading

import numpy as np
from threadpoolctl import threadpool_info

from dplr.threads import default_threads, one_blas_thread, single_threaded


def _blas_threads():
    return [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]


def test_a_thread_leaving_its_limit_does_not_lift_another_threads_limit():
    # the main thread holds the limit; a user thread enters and leaves it while the main thread still
    # computes: before the count, the user thread's exit restored the original limits under the main thread
    before = _blas_threads()
    assert before, "no BLAS library loaded"
    seen = {}

    def user_thread():
        with one_blas_thread():
            seen["inside"] = _blas_threads()

    with one_blas_thread():
        worker = threading.Thread(target=user_thread)
        worker.start()
        worker.join(20)
        seen["after the other left"] = _blas_threads()
        np.ones((50, 50)) @ np.ones((50, 50))
    assert set(seen["inside"]) == {1} and set(seen["after the other left"]) == {1}
    assert _blas_threads() == before  # the last one out (here the main thread) restored the original limits


def test_the_first_holder_leaving_first_does_not_lift_the_limit_of_the_one_still_inside():
    # the main thread enters, a user thread enters, the main thread leaves first: before the count, the main
    # thread's exit restored the original limits under the user thread
    before = _blas_threads()
    inside, main_left = threading.Event(), threading.Event()
    seen = {}

    def user_thread():
        with one_blas_thread():
            inside.set()
            main_left.wait(20)
            seen["after the main thread left"] = _blas_threads()

    with one_blas_thread():
        worker = threading.Thread(target=user_thread)
        worker.start()
        assert inside.wait(20)
    main_left.set()
    worker.join(20)
    assert set(seen["after the main thread left"]) == {1}
    with one_blas_thread():  # a block ending on the main thread restores the limits from before the first block
        pass
    assert _blas_threads() == before


def test_single_threaded_is_one_worker_and_nests():
    before = _blas_threads()
    with single_threaded():
        assert default_threads() == 1 and set(_blas_threads()) == {1}
        with one_blas_thread():
            pass
        assert set(_blas_threads()) == {1}
    assert _blas_threads() == before
