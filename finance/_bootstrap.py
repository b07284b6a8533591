"""The paper's yield-curve demo: bootstrap by Newton steps that use AD, then nested AD through it.

:func:`bootstrap` builds a :class:`ForwardCurve` from par rates maturity by maturity: the forward
on ``(t_{i−1}, t_i]`` solves ``par_price_i(f_i) = 1`` by Newton's method, each step's derivative
``∂par_price_i/∂f_i`` taken with :func:`diffsci.grad`. The iterations run on whatever the inputs
are, so differentiating :func:`bootstrap` (or a bond price on its curve) with respect to the par
rates differentiates *through* the solver, including through the inner ``grad`` calls: nested
AD. :func:`key_rate_durations` is that Jacobian, normalised by price.

Newton's iterate converges quadratically and so does its derivative with respect to the par rates
(the derivative of the fixed-point map vanishes at the root), so the unrolled iterations give the
implicit-function derivative to round-off once the value has converged; one extra step is taken
after the step size falls below ``NEWTON_TOL`` to make sure.

References:
    M. Innes et al., "A differentiable programming system to bridge machine learning and
    scientific computing", arXiv:1907.07587 (2019), §"Financial derivatives" (key-rate durations by
    nested AD). P. S. Hagan, G. West, "Interpolation methods for curve construction", Appl. Math.
    Finance 13 (2006) 89–129, §3 (piecewise-constant forwards). T. Ho, "Key rate durations",
    J. Fixed Income 2 (1992) 29–44.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

import diffsci as ds
from diffsci.extend import observed
from diffsci.typing import Array, ArrayLike

from ._bonds import bond_price, cashflows, treasury_frequency
from ._model import ForwardCurve, Frequency
from ._validate import as_real, check_real, plain

__all__ = ["PAPER_MATURITIES", "PAPER_PAR_RATES", "bootstrap", "key_rate_durations"]

#: US Treasury par curve of the paper (PAPER.md): 1, 2, 3, 6 months; 1, 2, 3, 5, 7, 10, 20, 30 y.
PAPER_MATURITIES = np.array([1 / 12, 2 / 12, 3 / 12, 6 / 12, 1, 2, 3, 5, 7, 10, 20, 30],
                            dtype=np.float64)
#: Par rates (decimals) at :data:`PAPER_MATURITIES`.
PAPER_PAR_RATES = np.array([2.45, 2.43, 2.43, 2.51, 2.53, 2.50, 2.48, 2.48, 2.56, 2.66, 2.85,
                            3.01]) / 100.0

NEWTON_TOL = 1e-12  # then one more step: quadratic convergence takes it to round-off
NEWTON_MAX_ITER = 50


def bootstrap(*, maturities: ArrayLike, par_rates: ArrayLike,
              frequencies: Sequence[Frequency | int | str] | None = None) -> ForwardCurve:
    """A piecewise-constant-forward curve that prices each par instrument at exactly 1.

    Units: maturities in years; par rates annual, in decimals, with the coupon convention of
    each instrument's frequency; the curve's forwards continuously compounded per year.

    Args:
        maturities: increasing maturities > 0 (years); they become the curve's pillars.
        par_rates: par coupon rates (decimals), one per maturity; differentiable (the result's
            forwards are traced when they are).
        frequencies: the coupon :class:`Frequency` per instrument; default
            :func:`treasury_frequency` (bills below 1 year pay at maturity, else semiannual).

    Returns:
        A :class:`ForwardCurve` with ``times = maturities``.

    Raises:
        TypeError: bool or non-numeric maturities/par rates (naming them).
        ValueError: bad maturities/par rates (naming them), or a Newton solve that does not
            converge.

    Example:
        >>> c = bootstrap(maturities=PAPER_MATURITIES, par_rates=PAPER_PAR_RATES)
        >>> round(float(c.zero_rate(10.0)), 6)
        0.02656
    """
    check_real("bootstrap", "maturities", maturities, low=0.0)
    mats = plain(maturities).reshape(-1)
    if np.any(np.diff(mats) <= 0):
        raise ValueError(f"bootstrap: maturities must be increasing, got {mats}")
    check_real("bootstrap", "par_rates", par_rates, low=-1.0)
    par_rates = as_real(par_rates)
    if np.shape(plain(par_rates)) != mats.shape:
        raise ValueError(f"bootstrap: par_rates must have shape {mats.shape}, got "
                         f"{np.shape(plain(par_rates))}")
    if frequencies is None:
        frequencies = [treasury_frequency(t) for t in mats]
    probe = ForwardCurve(times=mats, forwards=np.zeros(mats.size))
    forwards = []
    for i, (t, freq) in enumerate(zip(mats, frequencies)):
        times, mult, principal = cashflows(float(t), freq)
        W = probe.overlap(times)[:, : i + 1]  # plain: time spent in each pillar interval
        known = W[:, :i] @ _stack(forwards) if i else np.zeros(times.size)
        y = par_rates[i]

        def par_price(f, known=known, w=W[:, i], y=y, mult=mult, principal=principal):
            disc = np.exp(-(known + w * f))
            return np.sum(disc * (mult * y + principal))

        dprice = ds.grad(par_price)
        f = forwards[-1] if forwards else y  # a good first guess: the previous forward
        for _ in range(NEWTON_MAX_ITER + 1):
            step = (par_price(f) - 1.0) / dprice(f)
            f = f - step
            # the iteration count: a guard under diffsci.jit (re-traced when it changes)
            if observed(lambda s: bool(abs(float(s)) < NEWTON_TOL), step):
                f = f - (par_price(f) - 1.0) / dprice(f)  # the extra step (see module doc)
                break
        else:
            raise ValueError(f"bootstrap: Newton did not converge at maturity {t} "
                             f"(last step {float(plain(step)):.3g})")
        forwards.append(f)
    return ForwardCurve(times=mats, forwards=_stack(forwards))


def _stack(xs):
    return np.stack([np.asarray(x) if not ds.extend.is_tracer(x) else x for x in xs])


def key_rate_durations(*, maturities: ArrayLike, par_rates: ArrayLike, bond_maturities: ArrayLike,
                       bond_coupons: ArrayLike,
                       bond_frequencies: Sequence[Frequency | int | str] | None = None,
                       curve_frequencies: Sequence[Frequency | int | str] | None = None
                       ) -> tuple[Array, Array]:
    """Key-rate durations ``−(∂P_j/∂y_i)/P_j`` of bonds to each par rate, by nested AD.

    The Jacobian is taken by reverse mode through :func:`bootstrap` (whose Newton steps use
    :func:`diffsci.grad`) and :func:`bond_price`.

    Args:
        maturities, par_rates, curve_frequencies: the par curve, as for :func:`bootstrap`.
        bond_maturities, bond_coupons, bond_frequencies: the bonds, as for :func:`bond_price`.

    Returns:
        ``(prices, durations)``: prices ``(n_bonds,)`` and durations ``(n_bonds, n_rates)``
        (years, per unit par rate).

    Example:
        >>> m, y = PAPER_MATURITIES, PAPER_PAR_RATES
        >>> p, d = key_rate_durations(maturities=m, par_rates=y, bond_maturities=m,
        ...                           bond_coupons=y)
        >>> np.allclose(d, np.diag(np.diag(d)), atol=1e-12)
        True
    """
    par_rates = plain(par_rates)

    def prices(y):
        curve = bootstrap(maturities=maturities, par_rates=y, frequencies=curve_frequencies)
        return bond_price(curve, maturities=bond_maturities, coupons=bond_coupons,
                          frequencies=bond_frequencies)

    p = plain(prices(par_rates))
    jac = ds.jacrev(prices)(par_rates)
    return p, -plain(jac) / p[:, None]
