"""The hand-written tree Greeks kernel (``finance.tree_greeks``, DERIVATIONS §TA) against AD of the
vectorised NumPy tree (``ds.grad`` / forward-over-reverse of ``tree_price`` on traced inputs),
finite differences of the tree, and Black–Scholes closed forms for European exercise."""

import itertools

import numba
import numpy as np
import pytest

import diffsci as ds
import finance
from diffsci.testing import check_grads
from finance import _kernels, _tree

pytestmark = pytest.mark.kernels

THETA = ("vol", "expiry", "rate", "dividend", "strike")
FIRST = ("vega", "theta", "rho", "dividend_rho", "dual_delta")  # ∂/∂θ, theta = −∂/∂T
SECOND = ("volga", "veta", "vera", "vol_dividend", "vol_strike")  # ∂²/∂σ∂θ


def ad_reference(kw, **static):
    """Every Greek of :data:`finance.TREE_GREEKS` by diffsci through the NumPy tree."""
    names = ("spot",) + THETA
    x0 = tuple(np.float64(kw[k]) for k in names)
    fixed = {k: v for k, v in kw.items() if k not in names}

    def f(*xs):
        return finance.tree_price(**fixed, **dict(zip(names, xs)), **static)

    grad = ds.grad(f, argnums=tuple(range(6)))
    g = grad(*x0)
    hs = ds.grad(lambda *xs: ds.grad(f, argnums=0)(*xs), argnums=tuple(range(6)))(*x0)
    hv = ds.grad(lambda *xs: ds.grad(f, argnums=1)(*xs), argnums=tuple(range(6)))(*x0)
    out = {"price": float(f(*x0)), "delta": g[0], "gamma": hs[0], "vanna": hs[1]}
    for name, d in zip(FIRST, g[1:]):
        out[name] = -d if name == "theta" else d
    for name, d in zip(SECOND, hv[1:]):
        out[name] = d
    return {k: float(v) for k, v in out.items()}


CASES = list(itertools.product(
    (False, True),                 # is_call
    ("american", "bermudan", "european"),
    (False, True),                 # smooth (binomial Black–Scholes last step)
    (0.8, 1.0, 1.25),              # moneyness K/S
    (0.0, 0.04)))                  # dividend yield


@pytest.mark.parametrize("is_call,exercise,smooth,moneyness,dividend", CASES)
def test_kernel_equals_ad_of_the_numpy_tree(is_call, exercise, smooth, moneyness, dividend):
    kw = dict(spot=40.0, strike=40.0 * moneyness, expiry=0.75, rate=0.05, dividend=dividend,
              vol=0.3, is_call=is_call)
    static = dict(n_steps=40, smooth=smooth, american=exercise != "european",
                  exercise_every=4 if exercise == "bermudan" else 1)
    got = finance.tree_greeks(**kw, **static)
    ref = ad_reference(kw, **static)
    assert set(got) == set(finance.TREE_GREEKS)
    tie = moneyness == 1.0 and not smooth and exercise != "european"
    for name, r in ref.items():
        if tie and name in ("dual_delta", "vol_strike"):
            continue  # see test_strike_on_a_node
        assert abs(float(got[name]) - r) <= 1e-9 * max(1.0, abs(r)), (name, float(got[name]), r)


@pytest.mark.parametrize("is_call", [False, True])
def test_strike_on_a_node(is_call):
    # K = S with a plain CRR last layer: the payoff's kink sits on a node, and one layer up the
    # continuation and exercise values are both 0 beside it. The kernel takes the continuation
    # (and half the kink's slope, as AD of np.maximum does): the mean of the one-sided
    # derivatives, i.e. the central difference; AD of the NumPy tree also splits the tie
    # max(0, 0) and gets less.
    kw = dict(spot=40.0, expiry=0.75, rate=0.05, vol=0.3, is_call=is_call, smooth=False)
    for n in (2, 4, 40):
        g = finance.tree_greeks(**kw, strike=40.0, n_steps=n)
        h = 1e-7

        def f(k):
            return float(finance.tree_price(**kw, strike=k, n_steps=n))

        central = (f(40.0 + h) - f(40.0 - h)) / (2 * h)
        assert abs(float(g["dual_delta"]) - central) < 1e-6, (n, float(g["dual_delta"]), central)


def test_kernel_vs_finite_differences_of_the_tree():
    kw = dict(spot=36.0, strike=40.0, expiry=1.0, rate=0.06, dividend=0.01, vol=0.2)
    n = 200
    g = finance.tree_greeks(**kw, n_steps=n)

    def price(**d):
        return float(finance.tree_price(**{**kw, **d}, n_steps=n))

    def vega(**d):
        return float(finance.tree_greeks(**{**kw, **d}, n_steps=n)["vega"])

    for name, first, second in zip(THETA, FIRST, SECOND):
        h = 1e-6 * max(1.0, kw[name])
        fd = (price(**{name: kw[name] + h}) - price(**{name: kw[name] - h})) / (2 * h)
        fd2 = (vega(**{name: kw[name] + h}) - vega(**{name: kw[name] - h})) / (2 * h)
        sign = -1.0 if first == "theta" else 1.0
        assert abs(sign * float(g[first]) - fd) < 1e-5 * max(1.0, abs(fd)), (first, fd)
        assert abs(float(g[second]) - fd2) < 1e-4 * max(1.0, abs(fd2)), (second, fd2)


def test_numpy_tree_gradients_check_grads():
    # the AD reference above, checked by central differences to second order (not in the spot:
    # moving S re-anchors the lattice, so differences in S are not the derivative, §TR)
    def f(v, t, r, q, k):
        return finance.tree_price(spot=36.0, vol=v, expiry=t, rate=r, dividend=q, strike=k,
                                  n_steps=30)

    check_grads(f, (0.2, 1.0, 0.06, 0.01, 40.3), order=2)


@pytest.mark.parametrize("is_call", [False, True])
def test_european_kernel_greeks_converge_to_black_scholes(is_call):
    # the tree's errors are O(1/n): halving from n = 1000 to 2000; volga, the second derivative of
    # a lattice whose nodes move past the strike as σ moves, oscillates around the closed form
    # (±2 % here) instead (it is the exact derivative of the lattice price, as AD's)
    kw = dict(spot=100.0, strike=np.array([80.0, 100.0, 120.0]), expiry=0.5, rate=0.03,
              dividend=0.01, vol=0.25, is_call=is_call)
    bs = finance.greeks(finance.bsm_price, **kw)
    g1, g2 = (finance.tree_greeks(**kw, n_steps=n, american=False) for n in (1000, 2000))
    for name, tol in (("price", 6e-4), ("delta", 3e-4), ("gamma", 2e-5), ("vega", 6e-3),
                      ("theta", 2e-3), ("rho", 3e-3), ("vanna", 8e-4)):
        e1, e2 = (np.max(np.abs(g[name] - bs[name])) for g in (g1, g2))
        assert e1 < tol and e2 < 0.6 * e1, (name, e1, e2)
    for g in (g1, g2):
        np.testing.assert_allclose(g["volga"], bs["volga"], rtol=0.03)


def test_price_kernel_equals_numpy_tree_and_batches_in_parallel():
    rng = np.random.default_rng(3)
    m = 4
    kw = dict(spot=rng.uniform(80, 120, m), strike=100.0, expiry=rng.uniform(0.2, 2.0, m),
              rate=0.04, dividend=rng.uniform(0.0, 0.05, m), vol=rng.uniform(0.1, 0.5, m),
              is_call=rng.uniform(size=m) < 0.5)
    n = 400
    assert _tree._parallel(m, n) or numba.get_num_threads() < 2  # the parallel kernels run
    batch = finance.tree_greeks(**kw, n_steps=n)
    price = finance.tree_price(**kw, n_steps=n)
    for i in range(m):
        one = {k: (v[i] if np.ndim(v) else v) for k, v in kw.items()}
        g = finance.tree_greeks(**one, n_steps=n)
        for name in finance.TREE_GREEKS:
            assert float(batch[name][i]) == float(g[name])
        traced = ds.value_and_grad(lambda s, one=one: finance.tree_price(
            **{**one, "spot": s}, n_steps=n))(one["spot"])[0]
        assert abs(float(price[i]) - float(traced)) < 1e-12
        assert abs(float(price[i]) - float(g["price"])) < 1e-12


def test_all_exercised_and_tiny_adjoints():
    # deep in the money: exercised at t = 0, the sweep stops at once (all Greeks the payoff's)
    g = finance.tree_greeks(spot=20.0, strike=100.0, expiry=1.0, rate=0.05, vol=0.2, n_steps=50)
    step = 0.2 * np.sqrt(1.0 / 50)
    assert float(g["price"]) == 80.0 and float(g["vega"]) == 0.0 and float(g["dual_delta"]) == 1.0
    # the lattice delta: the central difference of K − S over S e^{±2s}
    assert abs(float(g["delta"]) + np.sinh(2 * step) / (2 * step)) < 1e-12
    # long trees reach nodes of weight < 1e-200; the floor drops them without changing results
    kw = dict(spot=100.0, strike=100.0, expiry=1.0, rate=0.05, vol=0.2, n_steps=1500)
    g = finance.tree_greeks(**kw)
    assert abs(float(g["price"]) - float(finance.tree_price(**kw))) < 1e-12


def test_scratch_reuse_does_not_leak_between_calls():
    kw = dict(spot=100.0, strike=100.0, expiry=1.0, rate=0.05, vol=0.2)
    a = finance.tree_greeks(**kw, n_steps=300)
    finance.tree_greeks(**kw, n_steps=500, smooth=False, is_call=True)
    b = finance.tree_greeks(**kw, n_steps=300)
    assert all(float(a[k]) == float(b[k]) for k in a)
    # room for one decision byte per node (and a row), nothing else of size n²
    assert _kernels.tree_nodes(1000, False) == 1001 * 1006 // 2 + 1003
    assert _kernels.tree_nodes(1000, True) == 1000 * 1005 // 2 + 1002


def test_scattered_exercise_layers_keep_their_bytes():
    # a layer whose exercise set is not one interval keeps its bytes (the sweep reads them);
    # an American put's layers are one interval each, and keep none
    kw = dict(spot=100.0, strike=100.0, expiry=1.0, rate=0.05, vol=0.2, n_steps=200)
    finance.tree_greeks(**kw, smooth=False)
    assert not _tree._scratch.iwork[0, 2, :200].any()
    mask = _kernels.tree_decisions(_tree._scratch.ws[0], _tree._scratch.iwork[0], 200, False)
    assert mask[:200 * 205 // 2].sum() > 0
    # hand-made scattered layer: the sweep must skip the continuation node inside the range
    s, pu, pd, f, disc = _kernels._tree_steps(1.0, 0.05, 0.0, 0.2, 4)[:5]
    nxt = np.array([10.0, 10.0, 10.0, 10.0, 10.0, 10.0])
    cur = np.empty(5)
    e = np.array([20.0, 20.0, 0.0, 20.0, 0.0])
    row = np.zeros(5, np.uint8)
    lo, hi, count = _kernels._tree_layer_mask(nxt, cur, e, pu, pd, row)
    assert (lo, hi, count) == (0, 3, 3) and list(row) == [1, 1, 0, 1, 0]


@pytest.mark.parametrize("smooth", [False, True])
def test_long_tree_equals_ad(smooth):
    # n = 300: adjoints below ADJOINT_FLOOR are trimmed at both ends of the long layers
    n = 300
    kw = dict(spot=40.0, strike=42.0, expiry=0.75, rate=0.05, dividend=0.01, vol=0.3,
              is_call=False)
    got = finance.tree_greeks(**kw, n_steps=n, smooth=smooth)
    ref = ad_reference(kw, n_steps=n, smooth=smooth)
    for name, r in ref.items():
        assert abs(float(got[name]) - r) <= 1e-9 * max(1.0, abs(r)), name


def test_delta_gamma_theta_vs_quantlib_crr_when_installed():
    ql = pytest.importorskip("QuantLib")
    today = ql.Date(15, 1, 2025)
    ql.Settings.instance().evaluationDate = today
    dc = ql.Actual365Fixed()
    process = ql.BlackScholesMertonProcess(
        ql.QuoteHandle(ql.SimpleQuote(100.0)),
        ql.YieldTermStructureHandle(ql.FlatForward(today, 0.0, dc)),
        ql.YieldTermStructureHandle(ql.FlatForward(today, 0.05, dc)),
        ql.BlackVolTermStructureHandle(ql.BlackConstantVol(today, ql.NullCalendar(), 0.2, dc)))
    opt = ql.VanillaOption(ql.PlainVanillaPayoff(ql.Option.Put, 100.0),
                           ql.AmericanExercise(today, today + 365))
    opt.setPricingEngine(ql.BinomialVanillaEngine(process, "crr", 1000))
    g = finance.tree_greeks(spot=100.0, strike=100.0, expiry=1.0, rate=0.05, vol=0.2,
                            n_steps=1000, smooth=False)
    # QuantLib's lattice Greeks are differences on its own (unshifted) tree: O(1/n) apart
    assert abs(float(g["price"]) - opt.NPV()) < 1e-4
    assert abs(float(g["delta"]) - opt.delta()) < 1e-4
    assert abs(float(g["gamma"]) - opt.gamma()) < 1e-4
    assert abs(float(g["theta"]) - opt.theta()) < 0.02, (float(g["theta"]), opt.theta())


@pytest.mark.parametrize("n,smooth,every",
                         list(itertools.product((2, 3, 5), (False, True), (1, 2, 7))))
def test_tiny_trees_and_bermudan_strides_equal_ad(n, smooth, every):
    # the smallest lattices (one layer before the BBS layer at n = 2) and exercise strides longer
    # than the tree: the decision bytes, exercise ranges and the last layer's decisions at the edges
    for is_call in (False, True):
        kw = dict(spot=40.0, strike=43.0, expiry=0.75, rate=0.05, dividend=0.03, vol=0.3,
                  is_call=is_call)
        static = dict(n_steps=n, smooth=smooth, exercise_every=every)
        got = finance.tree_greeks(**kw, **static)
        for name, r in ad_reference(kw, **static).items():
            assert abs(float(got[name]) - r) <= 1e-9 * max(1.0, abs(r)), (name, is_call)
