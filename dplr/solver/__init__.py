r"""Solvers for the regularised, perturbed ERM objective of both algorithms (:mod:`dplr.objective`).

Two, with one job each:

* :func:`solve_regularized_erm` -- the fast path (:mod:`dplr.solver.batched`): many perturbed
  problems on one data set at once, each to gradient norm ``tol``; the algorithms, studies and audits
  use it. Its tricks are documented in :mod:`dplr.solver.batched`, :mod:`dplr.solver.design` and
  :mod:`dplr.solver.taylor`.
* :func:`damped_newton` -- the reference (:mod:`dplr.solver.reference`): a plain damped Newton
  method on any :class:`~dplr.objective.RegularizedERM`, including one data set per problem; the
  sensitivity searches use it, and the tests hold the fast path to it.
* :func:`solve_on_part` and :func:`solve_on_parts` -- (:mod:`dplr.solver.shared`) the unperturbed and many
  perturbed problems, each with its own :math:`\Delta`, on one part of the data around one shared Hessian (or on
  the parts of one run together): private tuning's path.

And one guard: :mod:`dplr.solver.stopping` turns a computed gradient norm into a certified bound on the true one
(float64's rounding accounted for) and gives the tolerance to solve to, for the points output perturbations release;
where a solve is not certified, its fallback (:func:`fixed_step_descent`, a number of gradient steps fixed by public
quantities, :func:`fixed_step_plan`) gives a point within the same distance of the exact minimiser on every data set.
"""
from dplr.solver.batched import SolverResult, solve_regularized_erm
from dplr.solver.reference import NewtonResult, damped_newton
from dplr.solver.shared import PartSolution, solve_on_part, solve_on_parts
from dplr.solver.stopping import (
    FixedStepPlan,
    certified_gradient_norm,
    fixed_step_descent,
    fixed_step_plan,
    gradient_rounding_bound,
    stopping_tolerance,
)

__all__ = ["SolverResult", "solve_regularized_erm", "NewtonResult", "damped_newton", "PartSolution", "solve_on_part",
           "solve_on_parts", "certified_gradient_norm", "gradient_rounding_bound", "stopping_tolerance", "FixedStepPlan", "fixed_step_plan",
           "fixed_step_descent"]
