"""dplr.analysis.neighbours: every pair the audits and searches build lies in the unit ball exactly."""
import numpy as np
import pytest

from dplr.analysis.neighbours import NeighbouringPair
from dplr.analysis.objective_perturbation_search import evaluate_worst_case
from dplr.ball import rows_outside_ball


def test_a_row_outside_the_ball_by_rounding_is_kept_projected():
    row = np.array([0.6, 0.8])  # norm 1 as numpy computes it, above 1 for the doubles' exact values
    assert np.linalg.norm(row) <= 1.0 and rows_outside_ball(row[None, :])[0]
    pair = NeighbouringPair.from_records(np.zeros((3, 2)), np.ones(3), row, 1.0, [0.0, 1.0], -1.0)
    assert not rows_outside_ball(pair.X).any() and not rows_outside_ball(pair.X_prime).any()
    assert 0 < np.max(np.abs(pair.X[-1] - row)) < 1e-15  # moved, by rounding only
    np.testing.assert_array_equal(pair.X[:-1], pair.X_prime[:-1])  # the shared rows still agree


def test_a_row_outside_beyond_rounding_is_refused():
    with pytest.raises(ValueError, match="norm"):
        NeighbouringPair.from_records(np.zeros((3, 2)), np.ones(3), [0.6, 0.81], 1.0, [0.0, 1.0], -1.0)


def test_the_search_reports_the_pair_it_evaluated_and_that_pair_is_in_the_ball():
    # records and anchors of norm 1 as computed but outside by rounding, as the search's radial steps produce them
    record, record_prime = np.array([0.6, 0.8]), np.array([-0.8, 0.6])
    anchors = np.array([[0.6, -0.8], [0.28, 0.96]])
    assert rows_outside_ball(np.vstack([record, record_prime, anchors])).any()
    case = evaluate_worst_case(50, 0.01, 1.0, "corrected", "logistic", np.array([1.0, 2.0]), anchors, [3, 4],
                               record, record_prime)
    pair = case.pair()
    assert not rows_outside_ball(pair.X).any() and not rows_outside_ball(pair.X_prime).any()
    np.testing.assert_array_equal(pair.X[-1], case.record)  # what the report says is what was evaluated
    np.testing.assert_array_equal(pair.X_prime[-1], case.record_prime)
    assert not rows_outside_ball(case.anchors).any()
