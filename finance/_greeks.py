"""Greeks of any differentiable pricer by AD: reverse mode for first order, forward-over-reverse
for second order.

The pricers are elementwise in their batch, so the gradient of ``sum(price)`` with respect to an
argument broadcast to the batch shape is the elementwise first derivative, and one JVP of that
gradient along ``ones`` in one argument gives an elementwise column of second derivatives.
"""

from __future__ import annotations

import numpy as np

import diffsci as ds

from ._validate import plain

__all__ = ["GREEKS", "greeks"]

#: The Greeks returned by :func:`greeks`, with their definitions.
GREEKS = {
    "price": "V",
    "delta": "∂V/∂S (∂V/∂F for a forward-based pricer)",
    "gamma": "∂²V/∂S²",
    "vega": "∂V/∂σ (per unit volatility)",
    "theta": "−∂V/∂T (per year, calendar time passing)",
    "rho": "∂V/∂r (per unit rate)",
    "vanna": "∂²V/∂S∂σ",
    "volga": "∂²V/∂σ²",
}


def greeks(pricer, **kwargs):
    """Price and the Greeks of ``pricer(**kwargs)`` in one call, batched.

    Args:
        pricer: a keyword-only differentiable pricer with arguments ``spot`` (or ``forward``),
            ``vol``, ``expiry`` and ``rate``, e.g. :func:`bsm_price`, :func:`black76_price`,
            :func:`bachelier_price`, :func:`digital_price`.
        **kwargs: its arguments (broadcastable arrays).

    Returns:
        A dict with the keys of :data:`GREEKS`, each shaped like the broadcast arguments. First
        order by one reverse sweep; gamma/vanna and vanna/volga by two forward-over-reverse passes.

    Example:
        >>> from finance import bsm_price
        >>> g = greeks(bsm_price, spot=100.0, strike=100.0, expiry=1.0, rate=0.05, vol=0.2)
        >>> round(float(g["delta"]), 6), round(float(g["gamma"]), 6)
        (0.636831, 0.018762)
    """
    underlying = "spot" if "spot" in kwargs else "forward"
    names = (underlying, "vol", "expiry", "rate")
    missing = [n for n in names if n not in kwargs and n != "rate"]
    if missing:
        raise TypeError(f"greeks: {pricer.__name__} needs the keyword argument(s) {missing}")
    kwargs.setdefault("rate", 0.0)
    numeric = {k: plain(v) for k, v in kwargs.items() if np.asarray(v).dtype.kind != "b"}
    shape = np.broadcast_shapes(*(v.shape for v in numeric.values()),
                                *(np.shape(v) for v in kwargs.values()))
    xs = tuple(np.broadcast_to(numeric[n], shape).copy() for n in names)
    fixed = {k: v for k, v in kwargs.items() if k not in names}

    def total(u, v, t, r):
        return np.sum(pricer(**fixed, **dict(zip(names, (u, v, t, r)))))

    first = ds.grad(total, argnums=(0, 1, 2, 3))
    g = first(*xs)
    ones, zeros = np.ones(shape), np.zeros(shape)

    def spot_vol(u, v):
        d = first(u, v, xs[2], xs[3])
        return d[0], d[1]

    _, (gamma, vanna) = ds.jvp(spot_vol, (xs[0], xs[1]), (ones, zeros))
    _, (_, volga) = ds.jvp(spot_vol, (xs[0], xs[1]), (zeros, ones))
    price = plain(pricer(**kwargs))
    out = {"price": price, "delta": g[0], "gamma": gamma, "vega": g[1], "theta": -g[2],
           "rho": g[3], "vanna": vanna, "volga": volga}
    return {k: plain(v) for k, v in out.items()}
