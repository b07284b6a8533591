"""Every Greek of the tree kernel (``finance.tree_greeks``) over a grid of (spot, vol, rate,
expiry, call/put, steps): against central differences of the kernel's own price and Greeks in
float64 (``diffsci.testing.check_grads`` on a rule built from the kernel's values), and against
QuantLib's CRR engine (its lattice Δ, Γ, θ and bump-and-reprice ν, ρ of its own tree)."""

import functools
import itertools

import numpy as np
import pytest

import diffsci as ds
import finance
from diffsci.testing import check_grads
from finance import _kernels, _tree

pytestmark = pytest.mark.kernels

THETA = ("vol", "expiry", "rate", "dividend", "strike")
FIRST = ("vega", "theta", "rho", "dividend_rho", "dual_delta")
SIGN = (1.0, -1.0, 1.0, 1.0, 1.0)  # theta = −∂V/∂T
SECOND = ("volga", "veta", "vera", "vol_dividend", "vol_strike")

GRID = list(itertools.product(
    (80.0, 100.0, 125.0),  # spot (strike 100)
    (0.15, 0.45),          # vol
    (0.0, 0.07),           # rate (dividend 0.03: early exercise of calls too)
    (0.3, 2.0),            # expiry
    (False, True),         # is_call
    (64, 501)))            # n_steps; smooth alternates with the grid index


def kernel_functions(static, theta, i):
    """The kernel's price, vega and delta as functions of θ_i alone (θ = (σ, T, r, q, K), the
    others held at ``theta``), each with its derivative rule from the kernel's Greeks: ∂V/∂θ_i,
    ∂²V/∂σ∂θ_i, and vanna (i = 0)."""
    def greeks(x):
        th = dict(zip(THETA, theta))
        th[THETA[i]] = float(x)
        return finance.tree_greeks(**static, **th)

    def rule(value, derivative, sign=1.0):
        @ds.custom_jvp
        def f(x):
            return np.float64(greeks(x)[value])

        @f.defjvp
        def _jvp(primals, tangents):
            g = greeks(primals[0])
            return np.float64(g[value]), sign * float(g[derivative]) * tangents[0]

        return f

    return (rule("price", FIRST[i], SIGN[i]), rule("vega", SECOND[i]),
            rule("delta", "vanna") if i == 0 else None)


@functools.cache
def _layout(n, smooth):
    """Per byte of the decision scratch: the node's grid index k (layer i, node j at
    n − i + 2j), and whether it lies within 12 standard deviations of the root's paths; the
    payoff layer of a plain tree (which stops everywhere) gets k of a zero exercise value."""
    last = n - 1 if smooth else n
    i = np.concatenate([np.full(layer + 3, layer) for layer in range(last + 1)])
    j = np.concatenate([np.arange(layer + 3) for layer in range(last + 1)])
    k = n - i + 2 * j
    if not smooth:  # E > 0 there is the payoff's kink, whose two slopes the kernel averages
        k[i == last] = 2 * n + 5  # (test_strike_on_a_node): one past the grid, a 0 appended
    return k, np.abs(2 * j - i - 2) <= 12 * np.sqrt(i + 1) + 2


def decisions(static, theta):
    """The exercise decisions of the lattice at ``theta`` (the kernel's byte per node) that
    can change a value: exercise where E > 0, at nodes within 12 standard deviations of the
    root's paths. (Where E = 0 and the continuation value is ~0 the decision follows the
    rounding of a Black–Scholes value near 0 and changes nothing; beyond 12 standard deviations
    the path weight is < e^{−72}: at r = 0 the deep put nodes switch to exercise for any r > 0.)"""
    th = dict(zip(THETA, theta))
    finance.tree_greeks(**static, **th)
    n, smooth = static["n_steps"], static["smooth"]
    mask = _kernels.tree_decisions(_tree._scratch.ws[0], _tree._scratch.iwork[0], n,
                                   smooth).astype(bool)
    s = th["vol"] * np.sqrt(th["expiry"] / n)
    grid = np.empty((4, 2 * n + 5))
    _kernels._exercise_grid(static["spot"], th["strike"], s, 1.0 if static["is_call"] else -1.0,
                            n, grid)
    e_grid = grid[0]
    k, near = _layout(n, smooth)
    e = np.append(e_grid, 0.0)[k]
    return mask & (e > 0.0) & near


def flip_free_point(static, theta, i):
    """``(theta', eps)``: theta with θ_i moved by at most 2e-5 and the largest eps in 1e-5, 1e-6,
    1e-7 such that no exercise decision changes within θ′_i ± 4 eps (a central difference across
    a change differentiates a kink, not the lattice; a lattice of n² nodes has near-ties, and a
    point a little off one is as generic as the grid point)."""
    for eps in (1e-5, 1e-6, 1e-7):
        for shift in (0.0, 3e-6, -7e-6, 1.3e-5, -1.9e-5):
            point = tuple(x + (shift if k == i else 0.0) for k, x in enumerate(theta))
            here = decisions(static, point)
            moved = [tuple(x + (s * 4 * eps if k == i else 0.0) for k, x in enumerate(point))
                     for s in (-1.0, 1.0)]
            if all(np.array_equal(decisions(static, m), here) for m in moved):
                return point, eps
    raise AssertionError(f"{THETA[i]}: decisions change within 4e-7 of every point tried")


@pytest.mark.parametrize("case", range(len(GRID)))
def test_every_greek_vs_finite_differences_of_the_kernel(case):
    spot, vol, rate, expiry, is_call, n = GRID[case]
    static = dict(spot=spot, is_call=is_call, n_steps=n, smooth=case % 2 == 1)
    theta = (vol, expiry, rate, 0.03, 100.0)
    # the spot is not differenced (moving S re-anchors the lattice, §TR): delta and gamma are
    # checked against AD of the NumPy tree in test_tree_greeks.py and against QuantLib below
    for i in range(len(THETA)):
        point, eps = flip_free_point(static, theta, i)
        price, vega, delta = kernel_functions(static, point, i)
        x = (np.float64(point[i]),)
        # vega and delta are sums over the nodes of terms up to ~√n times the price (λ L_σ Φ,
        # L_σ = U a_σ + D b_σ, cancelling), so their rounding is up to √n times the price's
        atol = noise(price(*x), n) / eps
        check_grads(price, x, modes=("fwd",), eps=eps, atol=atol)
        for f in (vega, delta) if delta is not None else (vega,):
            check_grads(f, x, modes=("fwd",), eps=eps, atol=np.sqrt(n) * atol)


def noise(value, n):
    """A bound on the rounding error of a lattice value: each of the ~n layers it passes
    through adds ≈ ε|V| (ε = 2.2e-16), so a central difference with step eps is exact only to
    this / eps (n = 501, V = 20: ~1e-12, i.e. ~1e-6 at eps = 1e-6)."""
    return 8.0 * n * np.finfo(np.float64).eps * (abs(float(value)) + 1.0)


def _quantlib(ql, spot, vol, rate, days, is_call, n, dividend=0.03, strike=100.0):
    today = ql.Date(15, 1, 2025)
    ql.Settings.instance().evaluationDate = today
    dc = ql.Actual365Fixed()
    process = ql.BlackScholesMertonProcess(
        ql.QuoteHandle(ql.SimpleQuote(spot)),
        ql.YieldTermStructureHandle(ql.FlatForward(today, dividend, dc)),
        ql.YieldTermStructureHandle(ql.FlatForward(today, rate, dc)),
        ql.BlackVolTermStructureHandle(ql.BlackConstantVol(today, ql.NullCalendar(), vol, dc)))
    opt = ql.VanillaOption(ql.PlainVanillaPayoff(ql.Option.Call if is_call else ql.Option.Put,
                                                 strike),
                           ql.AmericanExercise(today, today + days))
    opt.setPricingEngine(ql.BinomialVanillaEngine(process, "crr", n))
    return opt


QL_GRID = list(itertools.product((80.0, 100.0, 125.0), (0.15, 0.45), (0.0, 0.07), (91, 730),
                                 (False, True)))


#: |diffsci − QuantLib| · √n / unit over QL_GRID, measured at about a third of these: price
#: 0.007, delta 0.09, gamma 0.08, theta 0.10, vega 0.29, rho 0.06 (unit: S σ √T for the price,
#: 1 for delta, 1/(S σ √T) for gamma, S σ/√T for theta, S √T for vega, K T for rho).
QL_TOL = dict(price=0.02, delta=0.3, gamma=0.25, theta=0.3, vega=0.9, rho=0.2)


@pytest.mark.parametrize("spot,vol,rate,days,is_call", QL_GRID)
def test_tree_greeks_vs_quantlib_crr(spot, vol, rate, days, is_call):
    # two CRR variants: QuantLib's p = ½ + ½νΔt/Δx, ours matches e^{(r−q)Δt} exactly, and our
    # Δ, Γ are centred on S where QuantLib's sit one step later; their Greeks differ by
    # O(n^{-1/2}) in the natural unit of each (QL_TOL); vega and rho of QuantLib's tree by
    # bump-and-reprice (h = 1e-4), the others its lattice values
    ql = pytest.importorskip("QuantLib")
    expiry = days / 365.0
    scale = spot * vol * np.sqrt(expiry)
    unit = dict(price=scale, delta=1.0, gamma=1.0 / scale, theta=scale / expiry,
                vega=scale / vol, rho=100.0 * expiry)
    intrinsic = max((spot - 100.0) if is_call else (100.0 - spot), 0.0)
    for n in (250, 1000):
        opt = _quantlib(ql, spot, vol, rate, days, is_call, n)
        g = finance.tree_greeks(spot=spot, strike=100.0, expiry=expiry, rate=rate,
                                dividend=0.03, vol=vol, is_call=is_call, n_steps=n, smooth=False)
        peer = dict(price=opt.NPV(), delta=opt.delta(), gamma=opt.gamma())
        if float(g["price"]) > intrinsic + 1e-3 * scale:
            # QuantLib's θ is the Black–Scholes PDE's rV − (r−q)SΔ − ½σ²S²Γ, which does not
            # hold where the option is exercised at once (skipped there)
            peer["theta"] = opt.theta()
        if n == 250:
            h = 1e-4
            peer["vega"] = (_quantlib(ql, spot, vol + h, rate, days, is_call, n).NPV()
                            - _quantlib(ql, spot, vol - h, rate, days, is_call, n).NPV()) / (2 * h)
            peer["rho"] = (_quantlib(ql, spot, vol, rate + h, days, is_call, n).NPV()
                           - _quantlib(ql, spot, vol, rate - h, days, is_call, n).NPV()) / (2 * h)
        for name, value in peer.items():
            err = abs(float(g[name]) - value) * np.sqrt(n) / unit[name]
            assert err < QL_TOL[name], (name, n, float(g[name]), value)
