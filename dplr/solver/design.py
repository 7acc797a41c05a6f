r"""The batched solver's passes over the data: the signed data in the layouts its products want.

Internal to :mod:`dplr.solver`. One *pass* evaluates, for every problem of a batch, the gradient
:math:`(\lambda+\Delta)w_j + b_j/n + \frac1n\sum_i \ell'(z_{ij}) u_i` and, where asked, the Hessian
:math:`(\lambda+\Delta)I + \frac1n\sum_i \ell''(z_{ij}) u_i u_i^\top` at the margins :math:`z = W U^\top`
(:math:`u_i = y_i x_i`). The tricks that make a pass cheap live here, each once:

* **Blocks of points.** A pass runs through blocks of points small enough that a block's
  (problems x points) arrays of margins and derivatives stay in the processor's cache
  (:meth:`Design.block`).
* **One exponential per margin.** The loss computes :math:`\ell'` in place of the margins and
  :math:`\ell''` from :math:`\ell'` (:meth:`dplr.losses.LogisticLoss.derivatives`,
  :meth:`~dplr.losses.LogisticLoss.second_derivative_from`).
* **Symmetric products.** Hessians are one product of the curvatures with a table of the
  :math:`d(d+1)/2` distinct products :math:`u_{ia}u_{ib}` (:meth:`Design.products`), kept for the
  whole solve when it is small enough and built block by block otherwise; a single problem forms its
  Hessian directly, :math:`U^\top \operatorname{diag}(\ell'') U`, block by block.
* **Mixed precision.** Hessian products are accumulated in float32 within a block (``Design.dtype``)
  and in float64 across blocks, when the regulariser is large enough for their rounding to be a
  small fraction of the smallest eigenvalue (:mod:`dplr.solver.batched` decides); gradients always in
  float64.
* **Work arrays** are reused per thread (:func:`workspace`): fresh arrays of this size come from the
  kernel as new pages, and the page faults cost as much as the arithmetic.
"""
from __future__ import annotations

import threading
from functools import lru_cache

import numpy as np

__all__ = ["TABLE_MAX", "BLOCK_ELEMENTS", "MIN_BLOCK", "BLOCK_MIN_ROWS", "Design", "packing", "workspace", "evaluate"]

#: Largest table of products x_ia x_ib (a <= b; n x d(d+1)/2 entries) kept for the whole solve; beyond
#: it the table is rebuilt block by block at every Hessian evaluation.
TABLE_MAX = 1 << 23
#: Passes go through blocks of about this many margins (problems x points), at least MIN_BLOCK points.
BLOCK_ELEMENTS = 1 << 16
#: The fewest points in a block.
MIN_BLOCK = 256
#: With few problems, blocks of at most BLOCK_ELEMENTS / BLOCK_MIN_ROWS points (long thin products are slow).
BLOCK_MIN_ROWS = 8

_WORKSPACE = threading.local()


def workspace(name, shape, dtype=np.float64):
    """A per-thread reusable 2-d array of ``shape`` and ``dtype`` (contents undefined)."""
    size = shape[0] * shape[1]
    key = name if dtype is np.float64 else name + "32"
    buf = getattr(_WORKSPACE, key, None)
    if buf is None or buf.size < size:
        buf = np.empty(size, dtype=dtype)
        setattr(_WORKSPACE, key, buf)
    return buf[:size].reshape(shape)


@lru_cache(maxsize=None)
def packing(d):
    """Packed storage of symmetric d x d matrices: the upper-triangle indices (a <= b) and, for every entry
    (a, b) of the full matrix in row-major order, its packed position (read-only, shared by all solves)."""
    upper = np.triu_indices(d)
    position = np.empty((d, d), dtype=np.intp)
    position[upper] = position[upper[::-1]] = np.arange(upper[0].size)
    for part in (*upper, position):
        part.flags.writeable = False
    return upper, position.ravel()


class Design:
    """The signed data ``Xy`` (rows y_i x_i) in the layouts the solver's products want; read-only, shared by chunks.

    ``XyT`` is (d, n): every product reads it by rows. ``dtype`` is the precision of the Hessian (and
    Taylor tensor) accumulations within a block. The table of products is kept when ``keep_table`` and it
    has at most :data:`TABLE_MAX` entries.
    """

    def __init__(self, X, y, dtype, keep_table=True):
        self.dtype = dtype
        self.n, self.d = X.shape
        self.XyT = np.multiply(X.T, y, out=workspace("signed data", (self.d, self.n)))
        self.upper, self.full_index = packing(self.d)
        self.m = self.upper[0].size
        self.table = None
        if keep_table and self.n * self.m <= TABLE_MAX:  # in the creating thread's work arrays: no new pages
            self.table = self._build(0, self.n, out=workspace("table", (self.m, self.n), dtype))

    def block(self, rows):
        """Points per block for a pass with ``rows`` problems (at most BLOCK_ELEMENTS / BLOCK_MIN_ROWS)."""
        return max(MIN_BLOCK, BLOCK_ELEMENTS // max(BLOCK_MIN_ROWS, rows))

    def _build(self, start, stop, out=None):
        out = np.empty((self.m, stop - start), dtype=self.dtype) if out is None else out
        row = 0
        XyT = self.XyT[:, start:stop].astype(self.dtype, copy=False)
        for a in range(self.d):  # row (a, b) of the table: x_ia x_ib, b >= a
            np.multiply(XyT[a], XyT[a:], out=out[row:row + self.d - a])
            row += self.d - a
        return out

    def products(self, start, stop):
        """(d(d+1)/2, stop - start) products of the points start..stop, in ``dtype``."""
        return self._build(start, stop) if self.table is None else self.table[:, start:stop]

    def symmetric(self, packed):
        """(k, d(d+1)/2) upper triangles -> (k, d, d) symmetric matrices."""
        return packed[:, self.full_index].reshape(packed.shape[0], self.d, self.d)

    def hessians(self, packed, reg):
        """(k, d, d) Hessians reg I + packed / n from curvature-weighted sums of the products."""
        H = self.symmetric(packed)
        H /= self.n
        H[:, np.arange(self.d), np.arange(self.d)] += reg
        return H


def evaluate(design, W, B, reg, loss, hessian_rows=None):
    """Gradients (k, d) at the rows of W and, for ``hessian_rows`` (indices into W), their Hessians: one pass.

    Margins, l' (in place of the margins where the loss allows), the gradient sums (float64) and, if
    asked, the curvature-weighted products, accumulated in float64 across blocks and within a block in
    ``design.dtype``. Returns ``(G, H)`` with ``H`` ``None`` when no Hessian was asked for.
    """
    k, n = W.shape[0], design.n
    sums = np.zeros((design.d, k))
    packed = direct = None
    if hessian_rows is not None and design.table is None and len(hessian_rows) == 1:
        direct = np.zeros((design.d, design.d))  # one problem, no table: X diag(l'') X^T block by block
    elif hessian_rows is not None:
        packed = np.zeros((len(hessian_rows), design.m))
    rows = None if hessian_rows is None or len(hessian_rows) == k else hessian_rows
    block = design.block(k)
    with np.errstate(over="ignore"):
        for start in range(0, n, block):
            stop = min(start + block, n)
            X_block = design.XyT[:, start:stop]
            Z = np.matmul(W, X_block, out=workspace("margins", (k, stop - start)))
            first, _ = loss.derivatives(Z, second=False, out=Z)  # Z may now hold l'
            sums += X_block @ first.T
            if (packed is not None or direct is not None) and rows is not None:
                first_rows = first[rows]
                Z_rows = first_rows if first is Z else Z[rows]  # l' in place of z: one copy serves both
            elif packed is not None or direct is not None:
                Z_rows, first_rows = Z, first
            if packed is not None:
                curvature = loss.second_derivative_from(Z_rows, first_rows, design.dtype, workspace)
                packed += curvature @ design.products(start, stop).T
            elif direct is not None:
                curvature = loss.second_derivative_from(Z_rows, first_rows, np.float64, workspace)
                weighted = np.multiply(X_block, curvature[0], out=workspace("weighted", X_block.shape))
                direct += weighted @ X_block.T
    G = reg * W + B / n + sums.T / n
    if direct is not None:
        direct /= n
        direct[np.arange(design.d), np.arange(design.d)] += reg
        return G, direct[None]
    return G, (None if packed is None else design.hessians(packed, reg))
