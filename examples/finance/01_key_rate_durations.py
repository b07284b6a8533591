"""The paper's key-rate durations: AD through a yield-curve bootstrap that itself uses AD.

US Treasury par rates (Innes et al. 2019, §"Financial derivatives"; PAPER.md) at 1, 2, 3, 6 months
and 1, 2, 3, 5, 7, 10, 20, 30 years are bootstrapped into a piecewise-constant-forward curve,
maturity by maturity, with Newton's method whose derivative comes from ``diffsci.grad``. Bonds are
priced on the curve (bills below one year pay at maturity, notes and bonds semiannually), and the
key-rate durations −(∂P/∂y_i)/P are the reverse-mode Jacobian through the whole bootstrap:
nested AD.

Checks: the 12 par bonds that built the curve have a diagonal duration matrix (the paper's check);
a 10-bond portfolio's durations agree with bump-and-rebootstrap finite differences. Figure: par
rates, zero rates and forwards; the two duration matrices as heatmaps.
"""

import time

import matplotlib.pyplot as plt
import numpy as np

import finance
from examples._common import parse_args, result, save_figure

MATS, PARS = finance.PAPER_MATURITIES, finance.PAPER_PAR_RATES
LABELS = ["1m", "2m", "3m", "6m", "1y", "2y", "3y", "5y", "7y", "10y", "20y", "30y"]
# a 10-bond portfolio off the pillars: (maturity in years, annual coupon)
PORTFOLIO = np.array([[0.75, 0.0], [1.5, 0.02], [2.5, 0.0275], [4.0, 0.03], [6.0, 0.025],
                      [8.5, 0.035], [12.0, 0.04], [15.0, 0.0325], [25.0, 0.045], [30.0, 0.03]])


def main():
    parse_args()
    t0 = time.perf_counter()
    curve = finance.bootstrap(maturities=MATS, par_rates=PARS)
    p_par, d_par = finance.key_rate_durations(maturities=MATS, par_rates=PARS,
                                              bond_maturities=MATS, bond_coupons=PARS)
    p_pf, d_pf = finance.key_rate_durations(maturities=MATS, par_rates=PARS,
                                            bond_maturities=PORTFOLIO[:, 0],
                                            bond_coupons=PORTFOLIO[:, 1])
    t_ad = time.perf_counter() - t0
    off_diag = np.abs(d_par - np.diag(np.diag(d_par))).max()

    # finite differences: bump each par rate, re-bootstrap, re-price
    h = 1e-6

    def price(y):
        c = finance.bootstrap(maturities=MATS, par_rates=y)
        return finance.bond_price(c, maturities=PORTFOLIO[:, 0], coupons=PORTFOLIO[:, 1])

    fd = np.stack([(price(PARS + h * e) - price(PARS - h * e)) / (2 * h) for e in np.eye(12)], 1)
    fd_err = np.abs(d_pf + fd / p_pf[:, None]).max()

    fig, axes = plt.subplots(1, 3, figsize=(16, 4.6), gridspec_kw={"width_ratios": [1.1, 1, 1]})
    t = np.linspace(1e-3, 30, 600)
    ax = axes[0]
    ax.plot(MATS, 100 * PARS, "ko", label="par rates (quotes)")
    ax.plot(t, 100 * curve.zero_rate(t), label="zero rate (cont.)")
    ax.step(np.concatenate([[0], MATS]), 100 * np.concatenate([curve.forwards[:1], curve.forwards]),
            where="pre", label="instantaneous forward")
    ax.set_xscale("symlog", linthresh=1.0)
    ax.set_xlabel("maturity (years)")
    ax.set_ylabel("rate (% per year)")
    ax.set_title("bootstrapped curve (piecewise-constant forwards)")
    ax.legend()
    for ax, d, ylabels, title in (
            (axes[1], d_par, LABELS, f"12 par bonds (off-diagonal ≤ {off_diag:.0e})"),
            (axes[2], d_pf, [f"{m:g}y {100 * c:g}%" for m, c in PORTFOLIO],
             "10-bond portfolio")):
        im = ax.imshow(d, cmap="viridis")
        ax.set_xticks(range(12), LABELS, rotation=90)
        ax.set_yticks(range(len(ylabels)), ylabels)
        ax.set_xlabel("par rate bumped (maturity)")
        ax.set_ylabel("bond (maturity, coupon)")
        ax.set_title(title)
        fig.colorbar(im, ax=ax, label="key-rate duration (years)")
    fig.tight_layout()
    save_figure(fig)
    result(f"par-bond duration matrix diagonal to {off_diag:.1e} (diag 1m {d_par[0, 0]:.4f} … "
           f"30y {d_par[-1, -1]:.2f}); 10-bond portfolio durations vs bump-and-rebootstrap "
           f"max |diff| {fd_err:.1e}; 10y zero {100 * float(curve.zero_rate(10.0)):.4f}%; "
           f"nested-AD time {t_ad:.2f} s")


if __name__ == "__main__":
    main()
