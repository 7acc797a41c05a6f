"""How fast the shared part solver could be with compiled sparse kernels: a bound, measured at Adult's shape.

Issue 16 asks for a solver 20 times faster than a per-fit ``scipy.optimize.minimize`` loop on the solves of one
repeat of Algorithm 3 (``real_data_solver_benchmark.py`` measures the ratio: about 3 to 4 on Adult). That script also
bounds what the shared solver could reach with its *own* passes and nothing else. This one asks the next question:
what if its passes and Hessians were compiled kernels over Adult's sparse rows (12 non-zeros of 105 per row)?

It builds such kernels with numba (not a dependency of dplr: run it in a venv of its own, below), checks that they
give the numbers of the dense ones, and times, on the first part of one repeat (5,427 records, one core, best of
``--repeats``):

* a *pass* for 1 and for 8 problems -- margins, the loss's value and derivative, gradient -- dense as the solver does
  it (BLAS products, the loss object) and compiled: margins row by row (rows padded to one width, two or four rows at
  a time, the problems' sums in registers), gradients column by column from the part in CSC form, the Huber loss in
  the compiled loop and the logistic loss's ``exp`` and ``log1p`` by numpy between them (numba's scalar ``exp`` and
  ``log1p`` are several times slower than numpy's SIMD ones: the printout measures both);
* a *Hessian*: the solver's float32 ``syrk`` over the part's rows, and a compiled sparse one;
* a Cholesky factor and its inverse (LAPACK), which every preconditioner costs.

Then, for each loss, it runs the shared solver (:func:`dplr.solver.solve_on_parts`) on the repeat's five parts, reads
how many passes, batch steps and Hessians it took (``PartSolution``), and prices that work at the best measured kernel
times with *nothing else* -- no preparation, no directions, no line search, no Python: a lower bound on the time of
this algorithm with compiled kernels. The per-fit scipy loop of ``real_data_solver_benchmark.py`` runs on the same
parts in the same process, the two taking turns. The last line is ``bound: <ratio>``, scipy's time over that lower
bound for both losses together: the most the algorithm could reach with these kernels. The issue's target is 20.

Run (numba 0.68.1 installs beside the book's numpy 2.4.6):

    python3.11 -m venv /tmp/venv-numba
    /tmp/venv-numba/bin/pip install -c requirements/book.lock -e . numba==0.68.1
    OPENBLAS_NUM_THREADS=1 DPLR_DATA_DIR=../shared/datasets /tmp/venv-numba/bin/python benchmarks/compiled_kernel_bound.py
"""
import argparse
import os
import platform
import sys
import time
from pathlib import Path

import numba
import numpy as np
from scipy import sparse
from scipy.linalg import blas, lapack
from threadpoolctl import threadpool_limits

from dplr import datasets
from dplr.losses import get_loss
from dplr.solver import solve_on_parts

sys.path.insert(0, str(Path(__file__).parent))
from real_data_solver_benchmark import TOL, problems, run_scipy  # noqa: E402  (the same parts and scipy loop)

JIT = dict(cache=False, boundscheck=False, error_model="numpy")
WIDTH = 8  # problems per compiled pass (fewer are padded)


@numba.njit(**JIT)
def margins_8(columns, values, WT, Z, NA):
    """Z[i, :] = x_i^T W^T for 8 problems (WT is d x 8) and NA = -|Z|: rows padded to one width (ELL: no branch per
    row), two rows at a time, their 16 sums in registers."""
    n, width = columns.shape
    for i in range(0, n - 1, 2):
        a0 = a1 = a2 = a3 = a4 = a5 = a6 = a7 = 0.0
        b0 = b1 = b2 = b3 = b4 = b5 = b6 = b7 = 0.0
        for s in range(width):
            v, c, u, e = values[i, s], columns[i, s], values[i + 1, s], columns[i + 1, s]
            a0 += v * WT[c, 0]
            a1 += v * WT[c, 1]
            a2 += v * WT[c, 2]
            a3 += v * WT[c, 3]
            a4 += v * WT[c, 4]
            a5 += v * WT[c, 5]
            a6 += v * WT[c, 6]
            a7 += v * WT[c, 7]
            b0 += u * WT[e, 0]
            b1 += u * WT[e, 1]
            b2 += u * WT[e, 2]
            b3 += u * WT[e, 3]
            b4 += u * WT[e, 4]
            b5 += u * WT[e, 5]
            b6 += u * WT[e, 6]
            b7 += u * WT[e, 7]
        Z[i, 0], Z[i, 1], Z[i, 2], Z[i, 3], Z[i, 4], Z[i, 5], Z[i, 6], Z[i, 7] = a0, a1, a2, a3, a4, a5, a6, a7
        Z[i + 1, 0], Z[i + 1, 1], Z[i + 1, 2], Z[i + 1, 3] = b0, b1, b2, b3
        Z[i + 1, 4], Z[i + 1, 5], Z[i + 1, 6], Z[i + 1, 7] = b4, b5, b6, b7
    if n % 2:
        for j in range(8):
            a = 0.0
            for s in range(width):
                a += values[n - 1, s] * WT[columns[n - 1, s], j]
            Z[n - 1, j] = a
    for i in range(n):
        for j in range(8):
            NA[i, j] = -abs(Z[i, j])


@numba.njit(**JIT)
def gradient_8(indptr, rows, values, F, G):
    """G[j, :] = sum_i x_ij F[i, :] for 8 problems, by columns (the part in CSC form): the 8 sums in registers."""
    for c in range(indptr.size - 1):
        a0 = a1 = a2 = a3 = a4 = a5 = a6 = a7 = 0.0
        for p in range(indptr[c], indptr[c + 1]):
            v, i = values[p], rows[p]
            a0 += v * F[i, 0]
            a1 += v * F[i, 1]
            a2 += v * F[i, 2]
            a3 += v * F[i, 3]
            a4 += v * F[i, 4]
            a5 += v * F[i, 5]
            a6 += v * F[i, 6]
            a7 += v * F[i, 7]
        G[c, 0], G[c, 1], G[c, 2], G[c, 3] = a0, a1, a2, a3
        G[c, 4], G[c, 5], G[c, 6], G[c, 7] = a4, a5, a6, a7


@numba.njit(**JIT)
def margins_1(columns, values, w, z, na):
    """z = X w and na = -|z| for one problem: ELL rows, four at a time (four independent sums)."""
    n, width = columns.shape
    for i in range(0, n - 3, 4):
        a = b = c = e = 0.0
        for s in range(width):
            a += values[i, s] * w[columns[i, s]]
            b += values[i + 1, s] * w[columns[i + 1, s]]
            c += values[i + 2, s] * w[columns[i + 2, s]]
            e += values[i + 3, s] * w[columns[i + 3, s]]
        z[i], z[i + 1], z[i + 2], z[i + 3] = a, b, c, e
    for i in range(n - n % 4, n):
        a = 0.0
        for s in range(width):
            a += values[i, s] * w[columns[i, s]]
        z[i] = a
    for i in range(n):
        na[i] = -abs(z[i])


@numba.njit(**JIT)
def gradient_1(indptr, rows, values, f, g):
    """g = X^T f for one problem, by columns, each column's sum in four independent parts."""
    for c in range(indptr.size - 1):
        a0 = a1 = a2 = a3 = 0.0
        p, stop = indptr[c], indptr[c + 1]
        while p + 3 < stop:
            a0 += values[p] * f[rows[p]]
            a1 += values[p + 1] * f[rows[p + 1]]
            a2 += values[p + 2] * f[rows[p + 2]]
            a3 += values[p + 3] * f[rows[p + 3]]
            p += 4
        while p < stop:
            a0 += values[p] * f[rows[p]]
            p += 1
        g[c] = (a0 + a1) + (a2 + a3)


@numba.njit(**JIT)
def logistic_from_exp(Z, T, LT, values):
    """T = exp(-|z|) in, l'(z) = -sigma(-z) out in place; values[j] = sum_i log1p(T) + max(-z, 0)."""
    n, k = Z.shape
    for j in range(k):
        values[j] = 0.0
    for i in range(n):
        for j in range(k):
            z, t = Z[i, j], T[i, j]
            values[j] += LT[i, j] + max(-z, 0.0)
            T[i, j] = -(t / (1.0 + t)) if z >= 0.0 else -(1.0 / (1.0 + t))


@numba.njit(**JIT)
def huber_in_place(Z, h, values):
    """Z -> l'(z) = clip((z - 1 - h)/(2h), -1, 0) in place; values[j] = sum_i h l'^2 + max(1 - h - z, 0)."""
    n, k = Z.shape
    for j in range(k):
        values[j] = 0.0
    for i in range(n):
        for j in range(k):
            z = Z[i, j]
            g = min(max((z - (1.0 + h)) / (2.0 * h), -1.0), 0.0)
            values[j] += h * g * g + max((1.0 - h) - z, 0.0)
            Z[i, j] = g


@numba.njit(**JIT)
def hessian_sparse(indptr, indices, values, weight, H):
    """Upper triangle of sum_i weight_i x_i x_i^T over the part's sparse rows."""
    H[:, :] = 0.0
    for i in range(indptr.size - 1):
        a, b = indptr[i], indptr[i + 1]
        for p in range(a, b):
            wp, cp = weight[i] * values[p], indices[p]
            for q in range(p, b):
                H[cp, indices[q]] += wp * values[q]


@numba.njit(**JIT)
def exp_scalar(z, out):
    for i in range(z.size):
        out[i] = np.exp(z[i])


@numba.njit(**JIT)
def log1p_scalar(z, out):
    for i in range(z.size):
        out[i] = np.log1p(z[i])


def best(f, repeats, inner=20):
    f()
    times = []
    for _ in range(repeats):
        start = time.process_time()
        for _ in range(inner):
            f()
        times.append((time.process_time() - start) / inner)
    return min(times)


class Part:
    """One part's signed rows, dense (as the shared solver holds them) and sparse (CSR and CSC)."""

    def __init__(self, X, y):
        Xy = X * y[:, None]
        self.XyT = np.ascontiguousarray(Xy.T)
        self.Xy32 = np.asfortranarray(Xy.astype(np.float32))
        csr, csc = sparse.csr_matrix(Xy), sparse.csc_matrix(Xy)
        self.csr = (csr.indptr.astype(np.int64), csr.indices.astype(np.int64), csr.data)
        self.csc = (csc.indptr.astype(np.int64), csc.indices.astype(np.int64), csc.data)
        # ELL: every row's non-zeros padded with zeros (column 0) to the widest row's count
        width = int(np.diff(csr.indptr).max())
        position = np.arange(csr.nnz) - np.repeat(csr.indptr[:-1], np.diff(csr.indptr))
        rows = np.repeat(np.arange(Xy.shape[0]), np.diff(csr.indptr))
        columns, values = np.zeros((Xy.shape[0], width), dtype=np.int64), np.zeros((Xy.shape[0], width))
        columns[rows, position], values[rows, position] = csr.indices, csr.data
        self.ell = (columns, values)
        self.n, self.d = Xy.shape

    def dense_pass(self, W, loss):
        values, first = loss.value_and_derivative(W @ self.XyT)
        return values.sum(axis=1), first @ self.XyT.T

    def compiled_pass(self, W, loss):
        k = W.shape[0]
        if k == 1:
            Z, T = np.empty((self.n, 1)), np.empty((self.n, 1))
            margins_1(*self.ell, W[0], Z[:, 0], T[:, 0])
        else:
            WT = np.zeros((self.d, WIDTH))
            WT[:, :k] = W.T
            Z, T = np.empty((self.n, WIDTH)), np.empty((self.n, WIDTH))
            margins_8(*self.ell, WT, Z, T)
        values = np.empty(Z.shape[1])
        if loss.name == "logistic":  # T = -|z| -> exp(-|z|) (numpy's SIMD exp and log1p), then l' in T
            np.exp(T, out=T)
            logistic_from_exp(Z, T, np.log1p(T), values)
            first = T
        else:
            huber_in_place(Z, loss.h, values)
            first = Z
        if k == 1:
            g = np.empty(self.d)
            gradient_1(*self.csc, first[:, 0], g)
            return values[:1], g[None]
        G = np.empty((self.d, WIDTH))
        gradient_8(*self.csc, first, G)
        return values[:k], G[:, :k].T

    def dense_hessian(self, weight):
        return blas.ssyrk(1.0, self.Xy32 * np.sqrt(weight).astype(np.float32)[:, None], trans=1)

    def compiled_hessian(self, weight):
        H = np.empty((self.d, self.d))
        hessian_sparse(*self.csr, weight, H)
        return H


def kernel_times(part, loss, rng, repeats):
    """Best CPU seconds of a dense and a compiled pass (1 and 8 problems), checked to agree."""
    times = {}
    for k in (1, WIDTH):
        W = rng.normal(scale=0.3, size=(k, part.d))
        dense, compiled = part.dense_pass(W, loss), part.compiled_pass(W, loss)
        assert np.allclose(dense[0], compiled[0], rtol=1e-12) and np.allclose(dense[1], compiled[1], atol=1e-12)
        times["dense", k] = best(lambda: part.dense_pass(W, loss), repeats)
        times["compiled", k] = best(lambda: part.compiled_pass(W, loss), repeats)
        print(f"{loss.name:9} a pass for {k} problem{'s' if k > 1 else ''}: dense {1e3 * times['dense', k]:.3f} ms, "
              f"compiled {1e3 * times['compiled', k]:.3f} ms ({times['dense', k] / times['compiled', k]:.1f}x)")
    return times


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--seed", type=int, default=16)
    parser.add_argument("--losses", nargs="+", default=["logistic", "huber"])
    args = parser.parse_args()
    data = datasets.load_adult(download=False)
    X, y = data.X_train, data.y_train
    rng = np.random.default_rng(0)
    totals = {"scipy": 0.0, "shared": 0.0, "bound": 0.0, "fixed": 0.0}
    with threadpool_limits(limits=1, user_api="blas"):
        for loss_name in args.losses:
            loss = get_loss(loss_name, 0.5)
            parts = problems(X, y, loss, args.seed)
            part = Part(parts[0][0], parts[0][1])
            if loss_name == args.losses[0]:
                print(f"machine: {platform.machine()}, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}; "
                      f"numba {numba.__version__}, numpy {np.__version__}; Adult part {part.n} x {part.d}, "
                      f"{part.csr[2].size / part.n:.1f} non-zeros a row; CPU seconds, one core, best of {args.repeats}")
                shared_kernels = other_kernel_times(part, rng, args.repeats)
            times = {**shared_kernels, **kernel_times(part, loss, rng, args.repeats)}
            shared = scipy_seconds = np.inf
            for _ in range(max(2, args.repeats // 2)):  # the two solvers take turns; the best time of each
                start = time.process_time()
                solutions = solve_on_parts(parts, loss, tol=TOL)
                shared = min(shared, time.process_time() - start)
                start = time.process_time()
                run_scipy(parts, loss)
                scipy_seconds = min(scipy_seconds, time.process_time() - start)
            bound, fixed, work = price(solutions, times)
            print(f"{loss_name:9} one repeat (5 parts x 8 problems): the shared solver {shared:.3f} s, scipy's per-fit "
                  f"loop {scipy_seconds:.3f} s (speed-up {scipy_seconds / shared:.1f}); its work: {work}, priced at the "
                  f"best kernels above and nothing else: {bound:.3f} s (Hessians and factorisations {fixed:.3f} s)")
            for key, value in (("scipy", scipy_seconds), ("shared", shared), ("bound", bound), ("fixed", fixed)):
                totals[key] += value
    print(f"{' + '.join(args.losses)}: speed-up today {totals['scipy'] / totals['shared']:.1f}; with passes free as "
          f"well, scipy's time over the Hessians and factorisations alone would be "
          f"{totals['scipy'] / totals['fixed']:.1f}; to reach 20, every kernel would have to be "
          f"{20 * totals['bound'] / totals['scipy']:.1f} times faster than the best above, with nothing else costing "
          f"anything")
    print(f"bound: {totals['scipy'] / totals['bound']:.1f}")


def other_kernel_times(part, rng, repeats):
    """Best CPU seconds of a Hessian (float32 syrk and compiled sparse, checked to agree) and of a Cholesky factor
    with its inverse; and, for the record, the per-element cost of numba's scalar exp and log1p beside numpy's."""
    times = {}
    weight = 0.25 * np.exp(-np.abs(rng.normal(size=part.n)))
    upper = np.triu(part.compiled_hessian(weight))
    assert np.allclose(upper + np.triu(upper, 1).T, part.XyT @ (part.XyT.T * weight[:, None]), atol=1e-10)
    times["dense hessian"] = best(lambda: part.dense_hessian(weight), repeats, inner=5)
    times["compiled hessian"] = best(lambda: part.compiled_hessian(weight), repeats, inner=5)
    H = part.XyT @ (part.XyT.T * weight[:, None]) + 1e-3 * np.eye(part.d)
    times["factor"] = best(lambda: lapack.dtrtri(lapack.dpotrf(H, lower=False, clean=True)[0], lower=False), repeats)
    print(f"a Hessian: float32 syrk {1e3 * times['dense hessian']:.3f} ms, compiled sparse "
          f"{1e3 * times['compiled hessian']:.3f} ms; a Cholesky factor and its inverse {1e3 * times['factor']:.3f} ms")
    z = rng.normal(size=40_000)
    out = np.empty_like(z)
    exp_scalar(z, out), log1p_scalar(np.abs(z), out)
    per = {name: best(f, repeats) / z.size * 1e9 for name, f in (
        ("numba exp", lambda: exp_scalar(z, out)), ("numba log1p", lambda: log1p_scalar(np.abs(z), out)),
        ("numpy exp", lambda: np.exp(z, out=out)), ("numpy log1p", lambda: np.log1p(np.abs(z), out=out)))}
    print("per element: " + ", ".join(f"{name} {ns:.1f} ns" for name, ns in per.items()))
    return times


def price(solutions, times):
    """The algorithm's work on the repeat (``PartSolution`` counts), priced at the best kernels and nothing else:
    each part's unperturbed passes (one problem each); per step of its perturbed problems one batch pass over those
    still iterating (at most 8: a compiled 8-wide pass, or one-problem passes where fewer are cheaper); its Hessians;
    and one factorisation per Hessian and per perturbed problem (H0 + Delta I). Steps are counted from each problem's
    passes (a backtracking trial once), so this is at most the work the solver did. Returns ``(seconds, seconds of
    the Hessians and factorisations, a description of the work)``."""
    pass_1 = min(times["dense", 1], times["compiled", 1])
    pass_8 = min(times["dense", WIDTH], times["compiled", WIDTH])
    hessian = min(times["dense hessian"], times["compiled hessian"])
    passes_w0 = sum(s.n_passes_w0 for s in solutions)
    active = [int(np.sum(s.n_passes >= t)) for s in solutions for t in range(1, int(s.n_passes.max(initial=0)) + 1)]
    hessians = sum(s.n_hessians for s in solutions)
    factors = hessians + sum(s.coef.shape[0] for s in solutions)
    fixed = hessians * hessian + factors * times["factor"]
    bound = passes_w0 * pass_1 + sum(min(pass_8, k * pass_1) for k in active) + fixed
    return bound, fixed, (f"{passes_w0} one-problem passes, {len(active)} batch passes, {hessians} Hessians, "
                          f"{factors} factorisations")


if __name__ == "__main__":
    main()
