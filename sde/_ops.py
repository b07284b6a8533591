"""Model fast paths: Numba kernels bound as differentiable primitives with ``ds.custom_vjp``.

* :func:`ou_paths` — Euler–Maruyama paths of Ornstein–Uhlenbeck ``dX = θ(μ − X) dt + σ dW``.
* :func:`gbm_paths` — exact geometric Brownian motion ``X₀ exp((μ − σ²/2)t + σW_t)``.
* :func:`cir_paths` — full-truncation Euler paths of Cox–Ingersoll–Ross
  ``dX = κ(θ − X) dt + σ√X dW``.
* :func:`heston_paths` — full-truncation (log-)Euler paths of the Heston model.
* :func:`langevin_paths` — Euler paths of underdamped Langevin in a harmonic or double-well
  potential.

Both take the Brownian increments explicitly (plain arrays: the path is fixed), validate once
here, run the ``_kernels`` forward kernel (or the numba.cuda one with ``device="cuda"``) and
differentiate with the hand-written adjoint kernel (``sde/DERIVATIONS.md`` §3–§4).
"""

from __future__ import annotations

import numpy as np

import diffsci as ds
from diffsci.devices import check_device
from diffsci.extend import getval
from diffsci.typing import Array, ArrayLike

from . import _kernels, _validate

__all__ = ["cir_paths", "gbm_paths", "heston_paths", "langevin_paths", "ou_paths"]


def _scalar(x, name, who):
    v = np.asarray(getval(x))
    if v.shape != () or v.dtype.kind not in "fiu":
        what = "bool" if v.dtype.kind == "b" else f"dtype {v.dtype}"
        raise ValueError(f"{who}: {name} must be a real scalar, got shape {v.shape} ({what})")
    if not ds.extend.observed(np.isfinite, x):  # under diffsci.jit: checked at every call
        raise ValueError(f"{who}: {name} must be finite, got {float(v)}")
    return float(v)


def _forward_only(who, **args):
    """device="cuda" runs the forward kernel only: a traced argument would get a silently zero
    gradient (the kernel's output is plain), so it is refused."""
    traced = [n for n, v in args.items() if ds.extend.is_tracer(v)]
    if traced:
        raise TypeError(f"{who}: device='cuda' runs the forward kernel only (no adjoint), got "
                        f"traced {', '.join(traced)}; differentiate with device='cpu' (the "
                        f"Numba adjoint kernel)")


def _vector(x, n, name, who):
    v = np.asarray(getval(_validate.real_array(x, name, who)), dtype=np.float64)
    if v.shape != (n,):
        raise ValueError(f"{who}: {name} must have shape ({n},) (one per path), got {v.shape}")
    return v


@ds.custom_vjp
def _ou(y0, theta, mu, sigma, dt, dW):
    return _kernels.ou_euler(y0, float(theta), float(mu), float(sigma), dt, dW)


def _ou_fwd(y0, theta, mu, sigma, dt, dW):
    _plain_inputs("ou_paths", y0, theta, mu, sigma)
    y = _kernels.ou_euler(y0, float(theta), float(mu), float(sigma), dt, dW)
    return y, (y, float(theta), float(mu), float(sigma), dt, dW)


def _first_order_error(who):
    return NotImplementedError(
        f"{who}: the hand-written adjoint kernel is reverse mode, first order only; for "
        f"forward mode or higher derivatives use sde.sdeint (plain NumPy steps)"
    )


def _plain_cotangent(g, who):
    """The kernels' adjoints are first-order only: refuse a traced cotangent (forward mode or
    second order would otherwise get a silently zero derivative)."""
    if ds.extend.is_tracer(g):
        raise _first_order_error(who)
    return np.asarray(g, dtype=np.float64)


def _plain_inputs(who, *values):
    """A fwd rule that receives values traced by an outer differentiation (grad of grad,
    hessian, jvp of grad) is asked for a higher derivative: refuse it like a traced cotangent
    (the kernel runs on plain values)."""
    if any(ds.extend.is_tracer(v) for v in values):
        raise _first_order_error(who)


def _ou_bwd(res, g):
    y, theta, mu, sigma, dt, dW = res
    y0b, tb, mb, sb = _kernels.ou_euler_adjoint(y, theta, mu, sigma, dt, dW,
                                                _plain_cotangent(g, "ou_paths"))
    return y0b, tb, mb, sb, None, None


_ou.defvjp(_ou_fwd, _ou_bwd)


def ou_paths(y0: ArrayLike, theta: ArrayLike, mu: ArrayLike, sigma: ArrayLike, dt: float,
             dW: ArrayLike, device: str = "cpu") -> Array:
    """Euler–Maruyama paths of Ornstein–Uhlenbeck, one row per path (reverse mode, first order).

    Args:
        y0: initial values, shape ``(paths,)``.
        theta, mu, sigma: real scalars (differentiable).
        dt: the step (> 0).
        dW: Brownian increments, shape ``(paths, n)`` (fixed, not differentiated).
        device: ``"cpu"`` (Numba, with the adjoint kernel) or ``"cuda"`` (forward only).

    Returns:
        ``(paths, n + 1)`` paths.

    Example:
        >>> dW = np.random.default_rng(0).normal(0, 0.1, (4, 100))
        >>> ou_paths(np.zeros(4), 2.0, 1.0, 0.3, 0.01, dW).shape
        (4, 101)
    """
    device = check_device(device)
    dW = _increments(dW, "dW", "ou_paths")
    _vector(y0, dW.shape[0], "y0", "ou_paths")
    for name, v in (("theta", theta), ("mu", mu), ("sigma", sigma)):
        _scalar(v, name, "ou_paths")
    dt = _positive_dt(dt, "ou_paths")
    if device == "cuda":
        from . import _cuda

        _forward_only("ou_paths", y0=y0, theta=theta, mu=mu, sigma=sigma)
        return _cuda.ou_euler(np.asarray(getval(y0), dtype=np.float64), float(getval(theta)),
                              float(getval(mu)), float(getval(sigma)), dt, dW)
    if not any(ds.extend.is_tracer(v) for v in (y0, theta, mu, sigma)):
        y0 = np.asarray(y0, dtype=np.float64)
    return _ou(y0, theta, mu, sigma, dt, dW)


@ds.custom_vjp
def _gbm(y0, mu, sigma, t, W):
    return _kernels.gbm_exact(y0, float(mu), float(sigma), t, W)


def _gbm_fwd(y0, mu, sigma, t, W):
    _plain_inputs("gbm_paths", y0, mu, sigma)
    y = _kernels.gbm_exact(y0, float(mu), float(sigma), t, W)
    return y, (y, y0, float(mu), float(sigma), t, W)


def _gbm_bwd(res, g):
    y, y0, mu, sigma, t, W = res
    y0b, mb, sb = _kernels.gbm_exact_adjoint(y, y0, mu, sigma, t, W,
                                             _plain_cotangent(g, "gbm_paths"))
    return y0b, mb, sb, None, None


_gbm.defvjp(_gbm_fwd, _gbm_bwd)


def gbm_paths(y0: ArrayLike, mu: ArrayLike, sigma: ArrayLike, t: ArrayLike, W: ArrayLike,
              device: str = "cpu") -> Array:
    """Exact GBM on a Brownian path: ``y[p, k] = y0[p] exp((μ − σ²/2) t[k] + σ W[p, k])``.

    Args:
        y0: initial values ``(paths,)``, non-zero.
        mu, sigma: real scalars (differentiable).
        t: times ``(n,)``; W: the Brownian path at those times ``(paths, n)`` (fixed).
        device: ``"cpu"`` or ``"cuda"`` (forward only).

    Returns:
        ``(paths, n)``.
    """
    device = check_device(device)
    W = _increments(W, "W", "gbm_paths")
    _validate.not_traced(t, "t", "gbm_paths", "the times are fixed")
    t = np.asarray(_validate.real_array(t, "t", "gbm_paths"), dtype=np.float64)
    if W.ndim != 2 or t.shape != (W.shape[1],):
        raise ValueError(f"gbm_paths: need W (paths, n) and t (n,), got {W.shape} and {t.shape}")
    _vector(y0, W.shape[0], "y0", "gbm_paths")
    _scalar(mu, "mu", "gbm_paths")
    _scalar(sigma, "sigma", "gbm_paths")
    if device == "cuda":
        from . import _cuda

        _forward_only("gbm_paths", y0=y0, mu=mu, sigma=sigma)
        return _cuda.gbm_exact(np.asarray(getval(y0), dtype=np.float64), float(getval(mu)),
                               float(getval(sigma)), t, W)
    if not any(ds.extend.is_tracer(v) for v in (y0, mu, sigma)):
        y0 = np.asarray(y0, dtype=np.float64)
    return _gbm(y0, mu, sigma, t, W)


def _increments(dW, name, who, shape=None):
    _validate.not_traced(dW, name, who, "the Brownian path is fixed")
    dW = np.asarray(_validate.real_array(dW, name, who), dtype=np.float64)
    if dW.ndim != 2 or (shape is not None and dW.shape != shape):
        want = "(paths, n)" if shape is None else str(shape)
        raise ValueError(f"{who}: {name} must have shape {want}, got {dW.shape}")
    return dW


def _positive_dt(dt, who):
    _validate.not_traced(dt, "dt", who, "the step is fixed")
    dt = _scalar(dt, "dt", who)
    if not dt > 0:
        raise ValueError(f"{who}: dt must be > 0, got {dt}")
    return dt


@ds.custom_vjp
def _cir(y0, kappa, theta, sigma, dt, dW):
    return _kernels.cir_euler(y0, float(kappa), float(theta), float(sigma), dt, dW)


def _cir_fwd(y0, kappa, theta, sigma, dt, dW):
    _plain_inputs("cir_paths", y0, kappa, theta, sigma)
    y = _kernels.cir_euler(y0, float(kappa), float(theta), float(sigma), dt, dW)
    return y, (y, float(kappa), float(theta), float(sigma), dt, dW)


def _cir_bwd(res, g):
    y, kappa, theta, sigma, dt, dW = res
    y0b, kb, tb, sb = _kernels.cir_euler_adjoint(y, kappa, theta, sigma, dt, dW,
                                                 _plain_cotangent(g, "cir_paths"))
    return y0b, kb, tb, sb, None, None


_cir.defvjp(_cir_fwd, _cir_bwd)


def cir_paths(y0: ArrayLike, kappa: ArrayLike, theta: ArrayLike, sigma: ArrayLike, dt: float,
              dW: ArrayLike, device: str = "cpu") -> Array:
    """Full-truncation Euler paths of CIR, ``dX = κ(θ − X) dt + σ√X dW`` (reverse mode).

    ``x_{k+1} = x_k + κ(θ − x_k⁺)Δ + σ√(x_k⁺) ΔW_k`` with ``x⁺ = max(x, 0)``: the scheme with the
    smallest bias among the Euler fixes compared by Lord, Koekkoek & van Dijk (2010).

    Args:
        y0: initial values ``(paths,)``.
        kappa, theta, sigma: real scalars (differentiable).
        dt: the step (> 0); dW: Brownian increments ``(paths, n)`` (fixed).
        device: ``"cpu"`` (Numba, with the adjoint kernel) or ``"cuda"`` (forward only).

    Returns:
        ``(paths, n + 1)`` paths.

    Raises:
        ValueError: shapes, non-scalar parameters, dt <= 0 (naming the argument).

    Example:
        >>> dW = np.random.default_rng(0).normal(0, 0.1, (4, 100))
        >>> cir_paths(np.full(4, 0.04), 2.0, 0.04, 0.3, 0.01, dW).shape
        (4, 101)

    References:
        R. Lord, R. Koekkoek, D. van Dijk, "A comparison of biased simulation schemes for
        stochastic volatility models", Quant. Finance 10(2), 2010, Table 1 (full truncation).
        Adjoint: ``sde/DERIVATIONS.md`` §4.
    """
    who = "cir_paths"
    device = check_device(device)
    dW = _increments(dW, "dW", who)
    _vector(y0, dW.shape[0], "y0", who)
    for name, v in (("kappa", kappa), ("theta", theta), ("sigma", sigma)):
        _scalar(v, name, who)
    dt = _positive_dt(dt, who)
    if device == "cuda":
        from . import _cuda

        _forward_only("cir_paths", y0=y0, kappa=kappa, theta=theta, sigma=sigma)
        return _cuda.cir_euler(np.asarray(getval(y0), dtype=np.float64), float(getval(kappa)),
                               float(getval(theta)), float(getval(sigma)), dt, dW)
    if not any(ds.extend.is_tracer(v) for v in (y0, kappa, theta, sigma)):
        y0 = np.asarray(y0, dtype=np.float64)
    return _cir(y0, kappa, theta, sigma, dt, dW)


@ds.custom_vjp
def _heston(s0, v0, mu, kappa, theta, xi, rho, dt, dW1, dZ):
    return _kernels.heston_euler(s0, v0, *map(float, (mu, kappa, theta, xi, rho)), dt, dW1, dZ)


def _heston_fwd(s0, v0, mu, kappa, theta, xi, rho, dt, dW1, dZ):
    _plain_inputs("heston_paths", s0, v0, mu, kappa, theta, xi, rho)
    p = tuple(map(float, (mu, kappa, theta, xi, rho)))
    S, V = _kernels.heston_euler(s0, v0, *p, dt, dW1, dZ)
    return (S, V), (S, V, p, dt, dW1, dZ)


def _heston_bwd(res, g):
    S, V, p, dt, dW1, dZ = res
    gS, gV = g
    out = _kernels.heston_euler_adjoint(S, V, *p, dt, dW1, dZ,
                                        _plain_cotangent(gS, "heston_paths"),
                                        _plain_cotangent(gV, "heston_paths"))
    return (*out, None, None, None)


_heston.defvjp(_heston_fwd, _heston_bwd)


def heston_paths(s0: ArrayLike, v0: ArrayLike, mu: ArrayLike, kappa: ArrayLike,
                 theta: ArrayLike, xi: ArrayLike, rho: ArrayLike, dt: float, dW1: ArrayLike,
                 dZ: ArrayLike, device: str = "cpu") -> tuple[Array, Array]:
    """Full-truncation Euler paths of Heston: ``(S, v)``, each ``(paths, n + 1)`` (reverse mode).

    ``dS = μS dt + √v S dW¹``, ``dv = κ(θ − v) dt + ξ√v dW²``, ``d⟨W¹, W²⟩ = ρ dt``, stepped as

        log S_{k+1} = log S_k + (μ − v_k⁺/2)Δ + √(v_k⁺) ΔW¹_k
        v_{k+1} = v_k + κ(θ − v_k⁺)Δ + ξ√(v_k⁺) (ρ ΔW¹_k + √(1 − ρ²) ΔZ_k)

    Args:
        s0, v0: initial prices (> 0) and variances, ``(paths,)`` each.
        mu, kappa, theta, xi, rho: real scalars (differentiable); ``|ρ| < 1``.
        dt: the step (> 0); dW1, dZ: independent Brownian increments ``(paths, n)`` (fixed).
        device: ``"cpu"`` or ``"cuda"`` (forward only).

    Raises:
        ValueError: shapes, s0 <= 0, |rho| >= 1, dt <= 0 (naming the argument).

    Example:
        >>> rng = np.random.default_rng(0)
        >>> dW1, dZ = rng.normal(0, 0.1, (2, 4, 100))
        >>> S, v = heston_paths(np.ones(4), np.full(4, 0.04), 0.0, 2.0, 0.04, 0.3, -0.7, 0.01,
        ...                     dW1, dZ)
        >>> S.shape, v.shape
        ((4, 101), (4, 101))

    References:
        S. L. Heston, Rev. Financ. Stud. 6(2), 1993; Lord, Koekkoek & van Dijk 2010 (full
        truncation). Adjoint: ``sde/DERIVATIONS.md`` §4.
    """
    who = "heston_paths"
    device = check_device(device)
    dW1 = _increments(dW1, "dW1", who)
    dZ = _increments(dZ, "dZ", who, dW1.shape)
    n_paths = dW1.shape[0]
    if np.any(_vector(s0, n_paths, "s0", who) <= 0):
        raise ValueError(f"{who}: s0 must be > 0 (the scheme steps log S)")
    _vector(v0, n_paths, "v0", who)
    for name, v in (("mu", mu), ("kappa", kappa), ("theta", theta), ("xi", xi)):
        _scalar(v, name, who)
    if not abs(_scalar(rho, "rho", who)) < 1.0:
        raise ValueError(f"{who}: rho must satisfy |rho| < 1, got {float(getval(rho))}")
    dt = _positive_dt(dt, who)
    if device == "cuda":
        from . import _cuda

        _forward_only("heston_paths", s0=s0, v0=v0, mu=mu, kappa=kappa, theta=theta, xi=xi, rho=rho)
        return _cuda.heston_euler(np.asarray(getval(s0), dtype=np.float64),
                                  np.asarray(getval(v0), dtype=np.float64),
                                  *(float(getval(v)) for v in (mu, kappa, theta, xi, rho)), dt,
                                  dW1, dZ)
    if not any(ds.extend.is_tracer(v) for v in (s0, v0, mu, kappa, theta, xi, rho)):
        s0, v0 = np.asarray(s0, dtype=np.float64), np.asarray(v0, dtype=np.float64)
    return _heston(s0, v0, mu, kappa, theta, xi, rho, dt, dW1, dZ)


@ds.custom_vjp
def _langevin(x0, v0, a, b, gamma, sigma, dt, dW):
    return _kernels.langevin_euler(x0, v0, *map(float, (a, b, gamma, sigma)), dt, dW)


def _langevin_fwd(x0, v0, a, b, gamma, sigma, dt, dW):
    _plain_inputs("langevin_paths", x0, v0, a, b, gamma, sigma)
    p = tuple(map(float, (a, b, gamma, sigma)))
    X, V = _kernels.langevin_euler(x0, v0, *p, dt, dW)
    return (X, V), (X, V, p, dt, dW)


def _langevin_bwd(res, g):
    X, V, p, dt, dW = res
    gX, gV = g
    out = _kernels.langevin_euler_adjoint(X, V, *p, dt, dW,
                                          _plain_cotangent(gX, "langevin_paths"),
                                          _plain_cotangent(gV, "langevin_paths"))
    return (*out, None, None)


_langevin.defvjp(_langevin_fwd, _langevin_bwd)


def langevin_paths(x0: ArrayLike, v0: ArrayLike, a: ArrayLike, b: ArrayLike, gamma: ArrayLike,
                   sigma: ArrayLike, dt: float, dW: ArrayLike,
                   device: str = "cpu") -> tuple[Array, Array]:
    """Euler paths of underdamped Langevin: ``(x, v)``, each ``(paths, n + 1)`` (reverse mode).

    ``dx = v dt``, ``dv = (−U′(x) − γv) dt + σ dW`` in the quartic potential
    ``U(x) = a x⁴/4 + b x²/2`` — harmonic for ``a = 0`` (stiffness ``b``), a double well with
    minima at ``±√(−b/a)`` for ``a > 0 > b`` (``U = (x² − 1)²`` is ``a = 4, b = −4``) — stepped as

        x_{k+1} = x_k + v_k Δ,   v_{k+1} = v_k − (a x_k³ + b x_k + γ v_k) Δ + σ ΔW_k

    (the generic solver's Euler on the 2-D state, to round-off).

    Args:
        x0, v0: initial positions and velocities, ``(paths,)`` each.
        a, b, gamma, sigma: real scalars (differentiable).
        dt: the step (> 0); dW: Brownian increments ``(paths, n)`` (fixed, not differentiated).
        device: ``"cpu"`` (Numba, with the adjoint kernel) or ``"cuda"`` (forward only).

    Returns:
        ``(x, v)``, each ``(paths, n + 1)``.

    Raises:
        ValueError: shapes, non-scalar parameters, dt <= 0 (naming the argument).

    Example:
        >>> dW = np.random.default_rng(0).normal(0, 0.1, (4, 100))
        >>> x, v = langevin_paths(np.ones(4), np.zeros(4), 4.0, -4.0, 0.5, 0.7, 0.01, dW)
        >>> x.shape, v.shape
        ((4, 101), (4, 101))

    References:
        Adjoint: ``sde/DERIVATIONS.md`` §5.
    """
    who = "langevin_paths"
    device = check_device(device)
    dW = _increments(dW, "dW", who)
    _vector(x0, dW.shape[0], "x0", who)
    _vector(v0, dW.shape[0], "v0", who)
    for name, v in (("a", a), ("b", b), ("gamma", gamma), ("sigma", sigma)):
        _scalar(v, name, who)
    dt = _positive_dt(dt, who)
    if device == "cuda":
        from . import _cuda

        _forward_only("langevin_paths", x0=x0, v0=v0, a=a, b=b, gamma=gamma, sigma=sigma)
        return _cuda.langevin_euler(np.asarray(getval(x0), dtype=np.float64),
                                    np.asarray(getval(v0), dtype=np.float64),
                                    *(float(getval(v)) for v in (a, b, gamma, sigma)), dt, dW)
    if not any(ds.extend.is_tracer(v) for v in (x0, v0, a, b, gamma, sigma)):
        x0, v0 = np.asarray(x0, dtype=np.float64), np.asarray(v0, dtype=np.float64)
    return _langevin(x0, v0, a, b, gamma, sigma, dt, dW)
