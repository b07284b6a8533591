"""Minimisers and scalar roots with implicit gradients: minimize, least_squares, root_scalar.

Re-exported by :mod:`diffsci.scipy.optimize`.  SciPy solves on plain values with exact
derivatives from diffsci (gradients, Jacobians, Hessians); the solution is then
differentiated by the implicit function theorem (:func:`diffsci.scipy.optimize.custom_root`):

* ``minimize``: x*(p) is a stationary point, ∇_x f(x*, p) = 0, so (DERIVATIONS.md "Implicit
  argmin" (AM1)) dx*/dp = −H⁻¹ ∂²f/∂x∂p with H = ∇²_x f(x*, p);
* ``least_squares``: the same on ½‖r(x, p)‖² (stationarity Jᵀ r = 0), (AM2);
* ``brentq`` / ``root_scalar``: dx*/dp = −f_p / f_x at the root, (I2).

The iterations are never recorded (O(1) tape).  Valid for a non-degenerate interior solution
(H positive definite, f_x ≠ 0); at an active bound the derivative is not the IFT's, so a
solution on a bound of ``bounds`` raises.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import scipy.optimize

from .._api import grad, stop_gradient
from .._core import Dual, Tracer, getval
from .._forward import jacfwd
from .._tree import Raveler

__all__ = ["minimize", "least_squares", "brentq", "root_scalar"]


def _traced(x):
    return type(x) is Tracer or type(x) is Dual


def _callable(where, fun):
    if not callable(fun):
        raise TypeError(f"{where}: fun must be callable, got {type(fun).__name__}")


def _tuple_args(where, args):
    if not isinstance(args, tuple):
        raise TypeError(f"{where}: args must be a tuple, got {type(args).__name__}")
    return args


def _newton_polish(g, x, steps=4):
    """Newton steps on g(x) = 0 with the exact Jacobian, kept while ‖g‖ decreases."""
    jac = jacfwd(g)
    r = np.linalg.norm(g(x))
    for _ in range(steps):
        if r == 0.0:
            break
        try:
            new = x - np.linalg.solve(np.atleast_2d(jac(x)), g(x))
        except np.linalg.LinAlgError:
            break
        rn = np.linalg.norm(g(new))
        if not rn < r:
            break
        x, r = new, rn
    return x


def _polish_inside(F, x, bounds):
    """Newton-polish x; with bounds, only an interior solution, and only if it stays inside."""
    if bounds is None:
        return _newton_polish(F, x)
    lo, hi = _bound_arrays(x, bounds)
    if np.any(x <= lo) or np.any(x >= hi):
        return x
    new = _newton_polish(F, x)
    return new if np.all(new > lo) and np.all(new < hi) else x


def _bound_arrays(x, bounds):
    b = scipy.optimize.Bounds(*bounds) if isinstance(bounds, tuple) and len(bounds) == 2 \
        and not isinstance(bounds[0], tuple) else bounds
    if isinstance(b, scipy.optimize.Bounds):
        return (np.broadcast_to(np.asarray(b.lb, float), x.shape),
                np.broadcast_to(np.asarray(b.ub, float), x.shape))
    lo = np.array([-np.inf if v[0] is None else v[0] for v in b], float)
    hi = np.array([np.inf if v[1] is None else v[1] for v in b], float)
    return lo, hi


def _check_bounds(where, x, bounds):
    if bounds is None:
        return
    lo, hi = _bound_arrays(x, bounds)
    tol = 1e-10 * np.maximum(1.0, np.abs(x))
    active = (x - lo <= tol) | (hi - x <= tol)
    if np.any(active):
        raise ValueError(f"{where}: the solution is on a bound (components "
                         f"{np.flatnonzero(active).tolist()}); the implicit-function gradient "
                         f"holds for an interior solution only. Drop or widen the bounds")


def minimize(fun: Callable[..., Any], x0: Any, args: tuple[Any, ...] = (),
             method: str | None = None, bounds: Any = None, tol: float | None = None,
             options: dict[str, Any] | None = None) -> Any:
    """The argmin of ``fun(x, *args)`` by :func:`scipy.optimize.minimize`, differentiable in args.

    SciPy gets the exact gradient (reverse mode) and, for the methods that use one, the exact
    Hessian (forward over reverse); its result is then polished by Newton steps on ∇f = 0, so
    that x* is accurate to rounding and its implicit derivative matches differences.

    Args:
        fun: ``fun(x, *args) -> real scalar``; ``x`` an array, a number or a pytree.
        x0: the initial guess (gets a zero gradient: the minimiser does not depend on it).
        args: a tuple of extra arguments; their float leaves are differentiated.
        method, bounds, tol, options: passed to :func:`scipy.optimize.minimize`
            (constraints are not supported).

    Returns:
        A :class:`scipy.optimize.OptimizeResult` with ``x`` (shaped like ``x0``,
        differentiable: dx*/dp = −H⁻¹ ∂²f/∂x∂p, DERIVATIONS.md (AM1)), ``fun`` (f(x*, p),
        differentiable; by the envelope theorem its gradient is ∂f/∂p), ``jac`` (plain),
        ``success``, ``status``, ``message``, ``nit``, ``nfev``.

    Raises:
        TypeError: ``fun`` not callable, ``args`` not a tuple.
        RuntimeError: SciPy reports failure and the gradient at its point is not small.
        ValueError: the solution lies on a bound; ``fun`` closes over a traced value.
        numpy.linalg.LinAlgError: (backward) the Hessian at x* is singular.

    Example:
        >>> import numpy as np, diffsci as ds
        >>> f = lambda x, a: np.sum((x - a) ** 2) + 0.1 * np.sum(x ** 4)
        >>> r = minimize(f, np.zeros(2), args=(np.array([1.0, -1.0]),))
        >>> bool(np.allclose(ds.grad(f)(r.x, np.array([1.0, -1.0])), 0, atol=1e-12))
        True
    """
    from .optimize import custom_root

    _callable("minimize", fun)
    args = _tuple_args("minimize", args)
    plain_args = tuple(stop_gradient(args))
    x0 = stop_gradient(x0)
    rav = Raveler(x0, "x0", "minimize")
    slope = grad(fun)
    info = {}

    def stationarity(x, *a):
        return slope(x, *a)

    def solve(F, x0_vec):
        f_vec = lambda v: float(getval(fun(rav.unravel(v), *plain_args)))  # noqa: E731
        hess = jacfwd(F)
        uses_hess = method is not None and method.lower() in {
            "newton-cg", "trust-ncg", "trust-krylov", "trust-exact", "dogleg"}
        free = method is not None and method.lower() in {"nelder-mead", "powell", "cobyla",
                                                          "cobyqa"}
        sol = scipy.optimize.minimize(f_vec, x0_vec, args=(), method=method,
                                      jac=None if free else F,
                                      hess=hess if uses_hess else None, bounds=bounds,
                                      tol=tol, options=options)
        x = _polish_inside(F, np.asarray(sol.x, float), bounds)
        gnorm = float(np.linalg.norm(F(x)))
        if not sol.success and not gnorm <= 1e-8 * max(1.0, abs(float(sol.fun))):
            raise RuntimeError(f"minimize: scipy.optimize.minimize(method={method!r}) did not "
                               f"converge: {sol.message} (|grad f| = {gnorm:.3g})")
        _check_bounds("minimize", x, bounds)
        info.update(sol)
        return x

    x = custom_root(stationarity, x0, solve, args=args, where="minimize")
    return scipy.optimize.OptimizeResult(
        x=x, fun=fun(x, *args), jac=np.asarray(getval(rav.ravel(slope(x, *plain_args), "g"))),
        success=True, status=info.get("status", 0), message=info.get("message", ""),
        nit=info.get("nit", 0), nfev=info.get("nfev", 0))


def least_squares(fun: Callable[..., Any], x0: Any, args: tuple[Any, ...] = (), bounds: Any = None,
                  method: str = "trf", ftol: float = 1e-10, xtol: float = 1e-10,
                  gtol: float = 1e-10, max_nfev: int | None = None, loss: str = "linear") -> Any:
    """Nonlinear least squares by :func:`scipy.optimize.least_squares`, differentiable in args.

    SciPy gets the exact Jacobian of the residuals (forward mode).  x* minimises
    ½‖r(x, p)‖², so its derivative is (AM2) dx*/dp = −H⁻¹ ∂(Jᵀ r)/∂p with
    H = JᵀJ + Σ_i r_i ∇²r_i, the exact Hessian (not the Gauss–Newton one).

    Args:
        fun: ``fun(x, *args) -> residuals`` (1-D); ``x`` a 1-D array or a number.
        x0: the initial guess (zero gradient).
        args: a tuple of extra arguments (float leaves differentiated).
        bounds, method, ftol, xtol, gtol, max_nfev: passed to SciPy; ``loss`` must be
            ``"linear"`` (robust losses change the stationarity condition).

    Returns:
        An OptimizeResult with ``x`` (differentiable), ``fun`` (the residuals at x*,
        differentiable), ``cost`` (½‖r‖², differentiable), ``jac`` (plain), ``success``,
        ``status``, ``message``, ``nfev``, ``njev``.

    Raises:
        TypeError: ``fun`` not callable, ``args`` not a tuple.
        ValueError: ``loss`` other than "linear"; an active bound; a closure over a
            traced value.
        RuntimeError: SciPy reports failure.

    Example:
        >>> import numpy as np, diffsci as ds
        >>> t = np.linspace(0, 1, 5)
        >>> res = lambda x, y: x[0] * np.exp(x[1] * t) - y
        >>> y = 2.0 * np.exp(-1.5 * t)
        >>> np.round(least_squares(res, np.array([1.0, 0.0]), args=(y,)).x, 8)
        array([ 2. , -1.5])
    """
    from .optimize import custom_root

    _callable("least_squares", fun)
    args = _tuple_args("least_squares", args)
    if loss != "linear":
        raise ValueError(f"least_squares: loss must be 'linear' (a robust loss changes the "
                         f"stationarity condition), got {loss!r}")
    plain_args = tuple(stop_gradient(args))
    x0 = stop_gradient(x0)
    rav = Raveler(x0, "x0", "least_squares")

    def cost(x, *a):
        r = fun(x, *a)
        return 0.5 * np.sum(r * r)

    slope = grad(cost)
    info = {}

    def solve(F, x0_vec):
        r_vec = lambda v: np.asarray(getval(fun(rav.unravel(v), *plain_args)), float)  # noqa
        jac = jacfwd(lambda v: fun(rav.unravel(v), *plain_args))
        kw = {} if bounds is None else {"bounds": bounds}
        sol = scipy.optimize.least_squares(
            r_vec, x0_vec, jac=lambda v: np.atleast_2d(np.asarray(jac(v), float)),
            method=method, ftol=ftol, xtol=xtol, gtol=gtol, max_nfev=max_nfev, **kw)
        if not sol.success:
            raise RuntimeError(f"least_squares: scipy.optimize.least_squares did not "
                               f"converge: {sol.message}")
        x = _polish_inside(F, np.asarray(sol.x, float), bounds)
        _check_bounds("least_squares", x, bounds)
        info.update(sol)
        return x

    x = custom_root(lambda x, *a: slope(x, *a), x0, solve, args=args, where="least_squares")
    r = fun(x, *args)
    return scipy.optimize.OptimizeResult(
        x=x, fun=r, cost=0.5 * np.sum(r * r),
        jac=np.atleast_2d(np.asarray(getval(jacfwd(lambda v: fun(v, *plain_args))(
            stop_gradient(x))))),
        success=True, status=info.get("status", 1), message=info.get("message", ""),
        nfev=info.get("nfev", 0), njev=info.get("njev", 0))


def _scalar_root(where, f, x_start, args, run):
    from .optimize import custom_root

    _callable(where, f)
    args = _tuple_args(where, args)

    def solve(F, x0_vec):
        g = lambda x: float(np.ravel(F(np.array([x])))[0])  # noqa: E731
        return np.array([run(g, F)], dtype=np.float64)

    return custom_root(lambda x, *a: f(x, *a), np.float64(x_start), solve, args=args,
                       where=where)


def brentq(f: Callable[..., Any], a: float, b: float, args: tuple[Any, ...] = (),
           xtol: float = 2e-12, rtol: float = 8.881784197001252e-16, maxiter: int = 100) -> Any:
    """A root of ``f(x, *args)`` in [a, b] by :func:`scipy.optimize.brentq`; differentiable.

    dx*/dp = −f_p/f_x at the root (:func:`custom_root`); the bracket is a constant.

    Args:
        f: ``f(x, *args) -> real scalar`` with a sign change on [a, b].
        a, b: the bracket (plain numbers; they get zero gradients).
        args: a tuple of extra arguments (float leaves differentiated).
        xtol, rtol, maxiter: passed to SciPy.

    Returns:
        The root as a 0-d float array.

    Raises:
        ValueError: no sign change on [a, b] (from SciPy); a closure over a traced value.
        numpy.linalg.LinAlgError: (backward) f_x = 0 at the root.

    Example:
        >>> import diffsci as ds
        >>> r = lambda c: brentq(lambda x, c: x ** 2 - c, 0.0, 3.0, args=(c,))
        >>> round(float(r(2.0)), 12), round(float(ds.grad(r)(2.0)), 10)  # 1 / (2 sqrt 2)
        (1.414213562373, 0.3535533906)
    """
    a, b = float(getval(a)), float(getval(b))

    def run(g, F):
        return scipy.optimize.brentq(g, a, b, xtol=xtol, rtol=rtol, maxiter=maxiter)

    return _scalar_root("brentq", f, 0.5 * (a + b), args, run)


def root_scalar(f: Callable[..., Any], args: tuple[Any, ...] = (), method: str | None = None,
                bracket: Sequence[float] | None = None, x0: float | None = None,
                x1: float | None = None, xtol: float | None = None, rtol: float | None = None,
                maxiter: int | None = None) -> Any:
    """A root of ``f(x, *args)`` by :func:`scipy.optimize.root_scalar`; differentiable in args.

    Methods that use derivatives (``newton``, ``halley``) get exact ones (forward mode).
    The root is differentiated by the IFT, dx*/dp = −f_p/f_x.

    Args:
        f: ``f(x, *args) -> real scalar``.
        args: a tuple of extra arguments (float leaves differentiated).
        method, bracket, x0, x1, xtol, rtol, maxiter: passed to SciPy (all plain).

    Returns:
        A :class:`scipy.optimize.RootResults`-like OptimizeResult with ``root``
        (differentiable), ``converged``, ``flag``, ``iterations``, ``function_calls``.

    Raises:
        RuntimeError: SciPy reports no convergence.
        TypeError: ``f`` not callable, ``args`` not a tuple.

    Example:
        >>> import diffsci as ds
        >>> g = lambda c: root_scalar(lambda x, c: x ** 3 - c, args=(c,), x0=1.0,
        ...                           method="newton").root
        >>> round(float(ds.grad(g)(8.0)), 12)  # 1 / (3 x²) at x = 2
        0.083333333333
    """
    info = {}
    kw = {k: v for k, v in dict(method=method, bracket=bracket, x0=x0, x1=x1, xtol=xtol,
                                rtol=rtol, maxiter=maxiter).items() if v is not None}
    start = x0 if x0 is not None else (0.5 * (bracket[0] + bracket[1]) if bracket else 0.0)

    def run(g, F):
        d1 = jacfwd(F)
        fprime = lambda x: float(np.ravel(d1(np.array([x])))[0])  # noqa: E731
        d2 = jacfwd(d1)
        fprime2 = lambda x: float(np.ravel(d2(np.array([x])))[0])  # noqa: E731
        extra = {}
        if method in ("newton", "halley") or (method is None and x1 is None
                                              and bracket is None):
            extra["fprime"] = fprime
        if method == "halley":
            extra["fprime2"] = fprime2
        sol = scipy.optimize.root_scalar(g, **kw, **extra)
        if not sol.converged:
            raise RuntimeError(f"root_scalar: scipy.optimize.root_scalar did not converge: "
                               f"{sol.flag}")
        info.update(converged=sol.converged, flag=sol.flag, iterations=sol.iterations,
                    function_calls=sol.function_calls, method=sol.method)
        return sol.root

    root = _scalar_root("root_scalar", f, float(getval(start)), args, run)
    return scipy.optimize.OptimizeResult(root=root, **info)
