"""Fixed-coupon bonds on a :class:`ForwardCurve`: cash-flow schedules and prices.

Conventions (explicit, used by the bootstrap and the key-rate-duration demo):

* Face value 1; prices are per unit face, *dirty* (no accrued interest is subtracted).
* ``Frequency.AT_MATURITY`` (bills): one payment ``1 + coupon · maturity`` at maturity (simple
  interest), so a par bill satisfies ``D(T) (1 + y T) = 1``.
* ``Frequency.SEMIANNUAL`` etc.: coupons ``coupon / m`` at ``T, T − 1/m, T − 2/m, … > 0`` and the
  principal at ``T`` (the schedule is rolled back from maturity; a first short period still pays a
  full coupon — immaterial for the whole-period maturities used here).
* :func:`treasury_frequency`: US Treasury style — bills (maturity < 1 year) at maturity, notes and
  bonds semiannual.

References:
    B. Tuckman, A. Serrat, *Fixed Income Securities*, 3rd ed. (2011), ch. 1–2 (par yields, bills
    versus coupon bonds).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from diffsci.typing import Array, ArrayLike

from ._model import ForwardCurve, Frequency
from ._validate import as_real, check_real, plain

__all__ = ["bond_price", "cashflows", "treasury_frequency"]


def treasury_frequency(maturity: ArrayLike) -> Frequency:
    """``Frequency.AT_MATURITY`` below one year (bills), else ``Frequency.SEMIANNUAL``."""
    return Frequency.AT_MATURITY if maturity < 1.0 - 1e-12 else Frequency.SEMIANNUAL


def cashflows(maturity: ArrayLike,
frequency: Frequency | int | str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Payment times and the coupon multiplier of each: ``amount = mult · coupon + principal``.

    Returns:
        ``(times, coupon_mult, principal)``: plain arrays.
    """
    frequency = Frequency(frequency)
    if frequency is Frequency.AT_MATURITY:
        return np.array([maturity]), np.array([maturity]), np.array([1.0])
    m = int(frequency)
    n = int(np.ceil(maturity * m - 1e-9))
    times = maturity - np.arange(n)[::-1] / m
    principal = np.zeros(n)
    principal[-1] = 1.0
    return times, np.full(n, 1.0 / m), principal


def bond_price(curve: ForwardCurve, *, maturities: ArrayLike, coupons: ArrayLike,
               frequencies: Sequence[Frequency | int | str] | None = None) -> Array:
    """Dirty prices (per unit face) of fixed-coupon bonds discounted on ``curve``.

    Units: maturities in years; coupons as annual rates in decimals (0.05 is 5 %), paid
    ``coupon / m`` per period; prices per unit face. AD derivatives are per unit of each input
    (per 1.00 of coupon rate, per 1.00 of a forward rate).

    Args:
        curve: a :class:`ForwardCurve` (differentiable in its forwards).
        maturities: bond maturities > 0 (years), a sequence.
        coupons: annual coupon rates (decimals), one per bond (differentiable).
        frequencies: one :class:`Frequency` per bond; default :func:`treasury_frequency`.

    Returns:
        An array of prices, one per bond.

    Raises:
        TypeError: curve not a ForwardCurve; a bool or non-numeric maturity or coupon.
        ValueError: non-finite or non-positive maturities, non-finite coupons, or a number of
            coupons or frequencies that does not match the maturities (naming them).

    Example:
        >>> flat = ForwardCurve(times=np.array([30.0]), forwards=np.array([0.03]))
        >>> round(float(bond_price(flat, maturities=[2.0], coupons=[0.05])[0]), 6)
        1.038098
    """
    if not isinstance(curve, ForwardCurve):
        raise TypeError(f"bond_price: curve must be a ForwardCurve, got {type(curve).__name__}")
    check_real("bond_price", "maturities", maturities, low=0.0)
    check_real("bond_price", "coupons", coupons)
    mats = plain(maturities).reshape(-1)
    coupons = as_real(coupons)
    if np.shape(plain(coupons)) not in ((mats.size,), ()):
        raise ValueError(f"bond_price: coupons must have shape ({mats.size},) (one per bond), "
                         f"got {np.shape(plain(coupons))}")
    if frequencies is None:
        frequencies = [treasury_frequency(t) for t in mats]
    if len(frequencies) != mats.size:
        raise ValueError(f"bond_price: frequencies must have {mats.size} entries, got "
                         f"{len(frequencies)}")
    coupons = coupons * np.ones(mats.size)
    # one matrix product for every cash flow of every bond
    rows, times, mult, principal = [], [], [], []
    for j, (t, f) in enumerate(zip(mats, frequencies)):
        tj, mj, pj = cashflows(float(t), f)
        rows.append(np.full(tj.size, j))
        times.append(tj)
        mult.append(mj)
        principal.append(pj)
    rows, times = np.concatenate(rows), np.concatenate(times)
    mult, principal = np.concatenate(mult), np.concatenate(principal)
    disc = curve.discount(times)
    sel = (rows[None, :] == np.arange(mats.size)[:, None]).astype(np.float64)  # (bonds, flows)
    return (sel * mult) @ disc * coupons + sel @ (disc * principal)
