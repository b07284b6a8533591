"""Statistics and fitting: ensemble statistics, the Euler pseudo-likelihood, moment matching.

All three are plain NumPy code on the solver's output layout ``(len(ts), batch, d)``, so they are
differentiable (by diffsci) in the paths and in the parameters.

References:
    Euler pseudo-likelihood: P. E. Kloeden and E. Platen, 1992, §9.1 (the Euler transition);
    S. M. Iacus, *Simulation and Inference for Stochastic Differential Equations*, Springer 2008,
    §3.3.1 (eq. 3.10). Moment matching for neural SDEs: X. Li et al., AISTATS 2020, §9.
Quantiles use the linear interpolation of order statistics of R. J. Hyndman and Y. Fan, "Sample
quantiles in statistical packages", Am. Stat. 50(4), 1996, definition 7 (NumPy's default).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from diffsci.extend import getval, is_tracer, observed
from diffsci.typing import Array, ArrayLike

from ._model import SDE, Calculus, Noise

__all__ = ["EnsembleStats", "ensemble_stats", "moment_loss", "pseudo_loglik"]


def _paths(ys, who, argument="ys"):
    shape = np.shape(getval(ys))
    if len(shape) != 3:
        raise ValueError(f"{who}: {argument} must have shape (len(ts), batch, d), got {shape}")
    return shape


@dataclass(frozen=True)
class EnsembleStats:
    """Statistics over paths at each save time: ``mean``, ``var`` of shape ``(len(ts), d)``;
    ``quantiles`` of shape ``(len(levels), len(ts), d)`` at probabilities ``levels``."""

    mean: Any
    var: Any
    quantiles: Any
    levels: tuple[float, ...]

    def quantile(self, level: float) -> np.ndarray:
        """The quantile at one of ``levels``, ``(len(ts), d)``."""
        for i, q in enumerate(self.levels):
            if math.isclose(q, level):
                return self.quantiles[i]
        raise ValueError(f"EnsembleStats.quantile: level {level} is not among {self.levels}")


def ensemble_stats(ys: ArrayLike,
                   quantiles: Sequence[float] = (0.025, 0.5, 0.975)) -> EnsembleStats:
    """Mean, unbiased variance and quantiles over the paths of ``ys`` at each save time.

    Args:
        ys: paths ``(len(ts), batch, d)`` (the output of :func:`sde.sdeint`), batch >= 2.
        quantiles: probabilities in [0, 1] (linear interpolation of order statistics, as
            ``numpy.quantile``; differentiable almost everywhere, like the sort).

    Returns:
        :class:`EnsembleStats`.

    Raises:
        ValueError: ys is not 3-D or has fewer than 2 paths; a probability outside [0, 1].

    Example:
        >>> ys = np.random.default_rng(0).standard_normal((3, 1000, 2))
        >>> st = ensemble_stats(ys)
        >>> st.mean.shape, st.quantiles.shape
        ((3, 2), (3, 3, 2))
    """
    _, n, _ = _paths(ys, "ensemble_stats")
    if n < 2:
        raise ValueError(f"ensemble_stats: need at least 2 paths (batch axis), got {n}")
    levels = tuple(float(q) for q in np.atleast_1d(quantiles))
    if any(not 0.0 <= q <= 1.0 for q in levels):
        raise ValueError(f"ensemble_stats: quantiles must lie in [0, 1], got {levels}")
    mean = np.mean(ys, axis=1)
    var = np.sum((ys - mean[:, None, :]) ** 2, axis=1) / (n - 1)
    qs = []
    if levels:
        srt = np.sort(ys, axis=1)
        for q in levels:
            pos = q * (n - 1)
            lo = min(int(math.floor(pos)), n - 2)
            frac = pos - lo
            qs.append(srt[:, lo] * (1.0 - frac) + srt[:, lo + 1] * frac)
    return EnsembleStats(mean, var, np.stack(qs) if qs else None, levels)


def moment_loss(ys: ArrayLike, target: ArrayLike | EnsembleStats,
                weights: tuple[float, float] = (1.0, 1.0)) -> Array:
    """Moment matching: ``w₀·mean((m − m*)²) + w₁·mean((v − v*)²)`` over save times and d.

    Args:
        ys: model paths ``(len(ts), batch, d)`` (differentiable).
        target: observed paths ``(len(ts), n, d)`` (their statistics are taken, not
            differentiated) or an :class:`EnsembleStats` of the data.
        weights: ``(w_mean, w_var)``.

    Returns:
        The scalar loss.

    Raises:
        ValueError: shapes of ys and the target statistics differ.
    """
    model = ensemble_stats(ys, quantiles=())
    if not isinstance(target, EnsembleStats):
        target = ensemble_stats(np.asarray(getval(target), dtype=float), quantiles=())
    if np.shape(getval(target.mean)) != np.shape(getval(model.mean)):
        raise ValueError(
            f"moment_loss: target statistics have shape {np.shape(getval(target.mean))}, the "
            f"model's {np.shape(getval(model.mean))} (len(ts), d)"
        )
    w_mean, w_var = weights
    return (w_mean * np.mean((model.mean - target.mean) ** 2)
            + w_var * np.mean((model.var - target.var) ** 2))


def _ito_drift(sde, t, y, params):
    f = sde.f(t, y, params)
    if sde.calculus is Calculus.STRATONOVICH and sde.noise is not Noise.ADDITIVE:
        from ._adjoint import ito_correction

        f = f + ito_correction(sde, t, y, params)
    return f


def pseudo_loglik(sde: SDE, ts: ArrayLike, ys: ArrayLike, params: Any = None, *,
                  time_homogeneous: bool = False) -> Array:
    """The Euler (Gaussian transition) log pseudo-likelihood of discretely observed paths.

    ``log L = Σ_paths Σ_k log N(y_{k+1}; y_k + f(t_k, y_k)Δ_k, Σ(t_k, y_k)Δ_k)`` with ``f`` the
    Itô drift (a Stratonovich SDE's drift is converted exactly) and ``Σ = g gᵀ`` (``diag(g²)``
    for diagonal noise). Consistent as the observation spacing Δ → 0 (Iacus 2008, §3.3.1).

    Args:
        sde: the :class:`SDE`; its drift and diffusion as in :func:`sde.sdeint`.
        ts: observation times, strictly increasing, ``(K,)``.
        ys: observations ``(K, batch, d)`` (or ``(K, d)`` for one path).
        params: the parameters (differentiable: maximise this over them).
        time_homogeneous: evaluate drift and diffusion once on all ``(K − 1)·batch`` rows at
            ``t = ts[0]`` instead of once per interval — much faster for long records, valid
            when f and g do not depend on t.

    Returns:
        The scalar log pseudo-likelihood (summed over paths and intervals).

    Raises:
        ValueError: bad ts, ys shape, or a transition covariance that is singular by
            construction (scalar noise with d > 1, or m < d for general/additive noise).

    Example:
        >>> import diffsci as ds
        >>> from sde import sdeint
        >>> ou = SDE(lambda t, y, p: p[0] * (p[1] - y), lambda t, y, p: p[2] + 0 * y)
        >>> ys = sdeint(ou, np.zeros((50, 1)), np.linspace(0, 5, 501), [2., 1., .5], seed=0)
        >>> ds.grad(lambda p: pseudo_loglik(ou, np.linspace(0, 5, 501), ys, p))(
        ...     np.array([2., 1., .5])).shape
        (3,)
    """
    if not isinstance(sde, SDE):
        raise TypeError(f"pseudo_loglik: sde must be an sde.SDE, got {type(sde).__name__}")
    # the times may be an input of a jitted function: checked by a guard, used traced (a
    # plain copy would be a constant of the trace: the time steps of the first call)
    if observed(_not_increasing, ts):
        raise ValueError("pseudo_loglik: ts must be a strictly increasing 1-D array of >= 2 times")
    ts = ts if is_tracer(ts) else np.asarray(ts, dtype=np.float64)
    if np.ndim(getval(ys)) == 2:
        ys = ys[:, None, :]
    K, batch, d = _paths(ys, "pseudo_loglik")
    if K != np.size(getval(ts)):
        raise ValueError(f"pseudo_loglik: ys has {K} times, ts has {np.size(getval(ts))}")
    full = sde.noise in (Noise.ADDITIVE, Noise.GENERAL)
    if sde.noise is Noise.SCALAR and d > 1:
        raise ValueError(
            f"pseudo_loglik: scalar noise with d = {d} > 1 has a singular (rank-1) Euler "
            f"transition covariance; use d = 1 or a diagonal/general noise model"
        )
    dts = np.diff(ts)
    if time_homogeneous:
        x = np.reshape(ys[:-1], ((K - 1) * batch, d))
        r = np.reshape(ys[1:], ((K - 1) * batch, d)) - x
        h = np.repeat(dts, batch)[:, None]
        return _gauss(sde, ts[0], x, r, h, params, full)
    total = 0.0
    for k in range(K - 1):
        total = total + _gauss(sde, ts[k], ys[k], ys[k + 1] - ys[k], dts[k], params, full)
    return total


def _not_increasing(ts):
    ts = np.asarray(ts, dtype=np.float64)
    return bool(ts.ndim != 1 or ts.size < 2 or np.any(np.diff(ts) <= 0))


def _gauss(sde, t, x, r, h, params, full):
    """Σ over rows of log N(r; f(t, x)h, Σ(t, x)h)."""
    res = r - _ito_drift(sde, t, x, params) * h
    g = sde.g(t, x, params)
    if not full:
        var = g * g * h
        return -0.5 * np.sum(res * res / var + np.log(2.0 * np.pi * var))
    d, m = np.shape(getval(g))[1:]
    if m < d:
        raise ValueError(
            f"pseudo_loglik: diffusion of shape (batch, {d}, {m}) has m < d: the Euler transition "
            f"covariance g gᵀ is singular"
        )
    cov = np.matmul(g, np.swapaxes(g, 1, 2)) * (np.reshape(h, (-1, 1, 1)) if np.ndim(h) else h)
    sol = np.linalg.solve(cov, res[:, :, None])[:, :, 0]
    logdet = np.linalg.slogdet(cov)[1]
    return -0.5 * (np.sum(res * sol) + np.sum(logdet) + res.shape[0] * d * math.log(2 * np.pi))
