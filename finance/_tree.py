"""American (and Bermudan/European) options on a Cox–Ross–Rubinstein binomial tree.

Plain inputs run the Numba kernel ``_kernels.tree_prices``; traced inputs run the same backward
induction in NumPy over the lattice (a trailing axis of nodes), so diffsci differentiates the tree
price itself to any order. :func:`tree_greeks` (and ``finance.greeks(finance.tree_price, ...)``)
returns the price and 13 Greeks from one kernel call: the induction keeping its exercise decisions
(one byte per node), then one sweep of the path weights from t = 0 to expiry, in which every
first- and σ-second-order derivative is a sum over the stopping nodes (finance/DERIVATIONS.md §TA);
equal to the AD values to rounding, at about twice the cost of the price.

Smoothness in the spot. A CRR lattice that scales with S gives a price piecewise *linear* in S
(AD gamma zero almost everywhere, and missing the exercise boundary's contribution with the BBS
last step). So the lattice is anchored at the plain spot and started two steps early (Pelsser &
Vorst 1994): step 0 holds the values at ``S u^{−2}, S, S u²``, and the price is their quadratic
interpolation in ``ln S``, whose AD delta and gamma at the anchor are the lattice's central
differences (finance/DERIVATIONS.md §TR). ``smooth=True`` (default) is the binomial Black–Scholes
method of Broadie & Detemple (1996): the continuation value one step before expiry is the
Black–Scholes price over the last step (monotone convergence, no odd–even oscillation).

References:
    J. C. Cox, S. A. Ross, M. Rubinstein, "Option pricing: a simplified approach", J. Financ. Econ.
    7 (1979) 229–263, eqs. (2)–(5). A. Pelsser, T. Vorst, "The binomial model and the Greeks",
    J. Derivatives 1 (1994) 45–49. M. Broadie, J. Detemple, "American option valuation: new bounds,
    approximations, and a comparison of existing methods", Rev. Financ. Stud. 9 (1996) 1211–1250,
    §2 (BBS). Hull, 10th ed., §21.1–21.4.
"""

from __future__ import annotations

import threading

import numba
import numpy as np

from diffsci.extend import is_tracer, observed, value_mask
from diffsci.typing import Array, ArrayLike

from . import _kernels
from ._analytic.bsm import _bsm
from ._validate import check_bool, check_broadcast, plain, prepare

__all__ = ["TREE_GREEKS", "tree_greeks", "tree_price"]


#: The Greeks of :func:`tree_greeks` (all per unit of the input: years, a rate of 1.00, a
#: volatility of 1.00), with their definitions.
TREE_GREEKS = {
    "price": "V",
    "delta": "∂V/∂S",
    "gamma": "∂²V/∂S²",
    "vega": "∂V/∂σ (per 1.00 of volatility)",
    "theta": "−∂V/∂T (per year)",
    "rho": "∂V/∂r (per 1.00 of rate)",
    "dividend_rho": "∂V/∂q (per 1.00 of yield)",
    "dual_delta": "∂V/∂K",
    "vanna": "∂²V/∂S∂σ",
    "volga": "∂²V/∂σ²",
    "veta": "∂²V/∂σ∂T",
    "vera": "∂²V/∂σ∂r",
    "vol_dividend": "∂²V/∂σ∂q",
    "vol_strike": "∂²V/∂σ∂K",
}


def _validate(who, spot, strike, expiry, rate, dividend, vol, is_call, n_steps, exercise_every):
    """Check the arguments once; return ``(args, w, n, shape)`` with lists/tuples as arrays."""
    args = prepare(who, spot=(spot, 0.0), strike=(strike, 0.0), expiry=(expiry, 0.0),
                   rate=(rate, None), dividend=(dividend, None), vol=(vol, 0.0))
    w = np.where(check_bool(who, "is_call", is_call), 1.0, -1.0)
    for name, x, lo in (("n_steps", n_steps, 2), ("exercise_every", exercise_every, 1)):
        if isinstance(x, bool) or not (isinstance(x, int | np.integer) and x >= lo):
            raise ValueError(f"{who}: {name} must be an int >= {lo}, got {x!r}")
    shape = check_broadcast(who, **dict(zip(("spot", "strike", "expiry", "rate", "dividend",
                                             "vol"), args)), is_call=w)
    n = int(n_steps)
    _, _, expiry, rate, dividend, vol = args
    coarse = observed(_coarse, expiry, rate, dividend, vol, n)  # a guard under diffsci.jit
    if coarse is not None:
        raise ValueError(f"{who}: n_steps = {n} is too coarse: the up probability p must lie in "
                         f"(0, 1), got {coarse}; increase it")
    return args, w, n, shape


def _coarse(expiry, rate, dividend, vol, n):
    """The range of the up probability p if some p is outside (0, 1), else None."""
    dt = plain(expiry) / n
    step = plain(vol) * np.sqrt(dt)
    growth = np.exp((plain(rate) - plain(dividend)) * dt)
    p = (growth - np.exp(-step)) / (np.exp(step) - np.exp(-step))
    if np.any((p <= 0) | (p >= 1)):
        return f"{float(np.min(p))!r}..{float(np.max(p))!r}"
    return None


#: Batches of at least this many lattice nodes in all run options in parallel (Numba threads);
#: smaller ones run on one thread (a thread-pool launch costs more than a small tree).
PARALLEL_MIN_NODES = 200_000

_scratch = threading.local()


def _workspace(chunks, n, smooth):
    """Per-thread scratch of the Greeks kernel, reused across calls (no fresh pages): the
    decision bytes, the float64 and int64 rows, ``chunks`` of each."""
    nbytes = int(_kernels.tree_nodes(n, smooth))
    cols = int(_kernels.tree_work_cols(n))
    ws = getattr(_scratch, "ws", None)
    if ws is None or ws.shape[0] < chunks or ws.shape[1] < nbytes or \
            _scratch.work.shape[2] < cols:
        ws = np.empty((chunks, nbytes), np.uint8)
        _scratch.ws = ws
        _scratch.work = np.empty((chunks, _kernels.TREE_WORK_ROWS, cols))
        _scratch.iwork = np.empty((chunks, _kernels.TREE_IWORK_ROWS, cols), np.int64)
    return ws[:chunks], _scratch.work[:chunks], _scratch.iwork[:chunks]


def _parallel(size, n):
    return size >= 2 and numba.get_num_threads() >= 2 and size * n * n // 2 >= PARALLEL_MIN_NODES


def _flat(shape, *xs):
    return tuple(np.ascontiguousarray(np.broadcast_to(plain(x), shape).ravel()) for x in xs)


def tree_price(*, spot: ArrayLike, strike: ArrayLike, expiry: ArrayLike, rate: ArrayLike = 0.0,
               dividend: ArrayLike = 0.0, vol: ArrayLike, is_call: bool | ArrayLike = False,
               american: bool = True, n_steps: int = 500, exercise_every: int = 1,
               smooth: bool = True) -> Array:
    """Cox–Ross–Rubinstein binomial price of American/Bermudan/European options (batched).

    ``Δt = T/n``, ``u = e^{σ√Δt} = 1/d``, ``p = (e^{(r−q)Δt} − d)/(u − d)``; node values
    ``V_i = max(e^{−rΔt}(p V_{i+1}^{up} + (1 − p) V_{i+1}^{down}), h(S_i))`` where exercise is
    allowed (every ``exercise_every`` steps, and at t = 0), with ``h = max(w(S − K), 0)``.
    Plain (untraced) inputs run the Numba kernel ``_kernels.tree_prices``; traced inputs run the
    same induction in NumPy, which diffsci differentiates to any order (:func:`tree_greeks` gives
    price and Greeks from the decisions and one path-weight sweep instead, much faster).

    Args:
        spot, strike: S, K > 0 (currency units; broadcastable arrays, the tree runs on all).
        expiry: T > 0, in years.
        vol: σ > 0, per √year (0.2 = 20 %).
        rate, dividend: r and q, continuously compounded, per year (0.05 = 5 %).
        is_call: bool (array); default False (an American put).
        american: early exercise allowed (False: European, for checks).
        n_steps: tree steps n (int >= 2).
        exercise_every: exercise allowed at steps i with ``i % exercise_every == 0`` (Bermudan;
            1 = American).
        smooth: binomial Black–Scholes last step (smooth in the spot; see module docstring).

    Returns:
        Prices shaped like the broadcast arguments (differentiable).

    Raises:
        ValueError: invalid arguments, naming them, including a step too coarse for
            ``0 < p < 1`` (``n_steps`` too small for the drift) and shapes that do not broadcast.
        TypeError: ``is_call`` not bool, or non-real input.

    Example:
        >>> round(float(tree_price(spot=36.0, strike=40.0, expiry=1.0, rate=0.06, vol=0.2,
        ...                        n_steps=2000)), 3)
        4.487

    References:
        Cox, Ross & Rubinstein (1979); Broadie & Detemple (1996), §2.
    """
    who = "tree_price"
    (spot, strike, expiry, rate, dividend, vol), w, n, shape = _validate(
        who, spot, strike, expiry, rate, dividend, vol, is_call, n_steps, exercise_every)
    traced = any(is_tracer(a) for a in (spot, strike, expiry, rate, dividend, vol))
    if not traced:
        flat = _flat(shape, spot, strike, expiry, rate, dividend, vol, w)
        kernel = _kernels.tree_prices if _parallel(flat[0].size, n) else \
            _kernels.tree_prices_serial
        v = kernel(*flat, bool(american), n, int(exercise_every), bool(smooth))
        return v[:, 1].reshape(shape)
    anchor = value_mask(plain, spot)  # not differentiated; recomputed under diffsci.jit
    v_down, v_mid, v_up, step = _backward(anchor, strike, expiry, rate, dividend, vol, w,
                                          bool(american), n, int(exercise_every), bool(smooth))
    # quadratic interpolation in x = ln(S/S_ref) through x = −2s, 0, 2s (DERIVATIONS.md §TR)
    x = np.log(spot / anchor)
    v_x = (v_up - v_down) / (4.0 * step)
    v_xx = (v_up - 2.0 * v_mid + v_down) / (4.0 * step * step)
    return v_mid + x * v_x + 0.5 * x * x * v_xx


def tree_greeks(*, spot: ArrayLike, strike: ArrayLike, expiry: ArrayLike, rate: ArrayLike = 0.0,
                dividend: ArrayLike = 0.0, vol: ArrayLike, is_call: bool | ArrayLike = False,
                american: bool = True, n_steps: int = 500, exercise_every: int = 1,
                smooth: bool = True) -> dict[str, np.ndarray]:
    """Price and Greeks of :func:`tree_price` from one value pass and one weight sweep (batched).

    The values equal the AD derivatives of :func:`tree_price` (``ds.grad``, forward-over-reverse)
    to rounding, at about twice the cost of the price: the value pass runs the induction and keeps
    its exercise decisions (one byte per node); with the decisions fixed the price is a sum over
    the stopping nodes of their path weights λ = N pu^U pd^D times their values, so one sweep of
    λ from t = 0 to expiry gives every ∂V/∂θ and ∂²V/∂σ∂θ as sums over those nodes of λ times
    polynomials in (U, D) (finance/DERIVATIONS.md §TA). Delta, gamma and vanna come from the
    three layer-0 values of the extended lattice (§TR), vanna through a second weight, that of
    V₊ − V₋.

    Args:
        spot, strike, expiry, rate, dividend, vol, is_call, american, n_steps, exercise_every,
        smooth: as :func:`tree_price` (T in years, σ, r, q per year, as fractions).

    Returns:
        A dict with the keys of :data:`TREE_GREEKS` (plain arrays shaped like the broadcast
        arguments): theta per year (−∂V/∂T), vega per 1.00 of volatility, rho and dividend rho
        per 1.00 of rate or yield.

    Raises:
        ValueError/TypeError: as :func:`tree_price`.

    Example:
        >>> g = tree_greeks(spot=36.0, strike=40.0, expiry=1.0, rate=0.06, vol=0.2)
        >>> round(float(g["price"]), 3), round(float(g["delta"]), 3)
        (4.487, -0.697)

    References:
        Pelsser & Vorst (1994) (delta and gamma from the extended lattice); M. Giles,
        P. Glasserman, "Smoking adjoints", Risk (2006) (the adjoint of a backward induction:
        its adjoints are the path weights λ).
    """
    who = "tree_greeks"
    (spot, strike, expiry, rate, dividend, vol), w, n, shape = _validate(
        who, spot, strike, expiry, rate, dividend, vol, is_call, n_steps, exercise_every)
    static = (shape, bool(american), n, int(exercise_every), bool(smooth))
    # the kernel on the plain values; recomputed by the compiled code under diffsci.jit
    cols = value_mask(_greeks_kernel, spot, strike, expiry, rate, dividend, vol, w, *static)
    return {k: cols[c].reshape(shape) for c, k in enumerate(TREE_GREEKS)}


def _greeks_kernel(spot, strike, expiry, rate, dividend, vol, w, shape, american, n, every,
                   smooth):
    """The Greeks kernel on plain values: one contiguous row per Greek, ``(14, size)``."""
    flat = _flat(shape, spot, strike, expiry, rate, dividend, vol, w)
    size = flat[0].size
    static = (american, n, every, smooth)
    if _parallel(size, n):
        out = _kernels.tree_greeks(*flat, *static, *_workspace(min(size, numba.get_num_threads()),
                                                                n, smooth))
    else:
        out = _kernels.tree_greeks_serial(*flat, *static, *_workspace(1, n, smooth))
    return np.ascontiguousarray(out.T)


def _backward(anchor, strike, expiry, rate, dividend, vol, w, american, n, every, smooth):
    """The induction on valid input, on a lattice anchored at the plain spot ``anchor``.

    Node axis last; step i has i + 3 nodes ``S_ref u^{2j − i − 2}`` (the tree started two steps
    before t = 0, Pelsser & Vorst 1994), so step 0 holds the values at ``S_ref u^{−2}``, ``S_ref``
    and ``S_ref u²``. Returns those three values and the log-step ``σ√Δt``.
    """
    ex = lambda x: np.expand_dims(x, -1)  # noqa: E731  (a trailing node axis)
    anchor, strike, expiry, rate, dividend, vol, w = map(
        ex, (anchor, strike, expiry, rate, dividend, vol, w))
    dt = expiry / n
    step = vol * np.sqrt(dt)
    up, down = np.exp(step), np.exp(-step)
    p = (np.exp((rate - dividend) * dt) - down) / (up - down)
    disc = np.exp(-rate * dt)

    def nodes(i):
        return anchor * np.exp(step * (2.0 * np.arange(i + 3) - i - 2))

    def exercise(i):
        return np.maximum(w * (nodes(i) - strike), 0.0)

    if smooth:  # the last step in closed form (Broadie & Detemple's BBS)
        last = n - 1
        values = _bsm(nodes(last), strike, dt, rate, dividend, vol, w)
    else:
        last = n
        values = exercise(n)
    for i in range(last, -1, -1):
        if i < last:
            values = disc * (p * values[..., 1:] + (1.0 - p) * values[..., :-1])
        if american and i % every == 0:
            values = np.maximum(values, exercise(i))
    return values[..., 0], values[..., 1], values[..., 2], step[..., 0]
