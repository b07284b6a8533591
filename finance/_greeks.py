"""Greeks of any pricer in one call: AD for closed forms, the hand-written tree sweep for
:func:`tree_price`, pathwise/likelihood-ratio estimators with standard errors for Monte Carlo.

Closed forms: reverse mode for first order, forward-over-reverse for second order. The pricers
are elementwise in their batch, so the gradient of ``sum(price)`` with respect to an argument
broadcast to the batch shape is the elementwise first derivative, and one JVP of that gradient
along ``ones`` in one argument gives an elementwise column of second derivatives. Every numeric
model input is differentiated, the fields of a :class:`HestonParams` included.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import numpy as np

import diffsci as ds

from ._model import HestonParams
from ._validate import plain

__all__ = ["GREEKS", "greeks"]

#: The Greeks returned by :func:`greeks` for a closed form (where the pricer has the input), with
#: their definitions. Units: per unit of each input (T in years, σ, r, q as fractions per year).
GREEKS = {
    "price": "V",
    "delta": "∂V/∂S (∂V/∂F for a forward-based pricer)",
    "gamma": "∂²V/∂S²",
    "vega": "∂V/∂σ (per 1.00 of volatility)",
    "theta": "−∂V/∂T (per year, calendar time passing)",
    "rho": "∂V/∂r (per 1.00 of rate)",
    "dividend_rho": "∂V/∂q (per 1.00 of yield)",
    "dual_delta": "∂V/∂K",
    "vanna": "∂²V/∂S∂σ",
    "volga": "∂²V/∂σ²",
    "d_barrier": "∂V/∂H (barrier level)",
    "d_jump_intensity": "∂V/∂λ (Merton jumps per year)",
    "d_jump_mean": "∂V/∂μ_J (Merton mean log-jump)",
    "d_jump_vol": "∂V/∂σ_J (Merton log-jump volatility)",
    "d_kappa": "∂V/∂κ (Heston)",
    "d_theta_v": "∂V/∂θ (Heston long-run variance)",
    "d_sigma": "∂V/∂σ_v (Heston vol of variance)",
    "d_rho_corr": "∂V/∂ρ (Heston correlation)",
    "d_v0": "∂V/∂v₀ (Heston initial variance)",
}

#: The differentiated scalar inputs (when the pricer has them) and their first-order Greek.
_FIRST = (("vol", "vega"), ("expiry", "theta"), ("rate", "rho"), ("dividend", "dividend_rho"),
          ("strike", "dual_delta"), ("barrier", "d_barrier"),
          ("jump_intensity", "d_jump_intensity"), ("jump_mean", "d_jump_mean"),
          ("jump_vol", "d_jump_vol"))
_HESTON = (("kappa", "d_kappa"), ("theta", "d_theta_v"), ("sigma", "d_sigma"),
           ("rho", "d_rho_corr"), ("v0", "d_v0"))


def greeks(pricer: Callable[..., Any], **kwargs: Any) -> dict[str, Any]:
    """Price and the Greeks of ``pricer(**kwargs)`` in one call, batched.

    Args:
        pricer: any finance pricer taking keyword arguments with ``spot`` (or ``forward``):
            closed forms (:func:`bsm_price`, :func:`black76_price`, :func:`bachelier_price`,
            :func:`digital_price`, :func:`heston_price`, :func:`barrier_price`, …) by AD;
            :func:`tree_price` by the tree kernel's path-weight sweep (:func:`tree_greeks`);
            :func:`mc_price` and :func:`heston_mc_price` by their estimators (:func:`mc_greeks`,
            :func:`heston_mc_greeks`: Monte Carlo results with standard errors).
        **kwargs: its arguments (broadcastable arrays for the closed forms).

    Returns:
        Closed forms: a dict over the keys of :data:`GREEKS` that apply (``vega``, ``vanna`` and
        ``volga`` where the pricer has ``vol``; ``d_kappa`` … ``d_v0`` where it has
        ``params=HestonParams(...)``), plain arrays shaped like the broadcast arguments. First
        order by one reverse sweep; gamma/vanna and volga by forward-over-reverse passes.
        :func:`tree_price`: :data:`TREE_GREEKS`. Monte Carlo: ``{name: MCGreek}``, each an
        ``(estimate, stderr)`` tuple with ``ci`` and ``n_samples`` (``second_order=True`` adds
        gamma, vanna and volga for :func:`mc_price`, see :func:`mc_greeks`).

    Raises:
        TypeError: a pricer without ``spot``/``forward``, or missing required arguments (named).

    Example:
        >>> from finance import bsm_price
        >>> g = greeks(bsm_price, spot=100.0, strike=100.0, expiry=1.0, rate=0.05, vol=0.2)
        >>> round(float(g["delta"]), 6), round(float(g["gamma"]), 6)
        (0.636831, 0.018762)
    """
    from ._heston_mc import heston_mc_greeks, heston_mc_price
    from ._mc import mc_greeks, mc_price
    from ._tree import tree_greeks, tree_price

    special = {tree_price: tree_greeks, mc_price: mc_greeks, heston_mc_price: heston_mc_greeks}
    if pricer in special:
        return special[pricer](**kwargs)
    name = getattr(pricer, "__name__", repr(pricer))
    try:
        params = inspect.signature(pricer).parameters
    except (TypeError, ValueError):
        raise TypeError(f"greeks: cannot read the arguments of {name}") from None
    underlying = "spot" if "spot" in params else "forward" if "forward" in params else None
    if underlying is None:
        raise TypeError(f"greeks: {name} takes neither spot nor forward")
    missing = [k for k, p in params.items() if p.default is inspect.Parameter.empty
               and p.kind is not inspect.Parameter.VAR_KEYWORD and k not in kwargs]
    if missing:
        raise TypeError(f"greeks: {name} needs the keyword argument(s) {missing}")
    names = [underlying] + [k for k, _ in _FIRST if k in params
                            and (kwargs[k] if k in kwargs else params[k].default) is not None]
    values = {k: kwargs[k] if k in kwargs else params[k].default for k in names}
    for k, v in values.items():
        if v is None or isinstance(v, bool | np.bool_) or isinstance(v, str):
            raise TypeError(f"greeks: {name}: {k} must be a number or array, got "
                            f"{type(v).__name__} {v!r}")
    heston = kwargs.get("params")
    heston = heston if isinstance(heston, HestonParams) else None
    fixed = {k: v for k, v in kwargs.items() if k not in names and k != "params"}
    shapes = [np.shape(plain(np.asarray(v) if isinstance(v, list | tuple) else v))
              for v in values.values()]
    if heston is not None:
        shapes += [np.shape(plain(getattr(heston, f))) for f, _ in _HESTON]
    shapes += [np.shape(v) for v in fixed.values()
               if isinstance(v, np.ndarray | list | tuple) and np.asarray(v).dtype.kind == "b"]
    try:
        shape = np.broadcast_shapes(*shapes)
    except ValueError:
        raise ValueError(f"greeks: the arguments of {name} do not broadcast together: "
                         f"{dict(zip(list(values) + ['params'] * 5, shapes))}") from None
    xs = [np.broadcast_to(plain(np.asarray(values[k], dtype=np.float64)), shape).copy()
          for k in names]
    if heston is not None:
        xs.append(HestonParams(**{f: np.broadcast_to(plain(getattr(heston, f)), shape).copy()
                                  for f, _ in _HESTON}))

    def call(*args):
        kw = dict(fixed, **dict(zip(names, args[:len(names)])))
        if heston is not None:
            kw["params"] = args[len(names)]
        return pricer(**kw)

    def total(*args):
        return np.sum(call(*args))

    argnums = tuple(range(len(xs)))
    first = ds.grad(total, argnums=argnums)
    g = first(*xs)
    out = {"price": plain(call(*xs)).reshape(shape) if shape else plain(call(*xs)),
           "delta": g[0]}
    for k, greek in _FIRST:
        if k in names:
            d = g[names.index(k)]
            out[greek] = -d if greek == "theta" else d
    if heston is not None:
        hp = g[len(names)]
        for f, greek in _HESTON:
            out[greek] = getattr(hp, f)
    ones, zeros = np.ones(shape), np.zeros(shape)
    has_vol = "vol" in names

    def second(*pair):
        args = list(xs)
        args[0] = pair[0]
        if has_vol:
            args[names.index("vol")] = pair[1]
        d = first(*args)
        return (d[0], d[names.index("vol")]) if has_vol else (d[0], d[0])

    pair = (xs[0], xs[names.index("vol")] if has_vol else xs[0])
    _, (gamma, vanna) = ds.jvp(second, pair, (ones, zeros))
    out["gamma"] = gamma
    if has_vol:
        out["vanna"] = vanna
        _, (_, volga) = ds.jvp(second, pair, (zeros, ones))
        out["volga"] = volga
    return {k: plain(v) for k, v in out.items()}

