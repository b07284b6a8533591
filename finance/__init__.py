"""Option pricing, Greeks by AD, implied volatility and yield curves, built on diffsci.

>>> import diffsci as ds, finance
>>> float(finance.bsm_price(spot=100.0, strike=100.0, expiry=1.0, rate=0.05, vol=0.2))
10.450583572185565
>>> g = finance.greeks(finance.bsm_price, spot=100.0, strike=100.0, expiry=1.0, rate=0.05, vol=0.2)
>>> round(float(g["vega"]), 3)
37.524

Every pricer takes keyword-only, broadcastable (batched) arguments and is differentiable to any
order with diffsci; arguments are validated once at the boundary. Derivations of the hand-written
rules are in ``finance/DERIVATIONS.md``.
"""

from ._analytic import bachelier_price, black76_price, bsm_price, digital_price, heston_price
from ._bonds import bond_price, cashflows, treasury_frequency
from ._bootstrap import PAPER_MATURITIES, PAPER_PAR_RATES, bootstrap, key_rate_durations
from ._calibrate import BOUNDS as HESTON_BOUNDS
from ._calibrate import CalibrationResult, Gradient, calibrate_heston
from ._greeks import GREEKS, greeks
from ._implied_vol import implied_vol
from ._mc import MCResult, Product, mc_greeks, mc_price
from ._model import ForwardCurve, Frequency, HestonParams

__all__ = [
    "GREEKS",
    "HESTON_BOUNDS",
    "PAPER_MATURITIES",
    "PAPER_PAR_RATES",
    "CalibrationResult",
    "ForwardCurve",
    "Frequency",
    "Gradient",
    "HestonParams",
    "MCResult",
    "Product",
    "bachelier_price",
    "bond_price",
    "bootstrap",
    "calibrate_heston",
    "cashflows",
    "key_rate_durations",
    "mc_greeks",
    "mc_price",
    "treasury_frequency",
    "black76_price",
    "bsm_price",
    "digital_price",
    "greeks",
    "heston_price",
    "implied_vol",
]
