"""dplr.replication.runner: the same results in this process, on joblib workers and on a Dask cluster."""
import os

import numpy as np
import pytest

from dplr.replication.paper.protocol import Figure1Variant
from dplr.replication.paper.study import run_replication
from dplr.replication.runner import active_client, progress, run_call_groups, run_calls, use_scheduler

SMALL = dict(seed=3, n_restarts=4, n_total=500, n_holdout=300, sizes=(200, 400), epsilons=(0.05, 0.2),
             epsilon_n=300, variants=(Figure1Variant("default", "d"), Figure1Variant("lambda=tuned", "t", lam=None)))


def _draw(seed, size):
    return np.random.default_rng(seed).standard_normal(size)


def _worker_address():
    from distributed import get_worker

    return get_worker().address  # raises ValueError outside a Dask worker


def test_run_calls_keeps_the_order_and_the_results_of_the_serial_run(capsys):
    calls = [(_draw, (seed, 3)) for seed in range(7)]
    serial = run_calls(calls)
    with progress("draws"):
        pooled = run_calls(calls, n_jobs=2)
    for a, b in zip(serial, pooled):
        np.testing.assert_array_equal(a, b)
    assert "draws" in capsys.readouterr().err  # the progress bar went to stderr
    assert run_calls([]) == []


def test_run_call_groups_returns_each_group_by_name_in_order():
    groups = {"a": [(_draw, (seed, 2)) for seed in range(3)], ("b", 1): [], "c": [(_draw, (9, 1))]}
    out = run_call_groups(groups, n_jobs=2)
    assert list(out) == ["a", ("b", 1), "c"] and [len(v) for v in out.values()] == [3, 0, 1]
    for seed, result in enumerate(out["a"]):
        np.testing.assert_array_equal(result, _draw(seed, 2))
    np.testing.assert_array_equal(out["c"][0], _draw(9, 1))


def _same_replication(a, b):
    assert a.errors.keys() == b.errors.keys()
    for task, errors in a.errors.items():
        np.testing.assert_array_equal(errors, b.errors[task])
    for kind in a.tuning:
        np.testing.assert_array_equal(a.tuning[kind].fold_errors, b.tuning[kind].fold_errors)
    assert a.fitted_epsilon == b.fitted_epsilon
    assert a.figure1_table().equals(b.figure1_table())


def test_a_dask_cluster_on_loopback_gives_the_serial_results():
    distributed = pytest.importorskip("distributed")
    serial = run_replication(n_jobs=1, **SMALL)
    # A scheduler and two single-threaded workers on 127.0.0.1 over TCP, the way --scheduler connects.
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, protocol="tcp",
                                  host="127.0.0.1", dashboard_address=None) as cluster:
        address = cluster.scheduler_address
        assert address.startswith("tcp://127.0.0.1:")
        with use_scheduler(address) as client:
            assert active_client() is client
            where = run_calls([(_worker_address, ())] * 4)
            on_dask = run_replication(n_jobs=2, **SMALL)
            workers = client.run(lambda: True)  # both workers answered and are still up
        assert active_client() is None
    assert len(workers) == 2 and set(where) <= set(workers)  # the calls ran on the cluster's workers
    _same_replication(serial, on_dask)


def test_reproduce_with_a_scheduler_writes_the_numbers_of_a_local_run(tmp_path):
    distributed = pytest.importorskip("distributed")
    import pandas as pd

    from dplr.replication.cli import main

    arguments = ["reproduce", "figure1", "--restarts", "3", "--seed", "5", "--quiet"]
    main(arguments + ["--workers", "1", "--out", str(tmp_path / "local")])
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, protocol="tcp",
                                  host="127.0.0.1", dashboard_address=None) as cluster:
        main(arguments + ["--scheduler", cluster.scheduler_address, "--out", str(tmp_path / "dask")])
    local, on_dask = (pd.read_csv(tmp_path / where / "figure1.csv") for where in ("local", "dask"))
    pd.testing.assert_frame_equal(local, on_dask)


@pytest.mark.skipif(not (os.environ.get("DPLR_DATA_DIR") and
                         os.path.isfile(os.path.join(os.environ["DPLR_DATA_DIR"], "adult", "adult.data.gz"))),
                    reason="DPLR_DATA_DIR does not hold the UCI files")
def test_real_data_study_on_a_local_cluster_matches_a_local_run():
    # One real-data target (Adult, logistic regression) on a 1,200-record subsample: the same rows on Dask.
    distributed = pytest.importorskip("distributed")
    import pandas as pd

    from dplr.replication.real.study import run_real_study

    kwargs = dict(datasets=("adult",), losses=("logistic",), n_repeats=2, subsample=1200, sizes=(0.5, 1.0),
                  epsilons=(0.1, 1.0), curve_epsilons=(0.1,), seed=4)
    local = run_real_study(n_jobs=1, **kwargs)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, protocol="tcp",
                                  host="127.0.0.1", dashboard_address=None) as cluster:
        with use_scheduler(cluster.scheduler_address):
            on_dask = run_real_study(**kwargs)
    pd.testing.assert_frame_equal(local.rows, on_dask.rows)
    pd.testing.assert_frame_equal(local.comparisons, on_dask.comparisons)


def _weighted_sum(data, weight):
    return float(data.sum() * weight)


def test_a_cluster_receives_shared_arrays_once_not_with_every_task():
    # 16 MB of data read by six tasks: inside each task it would make six graphs of 16 MB, each above distributed's
    # 10 MB warning threshold (an error here); scattered once, no graph carries it.
    distributed = pytest.importorskip("distributed")
    import warnings

    data = np.arange(2_000_000, dtype=float)
    calls = [(_weighted_sum, (data, w)) for w in range(6)]
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, protocol="tcp",
                                  host="127.0.0.1", dashboard_address=None) as cluster:
        with use_scheduler(cluster.scheduler_address) as client:
            sent = []
            scatter = client.scatter
            client.scatter = lambda *a, **k: sent.append(a[0]) or scatter(*a, **k)
            with warnings.catch_warnings():
                warnings.filterwarnings("error", message=".*[Ll]arge graph.*")
                on_dask = run_calls(calls)
            small = run_calls([(_weighted_sum, (np.ones(3), 2.0))])  # small arrays travel with their task
    assert on_dask == run_calls(calls) and small == [6.0]
    assert len(sent) == 1 and sent[0] is data
