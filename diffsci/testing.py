"""Gradient checking: the one public checker every test in the project uses.

:func:`check_grads` compares a function's derivatives with central finite
differences along one random direction.  Reverse mode is checked through the
adjoint identity ⟨u, Jᵀv⟩ = ⟨Ju, v⟩ (``Ju`` by finite differences, ``Jᵀv`` by
the VJP), forward mode by comparing ``Ju`` directly; higher orders by
recursion on the derivative functions themselves, so a failure message names
the composition that broke ("VJP of VJP of f").

Complex inputs are treated as pairs of reals: perturbations are complex and
the inner product is ⟨a, b⟩ = Re Σ conj(a)·b, which matches diffsci's
convention (the cotangent of a real-valued loss is ∂/∂Re + i·∂/∂Im).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ._api import pullback
from ._core import getval
from ._tree import tree_flatten, tree_unflatten

__all__ = ["check_grads", "TOLERANCES"]

#: Per-dtype defaults: finite-difference step and comparison tolerances.
#: float64 central differences have truncation error O(eps²) and round-off
#: O(1e-16 / eps): eps = 1e-6 balances them near 1e-10 relative.
TOLERANCES = {
    np.dtype(np.float64): dict(eps=1e-6, rtol=1e-5, atol=1e-8),
    np.dtype(np.float32): dict(eps=1e-3, rtol=2e-3, atol=1e-4),
}


def check_grads(f: Callable[..., Any], args: Sequence[Any], order: int = 1,
                modes: Sequence[str] = ("rev", "fwd"), eps: float | None = None,
                rtol: float | None = None, atol: float | None = None, seed: int = 0) -> None:
    """Check the derivatives of ``f`` at ``args`` against central finite differences.

    Args:
        f: a function of the positional arguments ``args`` (arrays, scalars or
            pytrees of them, float or complex) returning an array, scalar or
            pytree of them.
        args: a tuple (or list) of positional arguments.
        order: derivative order to check; order 2 checks the derivative
            functions themselves (e.g. the VJP of the VJP).
        modes: which modes to check: ``"rev"`` (the VJP, through the adjoint
            identity) and ``"fwd"`` (the JVP, against the differences directly).
            With ``order=2`` every composition is checked ("VJP of JVP of f" ...).
        eps, rtol, atol: override the per-dtype defaults of :data:`TOLERANCES`.
            Inputs in float32/complex64 are checked in that precision with the
            float32 defaults; everything else in float64.
        seed: seed of the random directions.

    Raises:
        AssertionError: naming the composition that failed ("VJP of f"), the
            two numbers that disagree and which argument carries the error.
        TypeError: when an argument is not float/complex.

    Example:
        >>> import numpy as np
        >>> check_grads(lambda x: np.sin(x) * x, (np.array([0.3, 1.2]),), order=2)
    """
    if not isinstance(args, (tuple, list)):
        raise TypeError(
            f"check_grads: args must be a tuple of positional arguments, got "
            f"{type(args).__name__} (write (x,) for a single argument)"
        )
    for m in modes:
        if m not in ("rev", "fwd"):
            raise ValueError(f"check_grads: modes must contain 'rev' and/or 'fwd', got {m!r}")
    args = tuple(args)
    dtype = _check_dtype(args)
    tol = dict(TOLERANCES[dtype])
    for key, val in (("eps", eps), ("rtol", rtol), ("atol", atol)):
        if val is not None:
            tol[key] = val
    rng = np.random.default_rng(seed)
    _check(f, args, order, tuple(modes), tol, rng, _name(f))


# ---------------------------------------------------------------------------
def _name(f):
    return getattr(f, "__name__", type(f).__name__)


def _check_dtype(args):
    leaves, _ = tree_flatten(args)
    low = False
    for k, x in enumerate(leaves):
        v = getval(x)
        dt = np.result_type(v)
        if dt.kind not in "fc":
            raise TypeError(
                f"check_grads: leaf {k} of args has dtype {dt}; only float and complex "
                f"inputs can be checked (close over integer arguments instead)"
            )
        low = low or dt in (np.float32, np.complex64, np.float16)
        if dt in (np.float64, np.complex128):
            return np.dtype(np.float64)
    return np.dtype(np.float32) if low else np.dtype(np.float64)


def _random_like(tree, rng):
    leaves, td = tree_flatten(tree)
    out = []
    for x in leaves:
        v = getval(x)
        shape, dt = np.shape(v), np.result_type(v)
        if dt.kind == "c":
            r = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
        elif dt.kind == "f":
            r = rng.standard_normal(shape)
        else:
            r = np.zeros(shape)
        out.append(np.asarray(r, dt if dt.kind in "fc" else np.float64))
    return tree_unflatten(td, out)


def _inner(a, b):
    """Real inner product Re Σ conj(a)·b over matching pytrees."""
    la, _ = tree_flatten(a)
    lb, _ = tree_flatten(b)
    total = 0.0
    for x, y in zip(la, lb):
        x, y = getval(x), getval(y)
        if np.result_type(x).kind not in "fc" or np.result_type(y).kind not in "fc":
            continue
        total += float(np.real(np.vdot(np.ravel(x), np.ravel(y))))
    return total


def _norm(a):
    return float(np.sqrt(max(_inner(a, a), 0.0)))


def _axpy(alpha, u, x):
    """x + alpha * u, leaf-wise, keeping x's dtype."""
    lu, _ = tree_flatten(u)
    lx, td = tree_flatten(x)
    return tree_unflatten(
        td, [np.asarray(getval(b) + alpha * a, np.result_type(getval(b))) for a, b in zip(lu, lx)]
    )


def _sub_scaled(a, b, scale):
    la, td = tree_flatten(a)
    lb, _ = tree_flatten(b)
    out = []
    for x, y in zip(la, lb):
        x, y = getval(x), getval(y)
        if np.result_type(x).kind in "fc":
            out.append((np.asarray(x) - np.asarray(y)) * scale)
        else:
            out.append(np.zeros(np.shape(x)))
    return tree_unflatten(td, out)


def _fd(f, args, u, eps):
    """Central difference (f(x + eps u) - f(x - eps u)) / (2 eps)."""
    plus = f(*_axpy(eps, u, args))
    minus = f(*_axpy(-eps, u, args))
    return _sub_scaled(plus, minus, 1.0 / (2 * eps))


def _close(a, b, scale, tol):
    return abs(a - b) <= tol["atol"] + tol["rtol"] * max(abs(a), abs(b), scale)


def _only(u, k):
    """The direction u restricted to positional argument k (zeros elsewhere)."""
    return tuple(ui if i == k else _zeros(ui) for i, ui in enumerate(u))


def _zeros(tree):
    leaves, td = tree_flatten(tree)
    return tree_unflatten(td, [np.zeros_like(getval(x)) for x in leaves])


def _check(f, args, order, modes, tol, rng, name):
    for mode in modes:
        if mode == "rev":
            v = _check_vjp(f, args, tol, rng, name)
            if order > 1:
                def vjp_f(*xs, _f=f):
                    *a, ybar = xs
                    return pullback(_f, *a)[1](ybar)

                vjp_f.__name__ = f"VJP of {name}"
                _check(vjp_f, args + (v,), order - 1, modes, tol, rng, vjp_f.__name__)
        else:
            t = _check_jvp(f, args, tol, rng, name)
            if order > 1:
                from . import jvp as _jvp

                nargs = len(args)

                def jvp_f(*xs, _f=f, _n=nargs):
                    return _jvp(_f, tuple(xs[:_n]), tuple(xs[_n:]))[1]

                jvp_f.__name__ = f"JVP of {name}"
                _check(jvp_f, args + tuple(t), order - 1, modes, tol, rng, jvp_f.__name__)


def _check_vjp(f, args, tol, rng, name):
    y_plain = f(*args)
    y, back = pullback(f, *args)
    _check_same(y, y_plain, name, tol)
    u = _random_like(args, rng)
    v = _random_like(y, rng)
    ju = _fd(f, args, u, tol["eps"])
    ct = back(v)
    _check_structure(ct, args, f"VJP of {name}")
    a, b = _inner(ju, v), _inner(u, ct)
    scale = _norm(ju) * _norm(v)
    if not _close(a, b, scale, tol):
        culprits = []
        for k in range(len(args)):
            uk = _only(u, k)
            ak = _inner(_fd(f, args, uk, tol["eps"]), v)
            bk = _inner(uk, ct)
            if not _close(ak, bk, scale, tol):
                culprits.append(f"argument {k}: FD {ak:.10g} vs VJP {bk:.10g}")
        raise AssertionError(
            f"VJP of {name} disagrees with central finite differences (eps={tol['eps']:g}): "
            f"<J u, v> = {a:.10g} by differences, <u, J^T v> = {b:.10g} by the VJP "
            f"(|diff| = {abs(a - b):.3g}, rtol={tol['rtol']:g}, atol={tol['atol']:g}). "
            + ("Wrong cotangent for " + "; ".join(culprits) if culprits else "")
        )
    return v


def _check_jvp(f, args, tol, rng, name):
    from . import jvp as _jvp

    u = _random_like(args, rng)
    y, t = _jvp(f, args, u)
    _check_same(y, f(*args), name, tol)
    ju = _fd(f, args, u, tol["eps"])
    diff = _norm(_sub_scaled(t, ju, 1.0))
    scale = max(_norm(ju), _norm(t))
    if not diff <= tol["atol"] + tol["rtol"] * scale:
        raise AssertionError(
            f"JVP of {name} disagrees with central finite differences (eps={tol['eps']:g}): "
            f"|JVP - FD| = {diff:.3g} for |FD| = {_norm(ju):.6g} "
            f"(rtol={tol['rtol']:g}, atol={tol['atol']:g})"
        )
    return u


def _check_same(y, y_plain, name, tol):
    ly, ty = tree_flatten(y)
    lp, tp = tree_flatten(y_plain)
    if ty != tp:
        raise AssertionError(f"{name}: traced output structure {ty!r} != plain output {tp!r}")
    for k, (a, b) in enumerate(zip(ly, lp)):
        a, b = getval(a), getval(b)
        # The traced and plain calls may round differently (a kernel vs composed NumPy).
        rtol, atol = tol["rtol"] * 1e-3, tol["atol"] * 1e-2
        if np.shape(a) != np.shape(b) or not np.allclose(a, b, rtol=rtol, atol=atol,
                                                          equal_nan=True):
            raise AssertionError(
                f"{name}: output {k} differs between the traced and the plain call"
            )


def _check_structure(ct, args, what):
    lc, tc = tree_flatten(ct)
    la, ta = tree_flatten(args)
    if tc != ta:
        raise AssertionError(f"{what}: cotangent structure {tc!r} != argument structure {ta!r}")
    for k, (c, a) in enumerate(zip(lc, la)):
        cs, as_ = np.shape(getval(c)), np.shape(getval(a))
        if cs != as_:
            raise AssertionError(f"{what}: cotangent of leaf {k} has shape {cs}, expected {as_}")
        cd, ad = np.result_type(getval(c)), np.result_type(getval(a))
        if cd != ad:
            raise AssertionError(f"{what}: cotangent of leaf {k} has dtype {cd}, expected {ad}")
