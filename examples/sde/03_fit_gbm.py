"""Fit geometric Brownian motion's drift μ and volatility σ to simulated paths.

Simulate 20 paths of dS = μS dt + σS dW (μ = 0.3, σ = 0.4, S₀ = 1) exactly on a Brownian path
(``sde.gbm_paths``, the Numba fast path), observe them every Δ = 0.01 on [0, 5], and fit (μ, σ)
two ways with exact gradients (``ds.optim.minimize``, L-BFGS):

* the exact likelihood — log-returns r_k = log(S_{k+1}/S_k) are i.i.d. N((μ − σ²/2)Δ, σ²Δ);
* the Euler pseudo-likelihood of the SDE itself (``sde.pseudo_loglik``), which treats
  S_{k+1} | S_k as N(S_k(1 + μΔ), σ²S_k²Δ) and is biased by O(Δ).

Parameters are optimised as (μ, log σ); standard errors come from the inverse Hessian of the
negative log-likelihood (``ds.hessian``, forward-over-reverse), mapped back to (μ, σ) by the delta
method. The drift's error is ≈ σ/√(total time) whatever Δ is — it is the hard one to pin down.
"""

import matplotlib.pyplot as plt
import numpy as np

import diffsci as ds
import sde
from examples._common import parse_args, result, save_figure

TRUE = {"mu": 0.3, "sigma": 0.4}


def gbm():
    return sde.SDE(lambda t, y, p: p[0] * y, lambda t, y, p: p[1] * y, noise="diagonal")


def exact_nll(q, s, delta):
    """Minus the exact GBM log-likelihood of paths s (paths, time) at q = (μ, log σ)."""
    mu, sigma = q[0], np.exp(q[1])
    r = np.diff(np.log(s), axis=1)
    var = sigma**2 * delta
    return 0.5 * np.sum((r - (mu - 0.5 * sigma**2) * delta) ** 2 / var + np.log(2 * np.pi * var))


def euler_nll(q, s, ts):
    """Minus the Euler pseudo-likelihood (``sde.pseudo_loglik``) at q = (μ, log σ)."""
    return -sde.pseudo_loglik(gbm(), ts, s.T[:, :, None], (q[0], np.exp(q[1])),
                              time_homogeneous=True)


def fit(nll, args):
    res = ds.optim.minimize(nll, np.array([0.0, np.log(0.2)]), args=args)
    q = np.asarray(res.x)
    cov_q = np.linalg.inv(np.asarray(ds.hessian(nll)(q, *args)))
    jac = np.diag([1.0, np.exp(q[1])])                         # d(μ, σ)/d(μ, log σ)
    return np.array([q[0], np.exp(q[1])]), np.sqrt(np.diag(jac @ cov_q @ jac.T))


def main():
    args = parse_args()
    paths, horizon, delta = (200, 10.0, 0.005) if args.full else (20, 5.0, 0.01)
    ts = np.arange(0.0, horizon + delta / 2, delta)
    bm = sde.BrownianPath(ts, (paths, 1), seed=11)
    inc = np.stack([bm.increment(a, b)[:, 0] for a, b in zip(ts[:-1], ts[1:])], axis=1)
    W = np.concatenate([np.zeros((paths, 1)), np.cumsum(inc, axis=1)], axis=1)
    p = np.array([TRUE["mu"], TRUE["sigma"]])
    s = sde.gbm_paths(np.ones(paths), p[0], p[1], ts, W)

    est, se = fit(exact_nll, (s, delta))
    est_e, se_e = fit(euler_nll, (s, ts))

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 3.8))
    for i in range(min(paths, 8)):
        ax1.plot(ts, s[i], lw=0.8)
    ax1.plot(ts, np.exp(est[0] * ts), "k--", label=f"fitted E[S] = exp({est[0]:.3f} t)")
    ax1.set_yscale("log")
    ax1.set_xlabel("t (years)")
    ax1.set_ylabel("S_t (currency units, S₀ = 1; log scale)")
    ax1.set_title(f"observed GBM paths ({min(paths, 8)} of {paths} shown)")
    ax1.legend()
    names = ["μ", "σ"]
    for off, (e, sd, lab) in enumerate([(est, se, "exact likelihood"),
                                        (est_e, se_e, "Euler pseudo-likelihood")]):
        ax2.errorbar(np.arange(2) + 0.1 * (2 * off - 1), e / p, yerr=1.96 * sd / p, fmt="o",
                     capsize=4, label=f"{lab}, 95% CI")
    ax2.axhline(1.0, color="k", lw=0.8)
    ax2.set_xticks(range(2), names)
    ax2.set_xlabel("parameter")
    ax2.set_ylabel("estimate / truth (ratio)")
    ax2.set_title("recovered parameters")
    ax2.legend()
    save_figure(fig)
    text = ", ".join(f"{n} = {e:.3f} ± {d:.3f}" for n, e, d in zip(names, est, se))
    text_e = ", ".join(f"{n} = {e:.3f} ± {d:.3f}" for n, e, d in zip(names, est_e, se_e))
    result(f"GBM fit from {paths} paths on [0, {horizon:g}] (Δ = {delta:g}), truth μ = "
           f"{p[0]}, σ = {p[1]}: exact likelihood {text}; Euler pseudo-likelihood {text_e}")


if __name__ == "__main__":
    main()
