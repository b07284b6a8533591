"""Option pricing, Greeks by AD, implied volatility and yield curves, built on diffsci.

>>> import diffsci as ds, finance
>>> float(finance.bsm_price(spot=100.0, strike=100.0, expiry=1.0, rate=0.05, vol=0.2))
10.450583572185565
>>> g = finance.greeks(finance.bsm_price, spot=100.0, strike=100.0, expiry=1.0, rate=0.05, vol=0.2)
>>> round(float(g["vega"]), 3)
37.524

Contents:

* closed forms: :func:`bsm_price` (with dividend yield), :func:`black76_price`,
  :func:`bachelier_price`, :func:`digital_price` (cash-or-nothing), :func:`heston_price`
  (Fourier, little-Heston-trap characteristic function), :func:`barrier_price` (knock-out and
  knock-in, Reiner–Rubinstein/Haug), :func:`geometric_asian_price` (Kemna–Vorst, continuous
  or discrete fixings), :func:`merton_jump_price` (Merton's jump-diffusion series, documented
  truncation), :func:`lookback_price` (floating/fixed strike, continuous monitoring, or discrete
  by the Broadie–Glasserman–Kou shift);
* :func:`greeks` (price, delta, gamma, vega, theta, rho, vanna, volga of any pricer by AD) and
  :func:`implied_vol` (bracketed Newton over the whole price domain, IFT gradients);
* rates: :func:`bootstrap` (the paper's Newton bootstrap, each step using ``ds.grad``),
  :func:`bond_price`, :func:`key_rate_durations` (nested AD), :class:`ForwardCurve`;
* Monte Carlo: :func:`mc_price`, :func:`mc_greeks` (GBM European/Asian/digital, Numba and
  numba.cuda path kernels with pathwise adjoints, antithetics, ``control_variate=True``, standard
  errors and confidence intervals on every :class:`MCResult`, likelihood-ratio Greeks for sharp
  payoffs via :class:`GreekEstimator`; ``qmc=True``:
  scrambled Sobol with Brownian-bridge paths, s.e. from independent scramblings);
* :func:`mc_barrier_price` (knock-outs, Brownian-bridge survival weights: unbiased for
  continuous monitoring and pathwise-differentiable);
* :func:`basket_mc_price`, :func:`basket_mc_greeks` (correlated multi-asset GBM by Cholesky,
  arithmetic/geometric baskets, pathwise Greeks by AD with standard errors) and the closed form
  :func:`geometric_basket_price`;
* :func:`heston_mc_price` (full-truncation Euler on Numba/numba.cuda kernels with a hand-written
  reverse sweep, :func:`heston_mc_greeks` for all ten Greeks with s.e.; or Andersen's QE in NumPy);
* :func:`merton_mc_price` (exact jump-diffusion paths; pathwise Greeks plus a likelihood-ratio term
  for the jump intensity), :func:`local_vol_mc_price` (log-Euler under any σ(t, S), e.g.
  :class:`ParametricLocalVol` or :class:`DupireLocalVol` of an implied-vol surface, its
  derivatives by nested forward-mode AD), :func:`mc_lookback_price` (bridge-sampled extremes:
  unbiased for continuous monitoring);
* American exercise: :func:`tree_price` (Cox–Ross–Rubinstein, binomial Black–Scholes last step,
  smooth in the spot so AD delta/gamma are the lattice's), :func:`lsm_price` (Longstaff–Schwartz,
  pathwise Greeks with the exercise boundary held fixed), :func:`fd_price` (Crank–Nicolson with a
  Rannacher start and projection; also European);
* calibration: :func:`calibrate_heston` (L-BFGS-B, or Levenberg–Marquardt with exact forward-mode
  AD Jacobians; finite differences to compare).

Pricers take keyword-only, broadcastable (batched) arguments (Monte Carlo: scalars) and are
differentiable with diffsci (closed forms to any order; Monte Carlo to first order); arguments are
validated once at the boundary. Derivations of the hand-written rules: ``finance/DERIVATIONS.md``.
"""

from ._analytic import (
    BGK_BETA,
    MERTON_MAX_TERMS,
    bachelier_price,
    barrier_price,
    black76_price,
    bsm_price,
    digital_price,
    geometric_asian_price,
    geometric_basket_price,
    heston_price,
    lookback_price,
    merton_jump_price,
)
from ._barrier_mc import mc_barrier_price
from ._basket_mc import Basket, basket_mc_greeks, basket_mc_price
from ._bonds import bond_price, cashflows, treasury_frequency
from ._bootstrap import PAPER_MATURITIES, PAPER_PAR_RATES, bootstrap, key_rate_durations
from ._calibrate import BOUNDS as HESTON_BOUNDS
from ._calibrate import CalibrationResult, Gradient, calibrate_heston
from ._calibrate import Method as CalibrationMethod
from ._fd import fd_price
from ._greeks import GREEKS, greeks
from ._heston_mc import HESTON_GREEKS, HestonScheme, heston_mc_greeks, heston_mc_price
from ._implied_vol import implied_vol
from ._jump_mc import merton_mc_price
from ._local_vol_mc import DupireLocalVol, ParametricLocalVol, local_vol_mc_price
from ._lookback_mc import mc_lookback_price
from ._lsm import lsm_price
from ._mc import GreekEstimator, MCGreek, MCResult, Product, mc_greeks, mc_price
from ._model import ForwardCurve, Frequency, HestonParams
from ._tree import TREE_GREEKS, tree_greeks, tree_price

__all__ = [
    "BGK_BETA",
    "DupireLocalVol",
    "ParametricLocalVol",
    "local_vol_mc_price",
    "lookback_price",
    "mc_lookback_price",
    "merton_mc_price",
    "GREEKS",
    "GreekEstimator",
    "MERTON_MAX_TERMS",
    "HESTON_BOUNDS",
    "PAPER_MATURITIES",
    "PAPER_PAR_RATES",
    "CalibrationMethod",
    "CalibrationResult",
    "ForwardCurve",
    "Frequency",
    "Gradient",
    "HestonParams",
    "HestonScheme",
    "MCResult",
    "MCGreek",
    "Product",
    "bachelier_price",
    "barrier_price",
    "bond_price",
    "bootstrap",
    "calibrate_heston",
    "cashflows",
    "key_rate_durations",
    "lsm_price",
    "mc_barrier_price",
    "mc_greeks",
    "mc_price",
    "treasury_frequency",
    "tree_price",
    "tree_greeks",
    "TREE_GREEKS",
    "black76_price",
    "bsm_price",
    "digital_price",
    "fd_price",
    "geometric_asian_price",
    "geometric_basket_price",
    "basket_mc_greeks",
    "basket_mc_price",
    "Basket",
    "merton_jump_price",
    "greeks",
    "heston_mc_price",
    "heston_mc_greeks",
    "HESTON_GREEKS",
    "heston_price",
    "implied_vol",
]
