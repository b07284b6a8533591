"""The paper's neural SDE: learn the drift of a cubic-spiral SDE from the mean of 100 trajectories.

True system (Innes et al. 2019, §"Neural SDE"): u₀ = [2, 0], t ∈ [0, 1], 30 save points,
du = ((u³)ᵀA)ᵀ dt + 0.2·u dW (diagonal multiplicative Itô noise), A = [[−0.1, 2], [−2, −0.1]].
Data: the mean of 100 simulated trajectories. Model: drift x ↦ Dense(2,50,tanh) → Dense(50,2)
applied to x³, diffusion known (0.2·u). Training differentiates single sampled trajectories with
their Brownian path fixed (backprop through Euler–Maruyama): loss = squared distance between the
data and one sampled trajectory (Adam(0.025), 100 steps), then the sum of 10 single-trajectory
losses (20 steps), each step on fresh Brownian increments (``sde.BrownianIncrements``), its
value and gradient compiled by ``ds.jit`` (checked against eager mode; the speed-up and the
first call's compile time are printed; the compiled code is cached on disk for later runs).
Figures: the 100-trajectory mean and 95 % band of the learned SDE on [0, 1.2] before and after
training, with the data overlaid.
"""

import time

import matplotlib.pyplot as plt
import numpy as np

import diffsci as ds
import sde
from examples._common import parse_args, result, save_figure

A = np.array([[-0.1, 2.0], [-2.0, -0.1]])
U0 = np.array([2.0, 0.0])
TS = np.linspace(0.0, 1.0, 30)
DT = (TS[1] - TS[0]) / 4


def true_drift(t, u, p):
    return (u**3) @ A


def noise(t, u, p):
    return 0.2 * u


def model_drift(t, u, mlp):
    return mlp(u**3)


TRUE = sde.SDE(true_drift, noise, noise="diagonal", calculus="ito")
MODEL = sde.SDE(model_drift, noise, noise="diagonal", calculus="ito")


def simulate(prob, params, n, ts, seed):
    return sde.sdeint(prob, np.tile(U0, (n, 1)), ts, params, dt=DT, seed=seed)


def main():
    args = parse_args()
    steps1, steps2 = 100, 20   # the paper's schedule: it fits the default time budget
    global DT
    if args.full:
        DT = DT / 4                # --full: a 4x finer Euler–Maruyama grid
    start = time.perf_counter()
    data = simulate(TRUE, None, 100, TS, seed=0).mean(axis=1)          # (30, 2)
    mlp0 = ds.nn.MLP.init(0, [2, 50, 2], activation="tanh")
    # The solver's step grid (4 steps per save interval) and fresh Brownian increments on it
    # for every training step: drawn here and passed in, so that the compiled step
    # (diffsci.jit) takes new noise at every call instead of the path of its first one.
    grid = np.linspace(TS[0], TS[-1], round((TS[-1] - TS[0]) / DT) + 1)
    rng = np.random.default_rng(1000)

    def noise_draw(n):
        return rng.standard_normal((grid.size - 1, n, 2)) * np.sqrt(np.diff(grid))[:, None, None]

    def loss(mlp, dW):
        ys = sde.sdeint(MODEL, np.tile(U0, (dW.shape[1], 1)), TS, mlp, dt=DT,
                        brownian=sde.BrownianIncrements(grid, dW))      # (30, n, 2)
        return np.sum((ys - data[:, None, :]) ** 2)

    def eval_loss(mlp):
        return float(np.mean([np.sum((simulate(MODEL, mlp, 1, TS, seed=s)[:, 0] - data) ** 2)
                              for s in range(50)]))

    eager_step, jit_step = ds.value_and_grad(loss), ds.jit(ds.value_and_grad(loss))

    def train(mlp, n, steps):
        opt = ds.optim.Adam(0.025)
        state, losses = opt.init(mlp), []
        for k in range(steps):
            value, g = jit_step(mlp, noise_draw(n))
            if not (np.isfinite(value) and all(np.all(np.isfinite(x)) for x in
                                               ds.tree_leaves(g))):
                raise FloatingPointError(f"step {k}: loss {value} or its gradient not finite")
            losses.append(float(value))
            mlp, state = opt.update(g, state, mlp)
        return mlp, {"loss": np.array(losses)}

    before = eval_loss(mlp0)
    t0 = time.perf_counter()
    jit_step(mlp0, noise_draw(1))  # the first call traces and compiles (cached on disk)
    compile_s = time.perf_counter() - t0
    dws = [noise_draw(1) for _ in range(10)]
    for dW in dws[:2]:  # the compiled step is eager mode's, at other noise
        (v1, g1), (v2, g2) = jit_step(mlp0, dW), eager_step(mlp0, dW)
        assert abs(v1 - v2) <= 1e-10 * abs(v2), (v1, v2)
        assert all(np.allclose(a, b, rtol=1e-9, atol=1e-12)
                   for a, b in zip(ds.tree_leaves(g1), ds.tree_leaves(g2)))
    per_step = {}
    for name, fn in (("eager", eager_step), ("jit", jit_step)):
        t0 = time.perf_counter()
        for dW in dws:
            fn(mlp0, dW)
        per_step[name] = (time.perf_counter() - t0) / len(dws) * 1e3
    mlp1, h1 = train(mlp0, 1, steps1)
    mlp2, h2 = train(mlp1, 10, steps2)
    after = eval_loss(mlp2)

    t_plot = np.linspace(0.0, 1.2, 37)
    fig, axes = plt.subplots(1, 3, figsize=(15, 4))
    for ax, (title, mlp) in zip(axes[:2], [("before training", mlp0), ("after training", mlp2)]):
        ys = simulate(MODEL, mlp, 100, t_plot, seed=7)
        st = sde.ensemble_stats(ys, quantiles=(0.025, 0.975))
        mean, lo, hi = st.mean, st.quantile(0.025), st.quantile(0.975)
        for i, c in enumerate(("C0", "C1")):
            ax.plot(t_plot, mean[:, i], c, label=f"model mean u{i + 1}")
            ax.fill_between(t_plot, lo[:, i], hi[:, i], color=c, alpha=0.2)
            ax.plot(TS, data[:, i], c + "o", ms=3, label=f"data u{i + 1}")
        ax.set_ylim(-3, 3)
        ax.set_xlabel("t (time, arbitrary units)")
        ax.set_ylabel("state u (arbitrary units)")
        ax.set_title(f"{title}: 100-path mean, 95% band")
        ax.legend(fontsize=9, ncol=2, loc="lower left")
    axes[2].semilogy(np.concatenate([h1["loss"], h2["loss"] / 10]))
    axes[2].axvline(steps1, color="k", ls=":")
    axes[2].set_xlabel("Adam step")
    axes[2].set_ylabel("loss per trajectory (units of u²)")
    axes[2].set_title("loss per trajectory (1 path, then 10)")
    save_figure(fig)
    result(
        f"mean single-trajectory loss (50 paths) before {before:.3f}, after {after:.3f} "
        f"(dt={DT:.4f}, {steps1}+{steps2} Adam(0.025) steps, {time.perf_counter() - start:.1f} s); "
        f"a training step under ds.jit {per_step['jit']:.2f} ms against {per_step['eager']:.2f} ms "
        f"eager ({per_step['eager'] / per_step['jit']:.1f}x; first call {compile_s:.1f} s)"
    )


if __name__ == "__main__":
    main()
