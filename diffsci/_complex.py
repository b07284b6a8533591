"""Complex differentiation: the Wirtinger derivatives (∂f/∂z, ∂f/∂z̄).

For z = x + iy, the Wirtinger (CR-calculus) derivatives are

    ∂f/∂z = (∂f/∂x - i ∂f/∂y) / 2,        ∂f/∂z̄ = (∂f/∂x + i ∂f/∂y) / 2.

f is holomorphic exactly where ∂f/∂z̄ = 0, and then ∂f/∂z = f′(z).  For a
real-valued f, ∂f/∂z̄ = conj(∂f/∂z) = g/2, where g = ∂f/∂x + i ∂f/∂y is what
:func:`diffsci.grad` returns (diffsci's convention for complex inputs, PyTorch's too),
so ``z - lr * g`` is steepest descent.  The directional derivatives J·1 = ∂f/∂x and J·i = ∂f/∂y
come from two forward passes, hence ∂f/∂z = (J·1 - i J·i)/2 and
∂f/∂z̄ = (J·1 + i J·i)/2.

Reference: K. Kreutz-Delgado, "The Complex Gradient Operator and the
CR-Calculus", arXiv:0906.4835 (2009), eqs. (20)–(21) (the definitions) and
§4 (the real-valued case).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ._api import pullback
from ._core import Dual, Tracer, getval
from ._forward import jvp
from ._tree import tree_flatten, tree_unflatten

__all__ = ["wirtinger"]


def _complex_dtype(v):
    return np.result_type(np.asarray(v).dtype, np.complex64)


def wirtinger(f: Callable[..., Any], z: Any, *, mode: str = "fwd") -> tuple[Any, Any]:
    """Wirtinger derivatives ``(∂f/∂z, ∂f/∂z̄)`` of ``f`` at ``z``.

    Args:
        f: a function of one complex argument returning an array or scalar (real or
            complex), or a pytree of them.  f need not be holomorphic.
        z: a complex scalar or array (a real one is promoted to complex: float32 to
            complex64, anything else to complex128).
        mode: ``"fwd"`` (default): two JVPs per element of ``z``, along 1 and i;
            ``"rev"``: one VJP per real-valued output element (two per complex one).
            Both give the same result; pick the cheaper one.

    Returns:
        ``(dz, dzbar)``, each with the structure of ``f``'s output.  For scalar ``z``
        each leaf has the output's shape; for array ``z`` each leaf is the full
        Jacobian, of shape ``out.shape + z.shape`` (as :func:`diffsci.jacfwd` lays it
        out), not just its diagonal: ``dz[..., k]`` is ∂f/∂z_k.  For an elementwise
        f the Jacobians are diagonal, and their diagonals are the elementwise
        derivatives.

    Raises:
        ValueError: for an unknown ``mode``.

    Example:
        >>> dz, dzbar = wirtinger(lambda z: 3 * z ** 2 + 2 * z + 1, 1 + 2j)  # holomorphic
        >>> complex(dz), complex(dzbar)                                     # (f′, 0)
        ((8+12j), 0j)
        >>> dz, dzbar = wirtinger(lambda z: abs(z) ** 2, 1 + 2j)  # |z|² = z z̄
        >>> complex(dz), complex(dzbar)                           # (z̄, z)
        ((1-2j), (1+2j))

    References:
        K. Kreutz-Delgado, "The Complex Gradient Operator and the CR-Calculus" (2009),
        eqs. (20)-(21).
    """
    if mode not in ("fwd", "rev"):
        raise ValueError(f"wirtinger: mode must be 'fwd' or 'rev', got {mode!r}")
    zv = getval(z)
    cdt = _complex_dtype(zv)
    if np.result_type(np.asarray(zv).dtype).kind != "c":
        z = z.astype(cdt) if type(z) is Tracer or type(z) is Dual else np.asarray(z, cdt)
    elif type(z) is not Tracer and type(z) is not Dual:
        z = np.asarray(z)
    shape = np.shape(zv)
    if mode == "fwd":
        return _forward(f, z, shape, cdt)
    return _reverse(f, z, shape, cdt)


def _forward(f, z, shape, cdt):
    n = int(np.prod(shape, dtype=int))
    d1, di = [], []  # per input element: the output tangents along 1 and i (leaves)
    y = None
    for k in range(n):
        e1, ei = np.zeros(shape, cdt), np.zeros(shape, cdt)  # fresh: f may return its input
        e1.flat[k], ei.flat[k] = 1, 1j
        y, t1 = jvp(f, (z,), (e1,))
        _, ti = jvp(f, (z,), (ei,))
        d1.append(tree_flatten(t1)[0])
        di.append(tree_flatten(ti)[0])
    if y is None:
        y = f(z)
    leaves, tree = tree_flatten(y)
    dz, dzbar = [], []
    for j, o in enumerate(leaves):
        oshape = np.shape(getval(o))
        if n == 0:
            zero = np.zeros(oshape + shape, cdt)
            dz.append(zero)
            dzbar.append(zero)
            continue
        a = _columns([c[j] for c in d1], oshape + shape)
        b = _columns([c[j] for c in di], oshape + shape)
        dz.append(_scalar((a - 1j * b) / 2))
        dzbar.append(_scalar((a + 1j * b) / 2))
    return tree_unflatten(tree, dz), tree_unflatten(tree, dzbar)


def _reverse(f, z, shape, cdt):
    # With a = VJP(e_j) = ∂Re f_j/∂x + i ∂Re f_j/∂y and b = VJP(i e_j) (the same for Im f_j):
    # ∂f_j/∂z = (conj(a) + i conj(b))/2 and ∂f_j/∂z̄ = (a + i b)/2.
    y, back = pullback(f, z)
    leaves, tree = tree_flatten(y)
    zeros = [np.zeros(np.shape(getval(o)), np.result_type(getval(o))) for o in leaves]
    dz, dzbar = [], []
    for j, o in enumerate(leaves):
        ov = getval(o)
        oshape = np.shape(ov)
        complex_out = np.result_type(ov).kind == "c"
        rows_z, rows_zbar = [], []
        for i in range(int(np.prod(oshape, dtype=int))):
            a = back(_seed(tree, zeros, j, i, 1))[0]
            b = back(_seed(tree, zeros, j, i, 1j))[0] if complex_out else 0
            rows_z.append((np.conj(a) + 1j * np.conj(b)) / 2)
            rows_zbar.append((a + 1j * b) / 2)
        if not rows_z:
            dz.append(np.zeros(oshape + shape, cdt))
            dzbar.append(np.zeros(oshape + shape, cdt))
            continue
        dz.append(_scalar(np.reshape(np.stack(rows_z), oshape + shape).astype(cdt)))
        dzbar.append(_scalar(np.reshape(np.stack(rows_zbar), oshape + shape).astype(cdt)))
    return tree_unflatten(tree, dz), tree_unflatten(tree, dzbar)


def _seed(tree, zeros, j, i, d):
    """Output cotangents: ``d`` at element i of leaf j, zeros elsewhere (fresh arrays)."""
    seeds = [zz.copy() for zz in zeros]
    seeds[j].flat[i] = d
    return tree_unflatten(tree, seeds)


def _columns(cols, shape):
    """Stack per-input-element output tangents as the last axis, reshaped to ``shape``."""
    return np.reshape(np.stack([np.asarray(c) if not _traced(c) else c for c in cols],
                               axis=-1), shape)


def _traced(x):
    return type(x) is Tracer or type(x) is Dual


def _scalar(x):
    """0-d results as NumPy scalars (as :func:`diffsci.grad` returns them)."""
    return x[()] if not _traced(x) and np.ndim(x) == 0 else x
