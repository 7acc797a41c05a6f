"""python -m dplr reproduce (dplr.replication.cli): targets, help, files, and the numbers of the studies."""
import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from dplr.replication import cli as rp
from dplr.replication.paper import protocol as ex
from dplr.replication.paper.summaries import cell_errors
from dplr.replication.thesis import cells as thesis_cells
from dplr.replication.thesis.pipeline import SoundPipeline
from dplr.replication.thesis.published import THESIS_FOLDS
from dplr.replication.thesis.study import target_needs


def test_help_lists_every_target_and_group():
    result = subprocess.run([sys.executable, "-m", "dplr", "reproduce", "--help"], capture_output=True, text=True,
                            check=True)
    for name in list(rp.TARGETS) + list(rp.GROUPS):
        assert f"  {name} " in result.stdout
    for option in ("--out", "--restarts", "--seed", "--workers", "--scheduler", "--real-record"):
        assert option in result.stdout
    assert {t.source for t in rp.TARGETS.values()} == {"paper", "thesis", "real", "modern", "selection",
                                                       "intercept", "baseline"}
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
    assert record["seed"] == {"paper": 11} and record["restarts"] == 3 and set(record["seconds"]) == {"paper", "total"}
    assert record["command"][:5] == ["python", "-m", "dplr", "reproduce", "figure1"] and "--seed" in record["command"]
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


# failures a user can act on (issue 19, item 4): one line saying what to fix

@pytest.mark.parametrize("make_out, message", [
    (lambda tmp: tmp / "a-file", r"is a file, not a folder"),
    (lambda tmp: tmp / "a-file" / "inside", r"cannot be written to .*choose a folder you can write to"),
])
def test_an_unusable_out_folder_is_refused_before_any_work(tmp_path, make_out, message):
    (tmp_path / "a-file").write_text("")
    with pytest.raises(SystemExit, match=rf"^--out .*{message}"):
        rp.main(["reproduce", "figure1", "--out", str(make_out(tmp_path)), "--quiet"])


def test_a_negative_seed_is_refused_before_any_work(tmp_path):
    with pytest.raises(SystemExit, match=r"^--seed must be a non-negative integer, got -3"):
        rp.main(["reproduce", "figure1", "--seed", "-3", "--out", str(tmp_path), "--quiet"])


def test_an_unreachable_scheduler_gets_one_line_and_the_timeout_option(tmp_path):
    pytest.importorskip("distributed")
    pytest.importorskip("matplotlib")
    with pytest.raises(SystemExit, match=r"could not reach the Dask scheduler at tcp://127.0.0.1:9 within 0.5 s.*"
                                         r"--connect-timeout"):
        rp.main(["reproduce", "figure1", "--scheduler", "tcp://127.0.0.1:9", "--connect-timeout", "0.5",
                 "--out", str(tmp_path), "--quiet"])


def test_the_record_holds_the_seeds_the_studies_ran_with_when_none_is_given():
    assert rp.seed_used("paper") == ex.DEFAULT_SEED and rp.seed_used("paper", 5) == 5
    from dplr.replication.thesis.published import THESIS_SEED

    assert rp.seed_used("thesis") == THESIS_SEED and rp.seed_used("thesis", 0) == 0


def test_one_thesis_target_runs_only_what_it_needs(monkeypatch):
    # asking for one thesis figure runs the diagnosis (it selects the pipeline) and that figure's cells only
    asked = []
    monkeypatch.setattr(rp, "run_thesis_study", lambda **kwargs: asked.append(kwargs["needs"]))
    figure4 = [rp.TARGETS["thesis-figure4"]]
    rp.run_thesis(seed=1, n_restarts=2, show_progress=False, targets=figure4)
    rp.run_thesis(seed=1, n_restarts=2, show_progress=False, targets=[rp.TARGETS[n] for n in rp.GROUPS["thesis"]])
    rp.run_thesis(seed=1, n_restarts=2, show_progress=False,
                  targets=[rp.TARGETS["thesis-table2"], rp.TARGETS["thesis-figure9"]])
    assert asked == [{("learning", "separable"), ("full", "separable")}, None,
                     {("full", "separable"), ("full", "inseparable"), ("full", "real")}]
    assert target_needs("figure8") == {("full", "inseparable")}
    with pytest.raises(ValueError, match="no thesis item"):
        target_needs("figure3")


def test_the_real_data_studies_report_their_own_seed():
    from dplr.replication import cli, real_data
    assert cli.seed_used("real") == cli.seed_used("modern") == cli.seed_used("baseline") == real_data.DEFAULT_SEED
    assert set(cli.GROUPS["baseline"]) == {"baseline-adult", "baseline-kdd"}
    assert set(cli.GROUPS["modern"]) == {"modern-adult", "modern-kdd"} and set(cli.GROUPS["modern"]) <= set(cli.GROUPS["all"])


def test_the_selection_target_writes_its_record_table_and_figure(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")  # the figure: the optional extra dplr[plot]
    from dplr.replication.real import selection
    rng = np.random.default_rng(0)
    rows = [{"data": key, "n": 100, "contender": c, "method": m, "epsilon": e, "repeat": r, "lam": 1e-3,
             "clip_norm": np.nan, "lot": np.nan, "error": rng.integers(0, 50) / 200, "n_fits": 3, "clipped": np.nan}
            for key, arms in selection.STUDY_ARMS.items() for c, m in arms for e in (0.1, 1.0) for r in range(3)]

    def fake(n_repeats, data, seed, arms):
        frame = pd.DataFrame([row for row in rows if row["data"] == data])
        return frame.loc[:, list(selection.FORMAT.columns)], {selection.wall_seconds_key(data, "fake", "arm"): 0.0}

    monkeypatch.setattr(selection, "run_selection_study", fake)
    monkeypatch.setattr(rp.real_data, "study_data",
                        lambda key, seed: (None, None, None, np.r_[np.ones(60), -np.ones(140)]))
    record = rp.reproduce(["selection"], out=tmp_path, n_restarts=3, quiet=True)
    assert {"selection-study.csv.gz", "selection.csv", "selection.png"} <= set(record["files"])
    stored, settings = selection.read_selection_record(tmp_path / "selection-study.csv.gz")
    assert len(stored) == len(rows) and settings["n_repeats"] == 3
    assert settings["n_test"] == {"adult": 200, "kdd": 200} and set(settings["wall_seconds"]) == {"fake/arm",
                                                                                                 "kdd/fake/arm"}
    table = pd.read_csv(tmp_path / "selection.csv")
    assert set(zip(table.data, table.contender, table.method)) == {(key, c, m) for key, arms in
                                                                   selection.STUDY_ARMS.items() for c, m in arms}
