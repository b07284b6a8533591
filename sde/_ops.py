"""Model fast paths: Numba kernels bound as differentiable primitives with ``ds.custom_vjp``.

* :func:`ou_paths` — Euler–Maruyama paths of Ornstein–Uhlenbeck ``dX = θ(μ − X) dt + σ dW``.
* :func:`gbm_paths` — exact geometric Brownian motion ``X₀ exp((μ − σ²/2)t + σW_t)``.

Both take the Brownian increments explicitly (plain arrays: the path is fixed), validate once
here, run the ``_kernels`` forward kernel (or the numba.cuda one with ``device="cuda"``) and
differentiate with the hand-written adjoint kernel (``sde/DERIVATIONS.md`` §3).
"""

from __future__ import annotations

import numpy as np

import diffsci as ds
from diffsci.devices import check_device
from diffsci.extend import getval

from . import _kernels

__all__ = ["gbm_paths", "ou_paths"]


def _scalar(x, name, who):
    v = np.asarray(getval(x))
    if v.shape != () or v.dtype.kind not in "fiu":
        raise ValueError(f"{who}: {name} must be a real scalar, got shape {v.shape}")
    return float(v)


def _vector(x, n, name, who):
    v = np.asarray(getval(x), dtype=np.float64)
    if v.shape != (n,):
        raise ValueError(f"{who}: {name} must have shape ({n},) (one per path), got {v.shape}")
    return v


@ds.custom_vjp
def _ou(y0, theta, mu, sigma, dt, dW):
    return _kernels.ou_euler(y0, float(theta), float(mu), float(sigma), dt, dW)


def _ou_fwd(y0, theta, mu, sigma, dt, dW):
    y = _kernels.ou_euler(y0, float(theta), float(mu), float(sigma), dt, dW)
    return y, (y, float(theta), float(mu), float(sigma), dt, dW)


def _plain_cotangent(g, who):
    """The kernels' adjoints are first-order only: refuse a traced cotangent (forward mode or
    second order would otherwise get a silently zero derivative)."""
    if ds.extend.is_tracer(g):
        raise NotImplementedError(
            f"{who}: the hand-written adjoint kernel is reverse mode, first order only; for "
            f"forward mode or higher derivatives use sde.sdeint (plain NumPy steps)"
        )
    return np.asarray(g, dtype=np.float64)


def _ou_bwd(res, g):
    y, theta, mu, sigma, dt, dW = res
    y0b, tb, mb, sb = _kernels.ou_euler_adjoint(y, theta, mu, sigma, dt, dW,
                                                _plain_cotangent(g, "ou_paths"))
    return y0b, tb, mb, sb, None, None


_ou.defvjp(_ou_fwd, _ou_bwd)


def ou_paths(y0, theta, mu, sigma, dt, dW, device="cpu"):
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
    dW = np.asarray(dW, dtype=np.float64)
    if dW.ndim != 2:
        raise ValueError(f"ou_paths: dW must have shape (paths, n), got {dW.shape}")
    _vector(y0, dW.shape[0], "y0", "ou_paths")
    for name, v in (("theta", theta), ("mu", mu), ("sigma", sigma)):
        _scalar(v, name, "ou_paths")
    dt = _scalar(dt, "dt", "ou_paths")
    if not dt > 0:
        raise ValueError(f"ou_paths: dt must be > 0, got {dt}")
    if device == "cuda":
        from . import _cuda

        return _cuda.ou_euler(np.asarray(getval(y0), dtype=np.float64), float(getval(theta)),
                              float(getval(mu)), float(getval(sigma)), dt, dW)
    if not any(ds.extend.is_tracer(v) for v in (y0, theta, mu, sigma)):
        y0 = np.asarray(y0, dtype=np.float64)
    return _ou(y0, theta, mu, sigma, dt, dW)


@ds.custom_vjp
def _gbm(y0, mu, sigma, t, W):
    return _kernels.gbm_exact(y0, float(mu), float(sigma), t, W)


def _gbm_fwd(y0, mu, sigma, t, W):
    y = _kernels.gbm_exact(y0, float(mu), float(sigma), t, W)
    return y, (y, y0, float(mu), float(sigma), t, W)


def _gbm_bwd(res, g):
    y, y0, mu, sigma, t, W = res
    y0b, mb, sb = _kernels.gbm_exact_adjoint(y, y0, mu, sigma, t, W,
                                             _plain_cotangent(g, "gbm_paths"))
    return y0b, mb, sb, None, None


_gbm.defvjp(_gbm_fwd, _gbm_bwd)


def gbm_paths(y0, mu, sigma, t, W, device="cpu"):
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
    W = np.asarray(W, dtype=np.float64)
    t = np.asarray(t, dtype=np.float64)
    if W.ndim != 2 or t.shape != (W.shape[1],):
        raise ValueError(f"gbm_paths: need W (paths, n) and t (n,), got {W.shape} and {t.shape}")
    _vector(y0, W.shape[0], "y0", "gbm_paths")
    _scalar(mu, "mu", "gbm_paths")
    _scalar(sigma, "sigma", "gbm_paths")
    if device == "cuda":
        from . import _cuda

        return _cuda.gbm_exact(np.asarray(getval(y0), dtype=np.float64), float(getval(mu)),
                               float(getval(sigma)), t, W)
    if not any(ds.extend.is_tracer(v) for v in (y0, mu, sigma)):
        y0 = np.asarray(y0, dtype=np.float64)
    return _gbm(y0, mu, sigma, t, W)
