"""A PyTorch network as the drift of a neural SDE, solved and differentiated by diffsci's sde.

The paper's neural SDE (Innes et al. 2019, §"Neural SDE"; examples/sde/01): the true system
du = ((u³)ᵀA)ᵀ dt + 0.2·u dW on t ∈ [0, 1] from u₀ = [2, 0], A = [[−0.1, 2], [−2, −0.1]]
(diagonal multiplicative Itô noise), observed as the mean of 100 simulated trajectories at 30
times. The model's drift is a ``torch.nn.Sequential`` (Linear(2, 50) → tanh → Linear(50, 2),
float64) applied to u³, made a diffsci primitive by ``diffsci.interop.from_torch``: sde's
Euler–Maruyama solver calls the torch network, and diffsci differentiates the solve
(``adjoint="checkpoint"``: exact gradients of the discrete solve in bounded memory), the
network's VJPs being run by torch.autograd. The diffusion 0.2·u is known. The parameters (a
dict of the network's named parameters, as NumPy arrays) are trained by diffsci's Adam(0.025)
on the squared distance between the data and the mean of 8 sampled trajectories (new
Brownian paths each step); then written back into the torch module. Default run: 120 steps;
``--full``: 400.

Checks: the diffsci gradient at the start against the same Euler–Maruyama written in torch on
the same Brownian increments and differentiated by torch.autograd, and the trained torch
module evaluated natively against the bridged one. The figure shows the 100-path mean and 95 %
band of the model before and after training, with the data, and the loss.
"""

import time

import matplotlib.pyplot as plt
import numpy as np
import torch

import diffsci as ds
import sde
from diffsci.interop import from_torch
from examples._common import parse_args, result, save_figure

A = np.array([[-0.1, 2.0], [-2.0, -0.1]])
U0 = np.array([2.0, 0.0])
TS = np.linspace(0.0, 1.0, 30)
DT = (TS[1] - TS[0]) / 4
BATCH = 8


def true_drift(t, u, p):
    return (u ** 3) @ A


def noise(t, u, p):
    return 0.2 * u


def main():
    args = parse_args()
    steps = 400 if args.full else 120
    start = time.perf_counter()
    torch.set_num_threads(1)  # tensors of 8×50: intra-op threads only add overhead
    truth = sde.SDE(true_drift, noise, noise="diagonal", calculus="ito")
    data = sde.sdeint(truth, np.tile(U0, (100, 1)), TS, dt=DT, seed=0).mean(axis=1)

    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(2, 50), torch.nn.Tanh(),
                              torch.nn.Linear(50, 2)).double()
    drift_net = from_torch(net)  # drift_net(params, x) runs net with those parameters
    model = sde.SDE(lambda t, u, p: drift_net(p, u ** 3), noise, noise="diagonal",
                    calculus="ito")
    p0 = drift_net.params

    def simulate(p, n, ts, seed, **kw):
        return sde.sdeint(model, np.tile(U0, (n, 1)), ts, p, dt=DT, seed=seed, **kw)

    def loss(p, seed):
        ys = simulate(p, BATCH, TS, seed, adjoint="checkpoint")
        return np.sum((ys.mean(axis=1) - data) ** 2)

    # the gradient against Euler–Maruyama in torch on the same Brownian path
    ys, bm = simulate(p0, BATCH, TS, 99, adjoint="checkpoint", return_brownian=True)
    g_ds = ds.grad(loss)(p0, 99)
    net.zero_grad()
    u = torch.tensor(np.tile(U0, (BATCH, 1)))
    out = [u]
    for t0, t1 in zip(TS[:-1], TS[1:]):  # 4 uniform Euler steps per save interval (dt)
        sub = np.linspace(t0, t1, 5)
        for a, b in zip(sub[:-1], sub[1:]):
            u = u + net(u ** 3) * (b - a) + 0.2 * u * torch.tensor(bm.increment(a, b))
        out.append(u)
    torch_loss = torch.sum((torch.stack(out).mean(dim=1) - torch.tensor(data)) ** 2)
    torch_loss.backward()
    grad_err = max(float(np.max(np.abs(g_ds[n] - q.grad.numpy())) / np.max(np.abs(q.grad.numpy())))
                   for n, q in net.named_parameters())
    path_err = float(np.max(np.abs(torch.stack(out).detach().numpy() - ys)))

    seeds = iter(range(1000, 1000 + steps))
    p1, hist = ds.fit(lambda p: loss(p, next(seeds)), p0, optimizer=ds.optim.Adam(0.025),
                      steps=steps, progress=False)
    with torch.no_grad():  # the trained parameters back into the torch module
        for n, q in net.named_parameters():
            q.copy_(torch.from_numpy(p1[n]))
    xs = np.random.default_rng(1).normal(size=(5, 2))
    module_err = float(np.max(np.abs(net(torch.tensor(xs)).detach().numpy() -
                                     drift_net(p1, xs))))

    def eval_loss(p):
        return float(np.mean([np.sum((simulate(p, 1, TS, s)[:, 0] - data) ** 2)
                              for s in range(10)]))

    before, after = eval_loss(p0), eval_loss(p1)
    t_plot = np.linspace(0.0, 1.2, 37)
    fig, axes = plt.subplots(1, 3, figsize=(15, 4))
    for ax, (title, p) in zip(axes[:2], [("before training", p0), ("after training", p1)]):
        st = sde.ensemble_stats(simulate(p, 100, t_plot, 7), quantiles=(0.025, 0.975))
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
    axes[2].semilogy(hist["loss"])
    axes[2].set_xlabel("Adam step")
    axes[2].set_ylabel(f"loss (units of u², mean of {BATCH} paths)")
    axes[2].set_title("training loss")
    fig.suptitle("neural SDE with a torch drift (from_torch), solved and differentiated by sde")
    fig.tight_layout()
    save_figure(fig)
    result(
        f"single-trajectory loss (10 paths) before {before:.3f}, after {after:.3f} ({steps} "
        f"Adam(0.025) steps, {time.perf_counter() - start:.1f} s); gradient = torch's "
        f"Euler–Maruyama on the same path to {grad_err:.1e} (relative; paths to "
        f"{path_err:.1e}); trained module = bridged to {module_err:.1e}"
    )


if __name__ == "__main__":
    main()
