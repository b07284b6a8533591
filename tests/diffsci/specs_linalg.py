"""Gradient specs for diffsci.numpy.linalg's eig, eigvals, pinv, lstsq, cond, matrix_rank, norm of
a Python list and det at singular matrices (they join test_numpy_grads' table and its coverage
test; test_linalg_degenerate.py runs them in forward mode too)."""

from __future__ import annotations

import numpy as np

import diffsci.numpy as dnp
import diffsci.numpy.linalg as dla

from .test_numpy_grads import Spec, cnormal, const, normal, wellcond

S = Spec


def _eig_function(a):
    """V diag(w²) V⁻¹ = a²: a function of (w, V) invariant under the eigenvector gauge."""
    w, v = dla.eig(a)
    return v @ dnp.diag(w ** 2) @ dla.inv(v) if np.ndim(w) == 1 else \
        dnp.einsum("...ij,...j,...jk->...ik", v, w ** 2, dla.inv(v))


def _eig_moduli(a):
    """|v_ij|² and the eigenvalues: gauge-invariant (unit-norm columns, free phase)."""
    w, v = dla.eig(a)
    return dnp.abs(v) ** 2, w


def _distinct_real_spectrum(n):
    def sample(r):  # non-symmetric with eigenvalues 1, 2.5, 4, ...: real eigen-decomposition
        x = r.standard_normal((n, n)) + 2 * np.eye(n)
        return x @ np.diag(1.0 + 1.5 * np.arange(n)) @ np.linalg.inv(x)
    return sample


def _rank_deficient(n, r_):
    def sample(r):
        return r.standard_normal((n, r_)) @ r.standard_normal((r_, n))
    return sample


SPECS = [
    # ---- eig / eigvals: real (complex-conjugate pairs), real spectrum, complex, batched
    S("linalg.eig", lambda a: dnp.real(_eig_function(a)), (normal(3, 3),)),
    S("linalg.eig", lambda a: _eig_function(a), (cnormal(3, 3),)),
    S("linalg.eig", _eig_moduli, (_distinct_real_spectrum(3),)),
    S("linalg.eig", _eig_moduli, (cnormal(2, 3, 3),)),
    S("linalg.eig", lambda a: dnp.real(_eig_function(a)), (normal(2, 4, 4),)),
    S("linalg.eigvals", lambda a: dla.eigvals(a), (normal(3, 3),)),
    S("linalg.eigvals", lambda a: dla.eigvals(a), (_distinct_real_spectrum(4),)),
    S("linalg.eigvals", lambda a: dla.eigvals(a), (cnormal(2, 3, 3),)),
    # ---- pinv: tall, wide, complex, batched, rank-deficient (constant rank), hermitian
    S("linalg.pinv", lambda a: dla.pinv(a), (normal(4, 3),)),
    S("linalg.pinv", lambda a: dla.pinv(a), (normal(2, 4),)),
    S("linalg.pinv", lambda a: dla.pinv(a), (cnormal(3, 2),)),
    S("linalg.pinv", lambda a: dla.pinv(a), (normal(2, 3, 3),)),
    S("linalg.pinv", lambda x, y: dla.pinv(x @ y), (normal(4, 2), normal(2, 3))),  # rank 2
    S("linalg.pinv", lambda b: dla.pinv(b @ b.T + np.eye(3), hermitian=True), (normal(3, 3),)),
    # ---- lstsq: over- and underdetermined, vector and matrix right-hand sides
    S("linalg.lstsq", lambda a, b: dla.lstsq(a, b)[0], (normal(5, 3), normal(5))),
    S("linalg.lstsq", lambda a, b: dla.lstsq(a, b)[1], (normal(5, 3), normal(5, 2))),
    S("linalg.lstsq", lambda a, b: dla.lstsq(a, b)[3], (normal(5, 3), normal(5))),
    S("linalg.lstsq", lambda a, b: dla.lstsq(a, b)[0], (normal(2, 4), normal(2, 3))),
    S("linalg.lstsq", lambda a, b: dla.lstsq(a, b)[0], (cnormal(4, 2), cnormal(4))),
    # ---- cond
    S("linalg.cond", lambda a: dla.cond(a), (normal(3, 3),)),
    S("linalg.cond", lambda a: dla.cond(a, -2), (normal(2, 4, 3),)),
    S("linalg.cond", lambda a: dla.cond(a, "fro"), (wellcond(3, 3),)),
    S("linalg.cond", lambda a: dla.cond(a, 1), (const([[3.0, 1.0], [-0.5, 2.0]]),)),
    S("linalg.cond", lambda a: dla.cond(a, np.inf), (const([[3.0, 1.0], [-0.5, 2.0]]),)),
    S("linalg.cond", lambda a: dla.cond(a), (cnormal(3, 3),)),
    # ---- matrix_rank is piecewise constant: a factor with zero derivative
    S("linalg.matrix_rank", lambda a: a * dla.matrix_rank(a), (normal(3, 4),)),  # locally 3
    S("linalg.matrix_rank", lambda a: a * dla.matrix_rank(a), (cnormal(3, 3),)),
    # ---- norm of a Python list of traced values
    S("linalg.norm", lambda x, y: dla.norm([x, y, 2.0]), (const(0.5), const(-1.5))),
    S("linalg.norm", lambda x, y: dla.norm([x, y], axis=0), (normal(3), normal(3))),
    # ---- det at singular matrices (its gradient is the adjugate: LA1, LA2)
    S("linalg.det", lambda a: dla.det(a), (_rank_deficient(3, 2),)),
    S("linalg.det", lambda a: dla.det(a), (_rank_deficient(4, 1),)),
    S("linalg.det", lambda a: dla.det(a), (const(np.zeros((2, 3, 3))),)),
]
