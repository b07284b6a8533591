"""Closed-form pricers, one engine per module (each a few formulas in differentiable NumPy)."""

from .asian import geometric_asian_price
from .bachelier import bachelier_price
from .barrier import barrier_price
from .basket import geometric_basket_price
from .black76 import black76_price
from .bsm import bsm_price
from .digital import digital_price
from .heston import heston_price
from .lookback import BGK_BETA, lookback_price
from .merton import MERTON_MAX_TERMS, merton_jump_price

__all__ = [
    "BGK_BETA",
    "lookback_price",
    "MERTON_MAX_TERMS",
    "geometric_asian_price",
    "geometric_basket_price",
    "merton_jump_price",
    "bachelier_price",
    "barrier_price",
    "black76_price",
    "bsm_price",
    "digital_price",
    "heston_price",
]
