"""Roots, fixed points and minimisers with gradients by the implicit-function theorem.

The solvers run on plain values — SciPy's own, or one you supply — and their
iterations are never recorded.  The solution x*(θ) of F(x, θ) = 0 is then
differentiated through the implicit-function theorem: with J_x = ∂F/∂x and
J_θ = ∂F/∂θ at (x*, θ),

    dx*/dθ = −J_x⁻¹ J_θ,    so    θ̄ = −J_θᵀ u  with  J_xᵀ u = x̄,

one linear solve with the transposed Jacobian and one vector–Jacobian product of
F per backward pass, whatever the number of iterations.  The tape holds O(1)
records for the whole solve.  Derivation: ``diffsci/DERIVATIONS.md``, section
"Implicit differentiation", equations (I1)–(I4).

* :func:`custom_root` — any solver ``solve(fun, x0) -> x`` made differentiable;
* :func:`root` — :func:`scipy.optimize.root` with the Jacobian from
  :func:`diffsci.jacfwd`;
* :func:`fixed_point` — x = g(x, *args) by :func:`scipy.optimize.fixed_point`;
* :func:`minimize_scalar` — the minimiser of a scalar function by
  :func:`scipy.optimize.minimize_scalar`, differentiated through f′(x*) = 0;
* :func:`minimize`, :func:`least_squares`, :func:`brentq`, :func:`root_scalar` — in
  :mod:`diffsci.scipy._optimize_min` (argmin by the IFT on ∇f = 0, DERIVATIONS.md (AM1)–(AM2)).

Only ``args`` is differentiated; the root does not depend on the initial guess
(for a locally unique root), so ``x0`` gets a zero gradient.

References:
    S. G. Krantz, H. R. Parks, *The Implicit Function Theorem*, Birkhäuser 2002,
    Thm. 3.3.1.  B. M. Bell, J. V. Burke, "Algorithmic differentiation of
    implicit functions and optimal values", in *Advances in Automatic
    Differentiation*, Springer 2008, 67–77.  M. Blondel et al., "Efficient and
    modular implicit differentiation", NeurIPS 2022, arXiv:2105.15183 (eqs. (2)–(4)).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import scipy.optimize

from .._api import grad, pullback, stop_gradient
from .._core import Dual, Tracer, getval
from .._custom import custom_vjp
from .._forward import jacfwd
from .._tree import Raveler, tree_flatten, tree_unflatten

__all__ = ["custom_root", "root", "fixed_point", "minimize_scalar", "minimize", "least_squares",
           "brentq", "root_scalar"]

#: scipy.optimize.root methods that use a supplied Jacobian.
_USES_JACOBIAN = frozenset({"hybr", "lm"})
_EPS = np.finfo(np.float64).eps


# ---------------------------------------------------------------------------
# helpers: pytrees <-> one vector; differentiable leaves of args; closures
# ---------------------------------------------------------------------------
def _split_args(args):
    """The float leaves of ``args`` (differentiated) and ``rebuild(leaves) -> args``."""
    leaves, treedef = tree_flatten(args)
    diff = [k for k, x in enumerate(leaves)
            if isinstance(getval(x), (np.ndarray, np.generic, float))
            and np.result_type(getval(x)).kind == "f"]

    def rebuild(p):
        full = list(leaves)
        for k, v in zip(diff, p):
            full[k] = v
        return tree_unflatten(treedef, full)

    return tuple(leaves[k] for k in diff), rebuild


def _is_traced(x):
    return type(x) is Tracer or type(x) is Dual


def _check_no_closure(F, x0, p, where):
    """Refuse an ``f`` that closes over a value being differentiated.

    ``F`` is evaluated at ``x0`` and at ``p`` with its innermost trace removed: a tracer
    of that level (or a newer one) in the output can only come from a closure, whose
    gradient the implicit-function backward pass would not see.
    """
    level = max([x._tape.level for x in p if _is_traced(x)], default=0)
    plain = tuple(x._value if _is_traced(x) and x._tape.level == level else x for x in p)
    out = F(x0, plain)
    if any(_is_traced(o) and o._tape.level >= level for o in tree_flatten(out)[0]):
        raise ValueError(
            f"{where}: the function closes over a value being differentiated (its output is "
            f"traced although x and args are not); the implicit-function gradient cannot see "
            f"it. Pass the value through args=(...).")


# ---------------------------------------------------------------------------
# custom_root: the one implicit-differentiation rule
# ---------------------------------------------------------------------------
def custom_root(f: Callable[..., Any], x0: Any, solve: Callable[..., Any],
                tangent_solve: Callable[..., Any] | None = None, args: tuple[Any, ...] = (),
                where: str = "custom_root") -> Any:
    """Solve ``f(x, *args) = 0`` with ``solve`` and differentiate the root by the IFT.

    Args:
        f: ``f(x, *args) -> residual`` shaped like ``x`` (same pytree).  Plain
            NumPy code; differentiable in ``x`` and ``args``.
        x0: the initial guess (an array, a number or a pytree of them).
        solve: ``solve(fun, x0_vec) -> x_vec`` on plain 1-D float arrays, where
            ``fun(x_vec) -> residual_vec`` is ``f`` with (plain) ``args`` bound.
            Its iterations are not recorded.  ``fun`` is differentiable, so
            ``diffsci.jacfwd(fun)`` gives ``solve`` an exact Jacobian.
        tangent_solve: ``tangent_solve(rmatvec, b) -> u`` solving J_xᵀ u = b,
            given ``rmatvec(u) = J_xᵀ u`` (by :func:`diffsci.pullback`).  Default:
            form J_x densely with :func:`diffsci.jacfwd` and ``np.linalg.solve``.
        args: a tuple of extra arguments of ``f`` (pytrees); their float leaves
            are differentiated.  Values being differentiated must reach ``f``
            through ``args``, not a closure (this is checked).
        where: the name used in error messages.

    Returns:
        The root, shaped like ``x0``.  Its derivative with respect to ``x0`` is
        zero; with respect to ``args`` it is −J_x⁻¹J_θ (DERIVATIONS.md (I2)).

    Raises:
        ValueError: ``f`` closes over a differentiated value.
        numpy.linalg.LinAlgError: (backward pass) J_x is singular — the root is
            not locally unique and has no derivative.

    Example:
        >>> import numpy as np, diffsci as ds
        >>> from scipy.optimize import brentq
        >>> solve = lambda fun, x0: np.array([brentq(lambda x: fun(np.array([x]))[0], 0, 2)])
        >>> sqrt = lambda a: custom_root(lambda x, a: x ** 2 - a, 1.0, solve, args=(a,))
        >>> round(float(sqrt(2.0)), 12), round(float(ds.grad(sqrt)(2.0)), 8)  # 1/(2√2)
        (1.414213562373, 0.35355339)
    """
    if not isinstance(args, tuple):
        raise TypeError(f"{where}: args must be a tuple, got {type(args).__name__}")
    x0 = stop_gradient(x0)  # the root does not depend on the initial guess
    rav = Raveler(x0, "x0", where)
    x0_vec = np.asarray(rav.ravel(x0, "x0"), dtype=rav.dtype)
    p, rebuild = _split_args(args)

    def F(x, p):
        return rav.ravel(f(rav.unravel(x), *rebuild(p)), "f's output")

    _check_no_closure(F, x0_vec, p, where)

    @custom_vjp
    def find(p):  # p is plain here: fwd peels one trace level per call
        x = np.asarray(solve(lambda x: F(x, p), x0_vec.copy()), dtype=rav.dtype)
        if x.shape != x0_vec.shape:
            raise ValueError(f"{where}: solve returned shape {x.shape}, expected "
                             f"{x0_vec.shape} (the flattened x0)")
        return x

    def fwd(p):
        # Recursing through find (not find.fun) lets a lower trace level (grad of grad,
        # jvp of grad) see x*(θ) as its own custom_vjp call: second order by (I4).
        x = find(p)
        return x, (x, p)

    def bwd(res, xbar):
        x, p = res
        _, back_p = pullback(lambda *p_: F(x, p_), *p)
        if tangent_solve is None:  # (I3): dense J_x, one LU solve
            jac = jacfwd(lambda x_: F(x_, p))(x)
            u = np.linalg.solve(np.transpose(jac), xbar)
        else:
            _, back_x = pullback(lambda x_: F(x_, p), x)
            u = tangent_solve(lambda v: back_x(v)[0], xbar)
        return (tuple(-c for c in back_p(u)),)  # (I2)

    find.defvjp(fwd, bwd)
    return rav.unravel(find(p))


# ---------------------------------------------------------------------------
# SciPy front ends
# ---------------------------------------------------------------------------
def root(fun: Callable[..., Any], x0: Any, args: tuple[Any, ...] = (), method: str = "hybr",
         tol: float | None = None, options: dict[str, Any] | None = None) -> Any:
    """Find x with ``fun(x, *args) = 0`` by :func:`scipy.optimize.root`; differentiable in args.

    The Jacobian passed to SciPy (methods ``"hybr"`` and ``"lm"``) is exact,
    from :func:`diffsci.jacfwd`.  Gradients with respect to ``args`` come from
    the implicit-function theorem (:func:`custom_root`): no iteration is
    recorded or unrolled.

    Args:
        fun: ``fun(x, *args) -> residual`` shaped like ``x`` (same pytree).
        x0: the initial guess: an array, a number or a pytree of them.
        args: a tuple of extra arguments (pytrees; float leaves differentiated).
        method: any :func:`scipy.optimize.root` method (``"hybr"``, ``"lm"``,
            ``"broyden1"``, ``"krylov"`` ...).
        tol, options: passed to :func:`scipy.optimize.root`.

    Returns:
        The root, shaped like ``x0``.

    Raises:
        RuntimeError: SciPy reports no convergence (the message says why and
            gives the residual norm).
        ValueError: ``fun`` closes over a differentiated value (pass it in
            ``args``).

    Example:
        >>> import numpy as np, diffsci as ds
        >>> cubic = lambda x, a, b: x ** 3 + a * x - b
        >>> x = root(cubic, 1.0, args=(1.0, 2.0))          # x³ + x − 2 = 0 at x = 1
        >>> float(x), float(ds.grad(lambda b: root(cubic, 1.0, args=(1.0, b)))(2.0))  # 1/(3x²+a)
        (1.0, 0.25)

    References:
        SciPy's MINPACK wrappers (hybrd/hybrj, lmder); Blondel et al. (2022).
    """
    if not callable(fun):
        raise TypeError(f"root: fun must be callable, got {type(fun).__name__}")

    def solve(F, x0):
        jac = jacfwd(F) if method in _USES_JACOBIAN else None
        sol = scipy.optimize.root(F, x0, jac=jac, method=method, tol=tol, options=options)
        # MINPACK reports failure when a tight xtol cannot be met although the residual
        # is already at rounding level; such an x is a root.
        r0 = max(1.0, float(np.linalg.norm(F(x0))))
        if not sol.success and not np.linalg.norm(F(sol.x)) <= 64 * _EPS * r0:
            raise RuntimeError(
                f"root: scipy.optimize.root(method={method!r}) did not converge: "
                f"{sol.message} (|fun(x)| = {np.linalg.norm(F(sol.x)):.3g} at the last x)")
        return sol.x

    return custom_root(fun, x0, solve, args=tuple(args), where="root")


def fixed_point(func: Callable[..., Any], x0: Any, args: tuple[Any, ...] = (), xtol: float = 1e-10,
                maxiter: int = 500, method: str = "del2") -> Any:
    """Find x with ``x = func(x, *args)`` by :func:`scipy.optimize.fixed_point`; differentiable.

    Differentiated as the root of ``func(x, *args) − x`` (:func:`custom_root`):
    x̄ ↦ θ̄ = (∂g/∂θ)ᵀ u with (I − ∂g/∂x)ᵀ u = x̄.

    Args:
        func: ``func(x, *args) -> x`` (same pytree as ``x0``).
        x0: the initial guess.
        args: a tuple of extra arguments (float leaves differentiated).
        xtol, maxiter, method: passed to :func:`scipy.optimize.fixed_point`
            (``"del2"``: Steffensen's acceleration, or ``"iteration"``).

    Returns:
        The fixed point, shaped like ``x0``.

    Raises:
        RuntimeError: no convergence in ``maxiter`` iterations (from SciPy).

    Example:
        >>> import numpy as np, diffsci as ds
        >>> x = fixed_point(lambda x, a: np.cos(a * x), 0.5, args=(1.0,))
        >>> round(float(x), 10)                               # the Dottie number
        0.7390851332
    """
    if not callable(func):
        raise TypeError(f"fixed_point: func must be callable, got {type(func).__name__}")

    def solve(F, x0):
        g = lambda x: F(x) + x
        return scipy.optimize.fixed_point(g, x0, xtol=xtol, maxiter=maxiter, method=method)

    residual = lambda x, *a: _tree_sub(func(x, *a), x)
    return custom_root(residual, x0, solve, args=tuple(args), where="fixed_point")


def _polish(slope, x, bounds, steps=4):
    """Refine a minimiser by Newton steps on f′ = 0 with exact f′, f″ (forward over reverse).

    Brent's method locates a minimum only to ~√ε relative (f is flat there); a few
    Newton steps on the slope make x* accurate to rounding, so that its implicit
    derivative matches finite differences.  Steps that leave ``bounds`` or meet
    f″ ≤ 0 are not taken.
    """
    curvature = jacfwd(slope)
    for _ in range(steps):
        g = float(np.ravel(slope(np.array([x])))[0])
        h = float(np.ravel(curvature(np.array([x])))[0])
        if not h > 0:
            break
        new = x - g / h
        if bounds is not None and not bounds[0] <= new <= bounds[1]:
            break
        if new == x:
            break
        x = new
    return x


def _tree_sub(a, b):
    la, ta = tree_flatten(a)
    lb, _ = tree_flatten(b)
    return tree_unflatten(ta, [x - y for x, y in zip(la, lb)])


def minimize_scalar(fun: Callable[..., Any], args: tuple[Any, ...] = (),
                    bracket: Sequence[float] | None = None, bounds: Any = None,
                    method: str | None = None, tol: float | None = None,
                    options: dict[str, Any] | None = None) -> Any:
    """The minimiser of a scalar function by :func:`scipy.optimize.minimize_scalar`; differentiable.

    SciPy's result is refined by Newton steps on f′ = 0 (exact derivatives),
    which makes x* accurate to rounding rather than Brent's ~√ε.  The
    minimiser x* satisfies f′(x*, θ) = 0, so (:func:`custom_root` on f′)
    dx*/dθ = −(∂²f/∂x∂θ) / (∂²f/∂x²): second derivatives by forward over
    reverse.  Valid for an interior, non-degenerate minimum (f″(x*) > 0); at an
    active bound of ``method="bounded"`` the true derivative is 0, which this
    does not detect.

    Args:
        fun: ``fun(x, *args) -> real scalar`` for a scalar ``x``.
        args: a tuple of extra arguments (float leaves differentiated).
        bracket, bounds, method, tol, options: passed to
            :func:`scipy.optimize.minimize_scalar`.

    Returns:
        x* as a 0-d float array.

    Raises:
        RuntimeError: SciPy reports failure.

    Example:
        >>> import numpy as np, diffsci as ds
        >>> f = lambda x, a: (x - a) ** 2 + 0.1 * x ** 4
        >>> xs = minimize_scalar(f, args=(1.0,))
        >>> float(ds.grad(lambda a: minimize_scalar(f, args=(a,)))(1.0)) == float(
        ...     2 / (2 + 1.2 * xs ** 2))
        True
    """
    if not callable(fun):
        raise TypeError(f"minimize_scalar: fun must be callable, got {type(fun).__name__}")
    plain_args = tuple(stop_gradient(args))

    def solve(F, x0):
        sol = scipy.optimize.minimize_scalar(
            lambda x: float(getval(fun(x, *plain_args))), bracket=bracket, bounds=bounds,
            method=method, tol=tol, options=options)
        if not getattr(sol, "success", True):
            raise RuntimeError(f"minimize_scalar: scipy.optimize.minimize_scalar did not "
                               f"converge: {sol.message}")
        return np.array([_polish(F, float(sol.x), bounds)], dtype=np.float64)

    slope = grad(fun)
    x = custom_root(lambda x, *a: slope(x, *a), np.float64(0.0), solve, args=tuple(args),
                    where="minimize_scalar")
    return x


from ._optimize_min import brentq, least_squares, minimize, root_scalar  # noqa: E402
