"""Monte Carlo: prices and pathwise Greeks vs Black–Scholes, adjoint kernels vs finite differences,
the kernel vs an independent NumPy simulation, numba.cuda kernels (simulator) vs CPU kernels."""

import numpy as np
import pytest

import diffsci as ds
import finance
from diffsci.testing import check_grads
from finance import _kernels
from finance._gpu_checks import CHECKS as ALL_CHECKS

# the Monte Carlo checks (the tree's are in test_cuda_tree.py, against their AD reference)
CHECKS = [c for c in ALL_CHECKS if not c.name.startswith("tree_")]

pytestmark = pytest.mark.kernels  # runs the Numba kernels

KW = dict(spot=100.0, strike=105.0, expiry=0.75, rate=0.04, dividend=0.01, vol=0.3)
GREEK_ARG = {"delta": "spot", "vega": "vol", "rho": "rate"}


@pytest.mark.parametrize("is_call", [True, False])
def test_european_price_and_greeks_within_4_se(is_call):
    g = finance.mc_greeks(**KW, is_call=is_call, n_paths=40_000, seed=3)
    ref = finance.greeks(finance.bsm_price, **KW, is_call=is_call)
    assert abs(g["price"][0] - ref["price"]) < 3 * g["price"][1]  # prices: 3 s.e.
    for name in ("delta", "vega", "theta", "rho"):
        est, se = g[name]
        assert abs(est - ref[name]) < 4 * se, (name, est, ref[name], se)
    # strike and dividend sensitivities against AD of the closed form
    dk, dq = ds.grad(lambda k, q: finance.bsm_price(**{**KW, "strike": k, "dividend": q},
                                                    is_call=is_call), argnums=(0, 1))(105.0, 0.01)
    assert abs(g["dual_delta"][0] - dk) < 4 * g["dual_delta"][1]
    assert abs(g["dividend_rho"][0] - dq) < 4 * g["dividend_rho"][1]


def test_ad_through_mc_equals_kernel_greeks_and_forward_mode():
    def price(s, k, t, r, q, v):
        return finance.mc_price(spot=s, strike=k, expiry=t, rate=r, dividend=q, vol=v,
                                n_paths=2_000, seed=5).price

    args = tuple(KW[a] for a in ("spot", "strike", "expiry", "rate", "dividend", "vol"))
    rev = ds.grad(price, argnums=tuple(range(6)))(*args)
    g = finance.mc_greeks(**KW, n_paths=2_000, seed=5)
    np.testing.assert_allclose(rev, [g["delta"][0], g["dual_delta"][0], -g["theta"][0],
                                     g["rho"][0], g["dividend_rho"][0], g["vega"][0]], rtol=1e-12)
    _, tan = ds.jvp(lambda v: price(*args[:5], v), (0.3,), (1.0,))
    assert abs(tan - g["vega"][0]) < 1e-10


@pytest.mark.parametrize("product,n_steps", [(finance.Product.EUROPEAN, 1),
                                             (finance.Product.ASIAN, 8),
                                             (finance.Product.DIGITAL, 1)])
@pytest.mark.parametrize("antithetic", [True, False])
def test_adjoint_kernel_vs_finite_differences(product, n_steps, antithetic):
    def price(s, k, t, r, q, v):
        return finance.mc_price(spot=s, strike=k, expiry=t, rate=r, dividend=q, vol=v,
                                product=product, n_steps=n_steps, n_paths=512, seed=11,
                                antithetic=antithetic).price

    check_grads(price, (100.0, 105.0, 0.75, 0.04, 0.01, 0.3), modes=("rev", "fwd"))


def test_kernel_matches_numpy_reference():
    for check in CHECKS:
        args = check.make_inputs(np.random.default_rng(2), 64)
        np.testing.assert_allclose(check.cpu_fn(*args), check.reference_fn(*args), rtol=1e-12)


def test_cuda_kernels_match_cpu():
    from finance import _cuda

    rng = np.random.default_rng(1)
    for check in CHECKS:
        args = check.make_inputs(rng, 8)
        np.testing.assert_allclose(np.asarray(check.cuda_fn(*args)), check.cpu_fn(*args),
                                   rtol=1e-12, atol=1e-13)
    args = CHECKS[1].make_inputs(rng, 8)
    s_gpu, g_gpu = _cuda.gbm_samples_adjoint(*args)
    s_cpu, g_cpu = _kernels.gbm_samples_adjoint(*args)
    np.testing.assert_allclose(s_gpu, s_cpu, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(g_gpu, g_cpu, rtol=1e-12, atol=1e-13)
    r = finance.mc_price(**KW, n_paths=16, seed=4, device="cuda")
    assert abs(float(r.price) - float(finance.mc_price(**KW, n_paths=16, seed=4).price)) < 1e-12


def test_asian_below_european_and_antithetic_reduces_variance():
    a = finance.mc_price(**KW, product=finance.Product.ASIAN, n_steps=12, n_paths=20_000)
    e = finance.mc_price(**KW, n_paths=20_000)
    assert float(a.price) < float(e.price)
    plain = finance.mc_price(**KW, n_paths=20_000, antithetic=False)
    assert e.stderr < plain.stderr
    assert abs(float(plain.price) - float(e.price)) < 4 * plain.stderr


def test_digital_smoothing_gives_nonzero_greeks_and_reports_bias():
    r = finance.mc_price(**KW, product=finance.Product.DIGITAL, n_paths=40_000, seed=7)
    ref = finance.digital_price(**KW)
    assert abs(float(r.price) - ref) < 4 * r.stderr + abs(r.bias[0])
    assert abs(r.bias[0]) < 4 * r.bias[1] + 2e-3  # small: O(δ²)
    g = finance.mc_greeks(**KW, product=finance.Product.DIGITAL, n_paths=40_000, seed=7)
    ref_g = finance.greeks(finance.digital_price, **KW)
    for name in ("delta", "vega"):
        est, se = g[name]
        assert est != 0.0
        assert abs(est - ref_g[name]) < 4 * se + 0.05 * abs(ref_g[name]), name
    cv = finance.mc_price(**KW, product=finance.Product.DIGITAL, n_paths=40_000, seed=7,
                          control_variate=True)
    assert cv.bias == r.bias  # the smoothing bias is the payoff's, not the controlled sample's
    assert abs(float(cv.price) - ref) < 4 * cv.stderr + abs(cv.bias[0])
    sharp = finance.mc_greeks(**KW, product=finance.Product.DIGITAL, smoothing=0.0, n_paths=100)
    assert sharp["delta"][0] == 0.0  # why smoothing is the default: plain pathwise gives zero


@pytest.mark.parametrize("kw,err,match", [
    (dict(vol=-0.1), ValueError, "vol must be > 0"),
    (dict(expiry=0.0), ValueError, "expiry must be > 0"),
    (dict(spot=np.array([1.0, 2.0])), ValueError, "spot must be a scalar"),
    (dict(n_paths=3), ValueError, "n_paths must be even"),
    (dict(n_steps=0), ValueError, "n_steps must be an int >= 1"),
    (dict(product="asain"), ValueError, "product must be a finance.Product or one of"),
    (dict(product=1.0), TypeError, "product must be a finance.Product"),
    (dict(device="tpu"), ValueError, "device")])
def test_bad_input(kw, err, match):
    with pytest.raises(err, match=match):
        finance.mc_price(**{**KW, **kw})


def test_second_order_is_refused_not_wrong():
    f = lambda s: finance.mc_price(**{**KW, "spot": s}, n_paths=64).price  # noqa: E731
    with pytest.raises(NotImplementedError, match="first order only"):
        ds.grad(ds.grad(f))(100.0)


@pytest.mark.parametrize("product,n_steps,min_ratio", [(finance.Product.EUROPEAN, 1, 5.0),
                                                       (finance.Product.ASIAN, 12, 100.0)])
def test_control_variate_reduces_variance_and_stays_unbiased(product, n_steps, min_ratio):
    """Control variates (discounted S_T for the European, the geometric Asian for the arithmetic
    one): the reported variance ratio is large, the s.e. shrinks by its square root, and the
    price agrees with the closed form / the plain estimate within the standard errors."""
    kw = dict(**KW, product=product, n_steps=n_steps, n_paths=20_000, seed=8)
    plain = finance.mc_price(**kw)
    cv = finance.mc_price(**kw, control_variate=True)
    assert cv.variance_ratio > min_ratio
    assert cv.stderr * np.sqrt(cv.variance_ratio) == pytest.approx(plain.stderr, rel=1e-6)
    if product is finance.Product.EUROPEAN:
        assert abs(float(cv.price) - finance.bsm_price(**KW)) < 3 * cv.stderr
    else:
        ref = finance.mc_price(**{**kw, "n_paths": 400_000, "seed": 1}, control_variate=True)
        assert abs(float(cv.price) - float(ref.price)) < 3 * np.hypot(cv.stderr, ref.stderr)
    assert abs(float(cv.price) - float(plain.price)) < 3 * plain.stderr


def test_control_variate_greeks_match_ad_and_closed_form():
    kw = dict(**KW, n_paths=20_000, seed=6, control_variate=True)
    g = finance.mc_greeks(**kw)
    ref = finance.greeks(finance.bsm_price, **KW)
    plain = finance.mc_greeks(**{**kw, "control_variate": False})
    for name in ("price", "delta", "vega", "theta", "rho"):
        est, se = g[name]
        assert abs(est - ref[name]) < 4 * se, (name, est, ref[name], se)
    assert g["price"][1] < 0.5 * plain["price"][1]

    def price(s, v):
        return finance.mc_price(**{**kw, "spot": s, "vol": v}).price

    ds_delta, ds_vega = ds.grad(price, argnums=(0, 1))(KW["spot"], KW["vol"])
    assert ds_delta == pytest.approx(g["delta"][0], rel=1e-10)
    assert ds_vega == pytest.approx(g["vega"][0], rel=1e-10)


def test_geometric_asian_product_and_its_adjoint():
    kw = dict(**KW, product=finance.Product.GEOMETRIC_ASIAN, n_steps=6)
    r = finance.mc_price(**kw, n_paths=40_000, seed=2)
    ref = finance.geometric_asian_price(**KW, n_fixings=6)
    assert abs(float(r.price) - ref) < 3 * r.stderr

    def price(s, k, t, rr, q, v):
        return finance.mc_price(spot=s, strike=k, expiry=t, rate=rr, dividend=q, vol=v,
                                product=finance.Product.GEOMETRIC_ASIAN, n_steps=6, n_paths=256,
                                seed=3).price

    check_grads(price, (100.0, 105.0, 0.75, 0.04, 0.01, 0.3), modes=("rev",))


def test_confidence_intervals_reported():
    r = finance.mc_price(**KW, n_paths=20_000, seed=1)
    lo, hi = r.ci
    assert lo < float(r.price) < hi
    assert hi - lo == pytest.approx(2 * 1.959964 * r.stderr, rel=1e-6)
    lo99, hi99 = r.confidence_interval(0.99)
    assert lo99 < lo and hi < hi99
    q = finance.mc_price(**KW, qmc=True, n_paths=8 * 256, qmc_replicates=8)
    assert q.dof == 7  # Student's t with R − 1 degrees of freedom: wider than the normal's
    assert q.ci[1] - q.ci[0] == pytest.approx(2 * 2.364624 * q.stderr, rel=1e-5)
    with pytest.raises(ValueError, match="level must be in"):
        r.confidence_interval(1.5)
    with pytest.raises(ValueError, match="control_variate=True is not combined with qmc"):
        finance.mc_price(**KW, qmc=True, n_paths=16, control_variate=True)


@pytest.mark.parametrize("product,pricer", [(finance.Product.DIGITAL, finance.digital_price),
                                            (finance.Product.EUROPEAN, finance.bsm_price)])
@pytest.mark.parametrize("n_steps", [1, 4])
def test_likelihood_ratio_greeks_unbiased_within_4_se(product, pricer, n_steps):
    """LR Greeks of the *sharp* payoff against the closed-form Greeks, all six within 4 s.e.
    (no smoothing, no bias allowance), where plain pathwise gives zero for the digital."""
    g = finance.mc_greeks(**KW, product=product, n_steps=n_steps, n_paths=100_000, seed=12,
                          estimator=finance.GreekEstimator.LIKELIHOOD_RATIO)
    ref = finance.greeks(pricer, **KW)
    dk, dq = ds.grad(lambda k, q: pricer(**{**KW, "strike": k, "dividend": q}),
                     argnums=(0, 1))(105.0, 0.01)
    refs = dict(price=ref["price"], delta=ref["delta"], dual_delta=dk, theta=ref["theta"],
                rho=ref["rho"], dividend_rho=dq, vega=ref["vega"])
    for name, r in refs.items():
        est, se = g[name]
        assert abs(est - r) < 4 * se, (name, est, r, se)
    if product is finance.Product.DIGITAL:
        pw = finance.mc_greeks(**KW, product=product, smoothing=0.0, n_paths=1000)
        assert pw["delta"][0] == 0.0 and g["delta"][0] > 0.01


def test_likelihood_ratio_refusals():
    lr = finance.GreekEstimator.LIKELIHOOD_RATIO
    with pytest.raises(ValueError, match="LIKELIHOOD_RATIO runs on the CPU kernel"):
        finance.mc_greeks(**KW, estimator=lr, control_variate=True, n_paths=100)
    with pytest.raises(ValueError, match="estimator must be a finance.GreekEstimator or one of"):
        finance.mc_greeks(**KW, estimator="lr", n_paths=100)
    with pytest.raises(TypeError, match="estimator must be a finance.GreekEstimator"):
        finance.mc_greeks(**KW, estimator=2, n_paths=100)
