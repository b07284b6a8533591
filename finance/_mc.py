"""Monte Carlo pricing under Black–Scholes (GBM) with pathwise-adjoint Greeks.

:func:`mc_price` is differentiable with diffsci (``ds.grad`` of ``mc_price(...).price`` runs the
fused path+adjoint kernel once, so price and all six first-order sensitivities cost ≈ one
simulation; see ``benchmarks/bench_finance.py``). :func:`mc_greeks` returns the same Greeks with
their standard errors from the per-sample pathwise adjoints.

Discontinuous payoffs: the pathwise derivative of an indicator is zero almost surely, so
``Product.DIGITAL`` replaces ``1{w(X − K) > 0}`` by ``N(w(X − K)/δ)`` with ``δ = smoothing · K``
(Glasserman 2003, §7.2.3 on smoothing); the smoothing bias is estimated on the same paths as the
mean of (smoothed − sharp) payoffs and reported with its standard error in ``MCResult.bias``.

References:
    Giles & Glasserman, "Smoking adjoints", Risk (2006). Glasserman, *Monte Carlo Methods in
    Financial Engineering* (2003), §4.2 (antithetic variates), §7.2 (pathwise estimators);
    (2004), §3.1 and §5.5 (Brownian bridge and quasi-Monte Carlo, ``qmc=True``).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from scipy.special import ndtri, stdtrit

import diffsci as ds
from diffsci.devices import check_device
from diffsci.extend import value_mask
from diffsci.random import check_seed
from diffsci.typing import Array, ArrayLike

from . import _kernels
from ._analytic.asian import geometric_asian_price
from ._ops import McConfig, gbm_samples
from ._validate import as_enum, check_bool, check_real, plain

__all__ = ["GreekEstimator", "MCGreek", "MCResult", "Product", "mc_greeks", "mc_price"]

#: The differentiated inputs, in kernel order, and the Greek each gradient becomes.
_ARGS = ("spot", "strike", "expiry", "rate", "dividend", "vol")


class Product(enum.IntEnum):
    """Payoffs on the monitoring grid ``t_k = kT/n``, ``k = 1..n``."""

    EUROPEAN = _kernels.EUROPEAN  # max(w(S_T − K), 0)
    ASIAN = _kernels.ASIAN        # max(w(mean_k S_{t_k} − K), 0), arithmetic average
    DIGITAL = _kernels.DIGITAL    # 1{w(S_T − K) > 0} (cash 1), smoothed for Greeks
    GEOMETRIC_ASIAN = _kernels.GEOMETRIC_ASIAN  # max(w((Π_k S_{t_k})^{1/n} − K), 0)


class GreekEstimator(enum.Enum):
    """How :func:`mc_greeks` differentiates the expectation."""

    PATHWISE = "pathwise"                  # adjoint of the payoff along the path (smoothed digital)
    LIKELIHOOD_RATIO = "likelihood_ratio"  # payoff × score of the path density (sharp payoffs)


@dataclass(frozen=True)
class MCResult:
    """A Monte Carlo price with its standard error and confidence interval.

    Attributes:
        price: the estimate (differentiable: traced when the inputs are).
        stderr: its standard error (plain float).
        n_samples: independent samples (antithetic pairs count once).
        bias: ``(estimate, stderr)`` of the smoothing bias (digital), else None.
        variance_ratio: with a control variate, the estimated variance of the plain estimator
            over that of the controlled one (the variance reduction factor), else None.
        dof: degrees of freedom of the standard error when it comes from few replicates (QMC:
            R − 1), so intervals use Student's t; None: the normal approximation.
        ci: the 95 % confidence interval ``price ± 1.96·stderr`` (plain floats; Student's t
            quantile when ``dof`` is set); other levels from :meth:`confidence_interval`.

    Example:
        >>> r = MCResult(price=10.0, stderr=0.1, n_samples=1000)
        >>> tuple(round(x, 3) for x in r.ci)
        (9.804, 10.196)
    """

    price: Array
    stderr: float
    n_samples: int
    bias: tuple | None = None
    variance_ratio: float | None = None
    dof: int | None = None

    @property
    def ci(self):
        return self.confidence_interval(0.95)

    def confidence_interval(self, level: float = 0.95) -> tuple[Any, Any]:
        """The interval ``price ± z·stderr``, ``z = Φ⁻¹((1 + level)/2)`` (or the t quantile).

        Raises:
            ValueError: ``level`` not in (0, 1).
        """
        z = _z(level, self.dof)
        p = float(plain(self.price))
        return (p - z * self.stderr, p + z * self.stderr)


class MCGreek(tuple):
    """A Monte Carlo Greek: ``(estimate, stderr)`` with its sample count and intervals.

    A 2-tuple (``est, se = g["delta"]`` unpacks as before) with the attributes of
    :class:`MCResult`: ``value`` (= ``[0]``), ``stderr`` (= ``[1]``), ``n_samples``, ``dof``,
    ``ci`` (95 %: ``value ± 1.96·stderr``, or Student's t with ``dof``) and
    :meth:`confidence_interval`. Estimates and errors may be arrays (basket Greeks per asset).

    Example:
        >>> g = MCGreek(0.5, 0.01, n_samples=10_000)
        >>> tuple(round(x, 4) for x in g.ci), g.value
        ((0.4804, 0.5196), 0.5)
    """

    def __new__(cls, value, stderr, *, n_samples, dof=None):
        self = super().__new__(cls, (value, stderr))
        self.n_samples = int(n_samples)
        self.dof = None if dof is None else int(dof)
        return self

    def __getnewargs_ex__(self):
        return (self[0], self[1]), {"n_samples": self.n_samples, "dof": self.dof}

    @property
    def value(self):
        return self[0]

    @property
    def stderr(self):
        return self[1]

    @property
    def ci(self):
        return self.confidence_interval(0.95)

    def confidence_interval(self, level: float = 0.95) -> tuple[Any, Any]:
        """``value ± z·stderr`` with ``z = Φ⁻¹((1 + level)/2)`` (or the t quantile with ``dof``).

        Raises:
            ValueError: ``level`` not in (0, 1).
        """
        z = _z(level, self.dof)
        return (self[0] - z * self[1], self[0] + z * self[1])


def _z(level, dof):
    """The two-sided quantile of a ``level`` interval: normal, or Student's t with ``dof``."""
    if not 0.0 < level < 1.0:
        raise ValueError(f"confidence_interval: level must be in (0, 1), got {level!r}")
    q = 0.5 + 0.5 * level
    return float(ndtri(q)) if dof is None else float(stdtrit(dof, q))

    def __repr__(self):
        return f"MCGreek(value={self[0]!r}, stderr={self[1]!r}, n_samples={self.n_samples})"


def greek_results(names, est, se, n_samples, sign=None, dof=None):
    """``{name: MCGreek}`` from per-column estimates and standard errors (``sign`` per column)."""
    sign = np.ones(len(names)) if sign is None else sign
    return {k: MCGreek(float(s * e), float(v), n_samples=n_samples, dof=dof)
            for k, s, e, v in zip(names, sign, est, se)}


def _config(who, kw):
    """Validate the keyword arguments; return (args tuple, McConfig)."""
    for name in ("spot", "strike", "expiry", "vol"):
        check_real(who, name, kw[name], low=0.0)
    for name in ("rate", "dividend"):
        check_real(who, name, kw[name])
    for name in _ARGS:
        if np.shape(plain(kw[name])) != ():
            raise ValueError(f"{who}: {name} must be a scalar (Monte Carlo prices one option "
                             f"per call), got shape {np.shape(plain(kw[name]))}")
    is_call = check_bool(who, "is_call", kw["is_call"])
    if is_call.shape != ():
        raise ValueError(f"{who}: is_call must be a scalar bool, got shape {is_call.shape}")
    product = kw["product"] = as_enum(who, "product", kw["product"], Product)
    n_paths, n_steps = kw["n_paths"], kw["n_steps"]
    antithetic = kw["antithetic"]
    antithetic = not kw.get("qmc", False) if antithetic is None else bool(antithetic)
    if kw.get("control_variate") and kw.get("qmc"):
        raise ValueError(f"{who}: control_variate=True is not combined with qmc=True")
    if not (isinstance(n_paths, int | np.integer) and n_paths >= 2):
        raise ValueError(f"{who}: n_paths must be an int >= 2, got {n_paths!r}")
    if antithetic and n_paths % 2:
        raise ValueError(f"{who}: n_paths must be even with antithetic=True, got {n_paths}")
    if not (isinstance(n_steps, int | np.integer) and n_steps >= 1):
        raise ValueError(f"{who}: n_steps must be an int >= 1, got {n_steps!r}")
    smoothing = kw["smoothing"]
    if smoothing is None:
        smoothing = 0.02 if product is Product.DIGITAL else 0.0
    check_real(who, "smoothing", smoothing, low=0.0, strict=False)
    cfg = McConfig(w=1.0 if is_call else -1.0, product=int(product), n_steps=int(n_steps),
                   n_samples=int(n_paths // 2 if antithetic else n_paths), antithetic=antithetic,
                   smoothing=float(smoothing), seed=check_seed(kw["seed"], who),
                   device=check_device(kw["device"]))
    return tuple(kw[name] for name in _ARGS), cfg


def mc_price(*, spot: ArrayLike, strike: ArrayLike, expiry: ArrayLike, rate: ArrayLike = 0.0,
             dividend: ArrayLike = 0.0, vol: ArrayLike, is_call: bool = True,
             product: Product | str = Product.EUROPEAN, n_paths: int = 100_000, n_steps: int = 1,
             seed: int = 0, antithetic: bool | None = None, smoothing: float | None = None,
             device: str = "cpu", qmc: bool = False, qmc_replicates: int = 8,
             control_variate: bool = False) -> MCResult:
    """Monte Carlo price of a GBM product, differentiable by its pathwise adjoint.

    Units: ``expiry`` in years; ``rate``, ``dividend`` continuously compounded per year;
    ``vol`` per √year (0.2 = 20 %); derivatives are per unit of each input: theta is
    −∂/∂T per year, vega per 1.00 of volatility, rho per 1.00 of rate.

    Args:
        spot, strike, expiry, vol: scalars > 0; rate, dividend: scalars (continuous).
        is_call: scalar bool.
        product: a :class:`Product` or its name (``"european"``, ``"asian"``, ``"digital"``,
            ``"geometric_asian"``).
        n_paths: simulated paths (even with ``antithetic``; pairs count as one sample).
        n_steps: monitoring dates (Asian average) or steps to expiry (the exact GBM solution is
            used, so European prices do not depend on it).
        seed: the counter-based generator's seed: the same seed gives the same paths.
        antithetic: pair each path with its mirror (``Z → −Z``); default (None): True for
            plain Monte Carlo, False with ``qmc``.
        smoothing: digital payoff width ``δ/K`` (default 0.02 for DIGITAL; 0 = sharp, whose
            pathwise Greeks are zero).
        device: ``"cpu"`` (Numba) or ``"cuda"`` (numba.cuda, one thread per path).
        qmc: randomised quasi-Monte Carlo (EUROPEAN/ASIAN, CPU, NumPy over diffsci): Owen-scrambled
            Sobol points (one dimension per step), inverse-normal CDF, Brownian-bridge paths
            (``finance._qmc``; DERIVATIONS §QMC). ``n_paths`` is the total over
            ``qmc_replicates`` independent scramblings and must be ``qmc_replicates × 2^m``
            (``× 2`` more with antithetic); otherwise ValueError (a Sobol set that is not a
            power of two loses its balance and its error rate).
        qmc_replicates: independent scramblings ``R ≥ 2`` (default 8); with ``qmc`` the price
            is the mean of the replicate means, ``stderr`` their standard deviation over √R, and
            ``n_samples`` is R.
        control_variate: subtract ``b (C − E[C])`` from each sample, with the control C on the
            same paths: the geometric-average Asian (closed form :func:`geometric_asian_price`
            with ``n_fixings = n_steps``) for ``Product.ASIAN``, the discounted underlying
            ``e^{−rT} S_T`` (mean ``S e^{−qT}``) for the others; ``b = Cov(Y, C)/Var(C)``
            estimated on the same samples and held fixed under differentiation (Glasserman
            2003, §4.1; the O(1/n) bias of an estimated b is negligible beside the s.e.). The
            estimated variance reduction ``Var(Y)/Var(Y − bC)`` is ``MCResult.variance_ratio``.
            Not with ``qmc``.

    Returns:
        :class:`MCResult`.

    Raises:
        ValueError/TypeError: invalid inputs, naming the argument.

    Example:
        >>> r = mc_price(spot=100.0, strike=100.0, expiry=1.0, rate=0.05, vol=0.2)
        >>> abs(float(r.price) - 10.450584) < 4 * r.stderr
        True
    """
    args, cfg = _config("mc_price", dict(locals()))
    if qmc:
        from ._qmc import qmc_price

        price, se = qmc_price(args, cfg, int(n_paths), qmc_replicates)
        return MCResult(price=price, stderr=se, n_samples=int(qmc_replicates),
                        dof=int(qmc_replicates) - 1)
    samples = gbm_samples(*args, cfg)
    raw = samples  # the smoothing bias is that of the uncontrolled payoff
    n = cfg.n_samples
    ratio = None
    # the plain statistics (b, s.e., bias) are recomputed by the compiled code under diffsci.jit
    if control_variate:
        ccfg, mean_c = _control(args, cfg)
        control = gbm_samples(*args, ccfg)
        b = value_mask(_beta, samples, control)
        samples = samples - b * (control - mean_c)
        ratio = value_mask(_variance_ratio, raw, samples)
    price = np.mean(samples)
    se = stderr_of(samples, n)
    bias = None
    if cfg.product == _kernels.DIGITAL and cfg.smoothing > 0:  # product may be its name
        m = value_mask(_smoothing_bias, raw, *args, cfg)
        bias = (float(m[0]), float(m[1])) if isinstance(m, np.ndarray) else (m[0], m[1])
    return MCResult(price=price, stderr=se, n_samples=n, bias=bias, variance_ratio=ratio)


def stderr_of(samples, n):
    """``std(samples, ddof=1)/√n``, a plain float (recomputed by the compiled code under
    diffsci.jit)."""
    return value_mask(_stderr, samples, n)


def _stderr(samples, n):
    return float(np.std(plain(samples), ddof=1) / np.sqrt(n))


def _variance_ratio(raw, controlled):
    return float(np.var(plain(raw), ddof=1)) / float(np.var(plain(controlled), ddof=1))


def _smoothing_bias(raw, *args):
    """Mean and s.e. of the smoothed minus the sharp payoffs on the same paths."""
    *args, cfg = args
    sharp = _kernels.gbm_samples(*_plain(args, cfg, smoothing=0.0)) if cfg.device == "cpu" \
        else _cuda_samples(args, cfg)
    diff = plain(raw) - sharp
    return np.array([float(diff.mean()), float(diff.std(ddof=1) / np.sqrt(cfg.n_samples))])


def _control(args, cfg):
    """The control variate's config and its exact mean (traced when the inputs are)."""
    spot, strike, expiry, rate, dividend, vol = args
    if cfg.product == _kernels.ASIAN:
        mean = geometric_asian_price(spot=spot, strike=strike, expiry=expiry, rate=rate,
                                     dividend=dividend, vol=vol, is_call=cfg.w > 0,
                                     n_fixings=cfg.n_steps)
        return replace(cfg, product=_kernels.GEOMETRIC_ASIAN, smoothing=0.0), mean
    return replace(cfg, product=_kernels.FORWARD, smoothing=0.0), spot * np.exp(-dividend * expiry)


def _beta(y, c):
    """The variance-minimising control coefficient ``Cov(Y, C)/Var(C)`` (plain float)."""
    c0 = c - c.mean()
    return float(np.dot(y - y.mean(), c0) / max(np.dot(c0, c0), 1e-300))


def _plain(args, cfg, smoothing=None):
    return (np.uint64(cfg.seed), *(float(plain(a)) for a in args), cfg.w, cfg.product,
            cfg.n_steps, cfg.n_samples, cfg.antithetic,
            cfg.smoothing if smoothing is None else smoothing)


def _cuda_samples(args, cfg):
    from . import _cuda

    return _cuda.gbm_samples(*_plain(args, cfg, smoothing=0.0))


def mc_greeks(*, spot: ArrayLike, strike: ArrayLike, expiry: ArrayLike, rate: ArrayLike = 0.0,
              dividend: ArrayLike = 0.0, vol: ArrayLike, is_call: bool = True,
              product: Product | str = Product.EUROPEAN, n_paths: int = 100_000, n_steps: int = 1,
              seed: int = 0, antithetic: bool | None = None, smoothing: float | None = None,
              device: str = "cpu", qmc: bool = False, qmc_replicates: int = 8,
              control_variate: bool = False,
              estimator: GreekEstimator | str = GreekEstimator.PATHWISE,
              second_order: bool = False) -> dict[str, MCGreek]:
    """Price and first-order Greeks with standard errors, from one fused path+adjoint sweep.

    Units: ``expiry`` in years; ``rate``, ``dividend`` continuously compounded per year;
    ``vol`` per √year (0.2 = 20 %); derivatives are per unit of each input: theta is
    −∂/∂T per year, vega per 1.00 of volatility, rho per 1.00 of rate.

    Same arguments as :func:`mc_price`. The values equal ``ds.grad`` of ``mc_price(...).price``
    on the same seed (the same kernel); the standard errors come from the per-sample adjoints.
    With ``qmc=True`` the Greeks are ``ds.grad`` of each scrambling's price (pathwise, NumPy over
    diffsci) and the standard errors those of the ``qmc_replicates`` replicate means.

    ``estimator=GreekEstimator.LIKELIHOOD_RATIO`` (CPU, no control variate or QMC) weights the
    *sharp* payoff by the score of the path density instead (Broadie & Glasserman 1996;
    Glasserman 2003, §7.3; DERIVATIONS §LR): unbiased for discontinuous payoffs (the digital, with
    no smoothing and no bias), at a larger variance; the strike Greek comes from the payoff's
    homogeneity in (S, K).

    ``second_order=True`` (EUROPEAN or DIGITAL, CPU, no qmc or control variate) adds ``gamma``
    (∂²/∂S²), ``vanna`` (∂²/∂S∂σ) and ``volga`` (∂²/∂σ²) by vibrato Monte Carlo (Giles 2009;
    DERIVATIONS §VB): ln S_T is one Gaussian step N(μ, s²), whose likelihood-ratio weights (Hermite
    polynomials of Z) are averaged over the antithetic pair e^{μ ± sZ} with the control h(e^μ);
    unbiased for the sharp payoffs (no smoothing), on the same paths, with standard errors.

    Returns:
        A dict ``name -> MCGreek`` (an ``(estimate, stderr)`` tuple with ``ci``, ``n_samples``)
        for ``price``, ``delta`` (∂/∂spot), ``dual_delta`` (∂/∂strike), ``theta`` (−∂/∂expiry,
        per year), ``rho`` (∂/∂rate, per 1.00 of rate), ``dividend_rho`` (∂/∂dividend) and
        ``vega`` (∂/∂vol, per 1.00 of volatility).

    Example:
        >>> g = mc_greeks(spot=100.0, strike=100.0, expiry=1.0, rate=0.05, vol=0.2)
        >>> abs(g["delta"][0] - 0.636831) < 4 * g["delta"][1]
        True
    """
    args, cfg = _config("mc_greeks", dict(locals()))
    out = _first_order_greeks(args, cfg, estimator, qmc, qmc_replicates, control_variate,
                              int(n_paths))
    if second_order:
        prod = Product(cfg.product)
        if prod not in (Product.EUROPEAN, Product.DIGITAL) or qmc or control_variate or \
                cfg.device != "cpu":
            raise ValueError(f"mc_greeks: second_order=True needs product EUROPEAN or DIGITAL on "
                             f"the CPU without qmc or control_variate, got product={prod.name}, "
                             f"qmc={qmc}, control_variate={control_variate}, "
                             f"device={cfg.device!r}")
        rows = _kernels.gbm_vibrato(np.uint64(cfg.seed), *(float(plain(a)) for a in args), cfg.w,
                                    cfg.product, cfg.n_steps, cfg.n_samples)
        est = rows.mean(axis=0)
        se = rows.std(axis=0, ddof=1) / np.sqrt(cfg.n_samples)
        out.update(greek_results(("gamma", "vanna", "volga"), est[2:], se[2:], cfg.n_samples))
    return out


def _first_order_greeks(args, cfg, estimator, qmc, qmc_replicates, control_variate, n_paths):
    names = ("price", "delta", "dual_delta", "theta", "rho", "dividend_rho", "vega")
    sign = np.array([1, 1, 1, -1, 1, 1, 1.0])
    estimator = as_enum("mc_greeks", "estimator", estimator, GreekEstimator)
    if estimator is GreekEstimator.LIKELIHOOD_RATIO:
        if qmc or control_variate or cfg.device != "cpu":
            raise ValueError("mc_greeks: estimator=LIKELIHOOD_RATIO runs on the CPU kernel "
                             "without qmc or control_variate")
        plain_args = _plain(args, cfg)[:-1]  # the sharp payoff: no smoothing argument
        samples, grads = _kernels.gbm_samples_lr(*plain_args)
        cols = np.column_stack([samples, grads])
        est = cols.mean(axis=0)
        se = cols.std(axis=0, ddof=1) / np.sqrt(cfg.n_samples)
        return greek_results(names, est, se, cfg.n_samples, sign)
    if qmc:
        from ._qmc import qmc_greeks

        rows = qmc_greeks(args, cfg, n_paths, qmc_replicates)
        est = rows.mean(axis=0)
        se = rows.std(axis=0, ddof=1) / np.sqrt(len(rows))
        return greek_results(names, est, se, len(rows), sign, dof=len(rows) - 1)
    if cfg.device == "cuda":
        from . import _cuda as backend
    else:
        backend = _kernels
    samples, grads = backend.gbm_samples_adjoint(*_plain(args, cfg))
    n = cfg.n_samples
    cols = np.column_stack([samples, grads])
    if control_variate:
        ccfg, _ = _control(args, cfg)
        c_samples, c_grads = backend.gbm_samples_adjoint(*_plain(args, ccfg))
        x = tuple(np.float64(plain(a)) for a in args)
        mean_c, mean_grad = ds.value_and_grad(lambda *a: _control(a, cfg)[1],
                                              argnums=tuple(range(6)))(*x)
        b = _beta(samples, c_samples)
        cols = cols - b * (np.column_stack([c_samples, c_grads])
                           - np.array([float(mean_c), *(float(g) for g in mean_grad)]))
    est = cols.mean(axis=0)
    se = cols.std(axis=0, ddof=1) / np.sqrt(n)
    return greek_results(names, est, se, n, sign)
