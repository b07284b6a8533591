"""American put price, delta and gamma against spot: derivatives of a binomial tree.

The Cox–Ross–Rubinstein tree (binomial Black–Scholes last step; lattice anchored at the spot so
the price is smooth in it): ``finance.greeks(finance.tree_price, ...)`` runs the hand-written
reverse sweep of the induction (``finance.tree_greeks``, DERIVATIONS §TA), whose values equal AD
through the NumPy tree (reverse mode for delta, forward-over-reverse for gamma), for a whole batch
of spots at once. The Longstaff–Schwartz reference (least-squares Monte Carlo, pathwise delta with
the exercise boundary held fixed) is priced at a few spots with ±2 s.e. bands.

Checks: the tree at S = 36 vs Longstaff & Schwartz (2001)'s 4.4867; AD delta and gamma vs wide
central differences of the tree; LSM within 4 s.e. of the (Bermudan, 50-date) tree. The early
exercise boundary at t = 0 is where the price meets the intrinsic value K − S (there delta → −1,
smooth pasting). Figure: price, delta and gamma vs spot, American vs European.
"""

import time

import matplotlib.pyplot as plt
import numpy as np

import diffsci as ds
import finance
from examples._common import parse_args, result, save_figure

KW = dict(strike=40.0, expiry=1.0, rate=0.06, vol=0.2)
LS_REF = 4.4867  # Longstaff & Schwartz (2001), Table 1, S = 36, σ = 0.2, T = 1


def main():
    args = parse_args()
    n = 2000 if args.full else 500
    spots = np.linspace(24.0, 60.0, 145 if args.full else 73)
    t0 = time.perf_counter()
    am = finance.greeks(finance.tree_price, spot=spots, **KW, n_steps=n)
    t_ad = time.perf_counter() - t0
    eu = finance.greeks(finance.bsm_price, spot=spots, **KW, is_call=False)

    # wide central differences of the tree at a few spots (the lattice re-anchors when S moves)
    probe = np.array([30.0, 36.0, 40.0, 44.0, 50.0])
    h = 0.5

    def tree(s):
        return finance.tree_price(spot=s, **KW, n_steps=n)

    fd_delta = (tree(probe + h) - tree(probe - h)) / (2 * h)
    fd_gamma = (tree(probe + h) - 2 * tree(probe) + tree(probe - h)) / h**2
    ad = finance.greeks(finance.tree_price, spot=probe, **KW, n_steps=n)
    d_err = np.abs(ad["delta"] - fd_delta).max()
    g_err = np.abs(ad["gamma"] - fd_gamma).max()
    p36 = float(tree(36.0))

    # early-exercise boundary at t = 0: the largest spot where the price equals K − S
    exercise = np.isclose(am["price"], KW["strike"] - spots, atol=1e-9, rtol=0)
    boundary = spots[exercise].max() if exercise.any() else float("nan")

    # Longstaff–Schwartz at a few spots, with pathwise deltas (boundary held fixed)
    lsm_s = np.array([32.0, 36.0, 40.0, 44.0])
    lsm = []
    for s in lsm_s:
        r = finance.lsm_price(spot=s, **KW, n_paths=50_000 if args.full else 20_000, seed=1)
        d = ds.grad(lambda x: finance.lsm_price(spot=x, **KW, n_paths=20_000, seed=1).price)(s)
        lsm.append((float(r.price), r.stderr, float(d)))
    lsm = np.array(lsm)
    berm = finance.tree_price(spot=lsm_s, **KW, n_steps=1000, exercise_every=20)
    z_max = np.abs((lsm[:, 0] - berm) / lsm[:, 1]).max()

    fig, axes = plt.subplots(1, 3, figsize=(16, 4.4))
    ax = axes[0]
    ax.plot(spots, am["price"], label="American (tree)")
    ax.plot(spots, eu["price"], "--", label="European (BS)")
    ax.plot(spots, np.maximum(KW["strike"] - spots, 0), "k:", lw=1, label="intrinsic K − S")
    ax.errorbar(lsm_s, lsm[:, 0], yerr=2 * lsm[:, 1], fmt="o", ms=3, label="LSM ± 2 s.e.")
    ax.axvline(boundary, color="grey", lw=0.8)
    ax.set_title(f"put price (exercise boundary S* ≈ {boundary:.2f})")
    for ax, key, title in ((axes[1], "delta", "delta ∂V/∂S (AD)"),
                           (axes[2], "gamma", "gamma ∂²V/∂S² (forward-over-reverse AD)")):
        ax.plot(spots, am[key], label="American (tree, AD)")
        ax.plot(spots, eu[key], "--", label="European (BS, AD)")
        ax.plot(probe, fd_delta if key == "delta" else fd_gamma, "k+", ms=9,
                label="tree, central differences")
        if key == "delta":
            ax.plot(lsm_s, lsm[:, 2], "o", ms=3, label="LSM pathwise (boundary fixed)")
        ax.axvline(boundary, color="grey", lw=0.8)
        ax.set_title(title)
    axes[0].set_ylabel("price (currency units)")
    axes[1].set_ylabel("delta (currency/currency)")
    axes[2].set_ylabel("gamma (per currency unit of spot)")
    for ax in axes:
        ax.set_xlabel("spot S (currency units)")
        ax.legend(fontsize=9)
    fig.tight_layout()
    save_figure(fig)
    result(f"American put K=40 r=6% σ=20% T=1, CRR {n} steps: V(36) {p36:.4f} (LS 2001: "
           f"{LS_REF}); AD vs central differences max |Δdelta| {d_err:.1e}, |Δgamma| "
           f"{g_err:.1e}; exercise boundary S* ≈ {boundary:.2f}; LSM within {z_max:.1f} s.e. of "
           f"the Bermudan tree; {spots.size}-spot delta+gamma surface by AD in {t_ad:.2f} s")


if __name__ == "__main__":
    main()
