"""Fit an Ornstein–Uhlenbeck process's (θ, μ, σ) to simulated paths by Euler pseudo-likelihood.

Simulate 20 paths of dX = θ(μ − X) dt + σ dW (θ = 2, μ = 1, σ = 0.5) with ``sde.sdeint``, observe
them every Δ = 0.02 on [0, 10], and maximise the Euler (Gaussian transition) pseudo-likelihood
X_{k+1} | X_k ~ N(X_k + θ(μ − X_k)Δ, σ²Δ) over (log θ, μ, log σ) with exact gradients
(``ds.optim.minimize``, L-BFGS). Standard errors come from the inverse Hessian of the negative
log-likelihood (``ds.hessian``, forward-over-reverse), transformed to (θ, μ, σ) by the delta method.
"""

import matplotlib.pyplot as plt
import numpy as np

import diffsci as ds
import sde
from examples._common import parse_args, result, save_figure

TRUE = {"theta": 2.0, "mu": 1.0, "sigma": 0.5}


def ou():
    return sde.SDE(lambda t, y, p: p[0] * (p[1] - y), lambda t, y, p: p[2] + 0.0 * y,
                   noise="diagonal")


def neg_log_lik(q, x, ts):
    """Minus the Euler pseudo-likelihood (``sde.pseudo_loglik``) of paths x (time, paths, 1) at
    q = (log θ, μ, log σ)."""
    p = (np.exp(q[0]), q[1], np.exp(q[2]))
    return -sde.pseudo_loglik(ou(), ts, x, p, time_homogeneous=True)


def main():
    args = parse_args()
    paths, horizon, delta = (200, 20.0, 0.01) if args.full else (20, 10.0, 0.02)
    ts = np.arange(0.0, horizon + delta / 2, delta)
    p = np.array([TRUE["theta"], TRUE["mu"], TRUE["sigma"]])
    x = sde.sdeint(ou(), np.zeros((paths, 1)), ts, p, dt=delta / 10, seed=3)
    q0 = np.array([0.0, 0.0, 0.0])
    res = ds.optim.minimize(neg_log_lik, q0, args=(x, ts))
    q = np.asarray(res.x)
    cov_q = np.linalg.inv(np.asarray(ds.hessian(neg_log_lik)(q, x, ts)))
    jac = np.diag([np.exp(q[0]), 1.0, np.exp(q[2])])           # d(θ, μ, σ)/d(log θ, μ, log σ)
    est = np.array([np.exp(q[0]), q[1], np.exp(q[2])])
    se = np.sqrt(np.diag(jac @ cov_q @ jac.T))

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 3.8))
    for i in range(min(paths, 5)):
        ax1.plot(ts, x[:, i, 0], lw=0.8)
    ax1.axhline(est[1], color="k", ls="--", label=f"fitted μ = {est[1]:.3f}")
    ax1.set_xlabel("t (time, arbitrary units)")
    ax1.set_ylabel("X_t (arbitrary units)")
    ax1.set_title("observed OU paths (5 shown)")
    ax1.legend(fontsize=10)
    names = ["θ", "μ", "σ"]
    ax2.errorbar(range(3), est / p, yerr=1.96 * se / p, fmt="o", capsize=4,
                 label="estimate / truth, 95% CI")
    ax2.axhline(1.0, color="k", lw=0.8)
    ax2.set_xticks(range(3), names)
    ax2.set_xlabel("parameter")
    ax2.set_ylabel("estimate / truth (ratio)")
    ax2.set_title("recovered parameters")
    ax2.legend(fontsize=10)
    save_figure(fig)
    text = ", ".join(f"{n} = {e:.3f} ± {s:.3f} (true {t})"
                     for n, e, s, t in zip(names, est, se, p))
    result(f"Euler pseudo-likelihood fit of OU from {paths} paths: {text}")


if __name__ == "__main__":
    main()
