"""python -m dplr reproduce (dplr.replication.cli): targets, help, files, and the numbers of the studies."""
import json
import subprocess
import sys

import pandas as pd
import pytest

from dplr.replication import cli as rp
from dplr.replication.paper import protocol as ex
from dplr.replication.paper.summaries import cell_errors
from dplr.replication.thesis import cells as thesis_cells
from dplr.replication.thesis.pipeline import SoundPipeline
from dplr.replication.thesis.published import THESIS_FOLDS


def test_help_lists_every_target_and_group():
    result = subprocess.run([sys.executable, "-m", "dplr", "reproduce", "--help"], capture_output=True, text=True,
                            check=True)
    for name in list(rp.TARGETS) + list(rp.GROUPS):
        assert f"  {name} " in result.stdout
    for option in ("--out", "--restarts", "--seed", "--workers", "--scheduler"):
        assert option in result.stdout
    assert {t.source for t in rp.TARGETS.values()} == {"paper", "thesis", "real"}
    assert set(rp.GROUPS["real"]) == {n for n, t in rp.TARGETS.items() if t.source == "real"} and len(rp.GROUPS["real"]) == 4


def test_targets_resolve_in_a_fixed_order_each_once():
    names = [t.name for t in rp.resolve_targets(["figure2b", "paper", "figure1"])]
    assert names == list(rp.GROUPS["paper"])
    assert [t.name for t in rp.resolve_targets(["all"])] == list(rp.TARGETS)
    with pytest.raises(ValueError, match="unknown target"):
        rp.resolve_targets(["figure3"])
    with pytest.raises(SystemExit):
        rp.main(["reproduce", "figure3"])
    with pytest.raises(SystemExit):
        rp.main(["reproduce", "figure1", "--restarts", "1"])


def test_figure1_files_hold_the_numbers_of_the_experiments(tmp_path, capsys):
    pytest.importorskip("matplotlib")  # the figures: the optional extra dplr[plot]
    rp.main(["reproduce", "figure1", "--restarts", "3", "--workers", "1", "--seed", "11", "--out", str(tmp_path),
             "--quiet"])
    assert capsys.readouterr().err == ""  # --quiet: no progress bars, no messages
    table = pd.read_csv(tmp_path / "figure1.csv")
    record = json.loads((tmp_path / "reproduce.json").read_text())
    assert (tmp_path / "figure1.png").stat().st_size > 10_000
    assert record["targets"] == ["figure1"] and record["files"] == ["figure1.csv", "figure1.png"]
    assert record["seed"] == 11 and record["restarts"] == 3 and set(record["seconds"]) == {"paper", "total"}
    # six published numbers with Algorithm 2 as printed, and the corrected Algorithm 2 on both data sets
    assert len(table) == 8 and (table.form == "corrected").sum() == 2
    # the same cell computed directly from the paper's protocol, with the same seed: the same mean
    cell = ex.Task(ex.DataSpec("unseparable"), 0, "objective", epsilon=ex.PAPER_EPSILON, form="nips2008",
                   n_restarts=3)
    errors, _ = ex.run_tasks(ex.expand([cell]), seed=11)
    row = table[(table.data == "unseparable") & (table.method == "objective") & (table.form == "nips2008")].iloc[0]
    assert row["mean"] == pytest.approx(float(cell_errors(errors, cell).mean()), rel=1e-5)


def test_thesis_study_runs_its_batches_through_the_runner(monkeypatch):
    # the thesis study's batches go through dplr.replication.runner.run_calls, so --scheduler and the
    # progress bars reach them: record every batch it is given during a small run.
    from dplr.replication import runner

    batches = []

    def recording(calls, n_jobs=1, client=None):
        calls = list(calls)
        batches.append(len(calls))
        return runner.run_calls(calls, n_jobs, client)

    monkeypatch.setattr(thesis_cells, "run_calls", recording)
    table = thesis_cells.lambda_search("real", SoundPipeline(), lambdas=(1e-2, 1.0))
    assert batches == [THESIS_FOLDS] and len(table) == 2  # one call per fold
