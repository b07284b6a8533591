"""Monte Carlo kernels bound as a differentiable primitive with ``ds.custom_vjp``.

:func:`gbm_samples` returns the per-sample discounted payoffs (antithetic pairs averaged) as a
differentiable function of the six scalar inputs. Its forward rule runs the fused adjoint kernel
(samples and per-sample pathwise gradients in one sweep, ``_kernels.gbm_samples_adjoint``); its
backward rule is one matrix–vector product ``ḡᵀ G``; its JVP rule is ``G u``. Derivation:
``finance/DERIVATIONS.md`` §MC. First order only (the payoff's kinks have no useful second
derivative along a path); a traced cotangent is refused.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

import diffsci as ds
from diffsci.extend import getval

from . import _kernels

__all__ = ["McConfig", "gbm_samples", "heston_samples"]


@dataclass(frozen=True)
class McConfig:
    """The static part of a Monte Carlo run (a pytree with no leaves)."""

    w: float = field(metadata={"static": True})
    product: int = field(metadata={"static": True})
    n_steps: int = field(metadata={"static": True})
    n_samples: int = field(metadata={"static": True})
    antithetic: bool = field(metadata={"static": True})
    smoothing: float = field(metadata={"static": True})
    seed: int = field(metadata={"static": True})
    device: str = field(metadata={"static": True})


def _backend(cfg):
    if cfg.device == "cuda":
        from . import _cuda

        return _cuda
    return _kernels


def _plain_args(args, cfg):
    vals = [float(getval(a)) for a in args]
    return (np.uint64(cfg.seed), *vals, cfg.w, cfg.product, cfg.n_steps, cfg.n_samples,
            cfg.antithetic, cfg.smoothing)


@ds.custom_vjp
def gbm_samples(spot, strike, expiry, rate, dividend, vol, cfg):
    """Discounted payoff samples ``(n_samples,)`` of a GBM product (see ``_mc.mc_price``)."""
    args = _plain_args((spot, strike, expiry, rate, dividend, vol), cfg)
    return _backend(cfg).gbm_samples(*args)


def _first_order_only(xs):
    """An argument still traced here belongs to an outer differentiation: refuse it (the kernel
    would otherwise give a silently zero second derivative)."""
    if any(ds.extend.is_tracer(x) for x in xs):
        raise NotImplementedError(
            "finance Monte Carlo: the pathwise adjoint kernel is first order only; second-order "
            "Greeks need a smoothed payoff written in NumPy or finite differences of Greeks")


def _fwd(spot, strike, expiry, rate, dividend, vol, cfg):
    _first_order_only((spot, strike, expiry, rate, dividend, vol))
    args = _plain_args((spot, strike, expiry, rate, dividend, vol), cfg)
    samples, grads = _backend(cfg).gbm_samples_adjoint(*args)
    return samples, grads


def _bwd(grads, g):
    _first_order_only((g,))
    gbar = np.asarray(g, dtype=np.float64) @ grads
    return (*(np.float64(v) for v in gbar), None)


def _jvp(primals, tangents):
    *xs, cfg = primals
    samples, grads = _fwd(*xs, cfg)
    _first_order_only(tangents[:6])
    t = np.array([0.0 if u is None else float(getval(u)) for u in tangents[:6]])
    return samples, grads @ t


gbm_samples.defvjp(_fwd, _bwd)
gbm_samples.defjvp(_jvp)


# Heston (full-truncation Euler): the same binding for ten inputs (DERIVATIONS.md §HK).

def _heston_plain(args, cfg):
    vals = [float(getval(a)) for a in args]
    return (np.uint64(cfg.seed), *vals, cfg.w, cfg.n_steps, cfg.n_samples, cfg.antithetic)


@ds.custom_vjp
def heston_samples(spot, strike, expiry, rate, dividend, kappa, theta, sigma, rho, v0, cfg):
    """Discounted Heston European payoff samples ``(n_samples,)`` (see ``heston_mc_price``)."""
    args = (spot, strike, expiry, rate, dividend, kappa, theta, sigma, rho, v0)
    return _backend(cfg).heston_samples(*_heston_plain(args, cfg))


def _heston_fwd(*xs):
    *args, cfg = xs
    _first_order_only(args)
    return _backend(cfg).heston_samples_adjoint(*_heston_plain(args, cfg))


def _heston_jvp(primals, tangents):
    *xs, cfg = primals
    samples, grads = _heston_fwd(*xs, cfg)
    _first_order_only(tangents[:10])
    t = np.array([0.0 if u is None else float(getval(u)) for u in tangents[:10]])
    return samples, grads @ t


heston_samples.defvjp(_heston_fwd, _bwd)
heston_samples.defjvp(_heston_jvp)
