"""sde benchmarks: strong-order convergence per solver, gradient cost per method, Brownian queries.

1. Strong order: runs ``benchmarks/convergence/gbm.py`` (every diagonal-noise solver on GBM
   dX = 0.5X dt + X dW, exact solution on the same path, dt = 2⁻²…2⁻⁹) and
   ``benchmarks/convergence/additive.py`` (SRA1 and the others on additive noise), each with
   ``--quick`` when given.
2. Neural-SDE gradient cost (d = 16, batch 256, drift MLP 17→64→64→16 tanh, diffusion MLP
   17→64→16 sigmoid, diagonal Stratonovich noise, loss mean(y_T²)) at 100 and 1000 steps
   (``--quick``: d = 4, batch 16, 20/80 steps): time, peak traced-memory growth (tracemalloc) and
   relative gradient difference to backprop, per method; torchsde's counterparts in the same run
   when it is installed.
3. Brownian interval queries per second, forward then reverse order (and torchsde's).

All timings are single-threaded: OPENBLAS/OMP/MKL/NUMBA threads are set to 1 before NumPy loads
and ``torch.set_num_threads(1)`` (on a shared machine, multi-threaded BLAS on 256×64 matmuls was
measured 5–15× *slower* from contention). diffsci and torchsde rows are timed in the same process,
interleaved (one run of each method per round), and the table reports medians over the rounds.
Both libraries run in float64.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

import diffsci as ds  # noqa: E402
import sde  # noqa: E402

CONVERGENCE = Path(__file__).resolve().parent / "convergence"


def convergence(quick):
    """Run the strong-order scripts of ``benchmarks/convergence/`` (each in its own process)."""
    for script in ("gbm.py", "additive.py"):
        cmd = [sys.executable, str(CONVERGENCE / script)] + (["--quick"] if quick else [])
        env = dict(os.environ, PYTHONPATH=str(CONVERGENCE.parents[1]))
        subprocess.run(cmd, check=True, env=env)


DIFFSCI_ROWS = [  # (label, method, adjoint, torchsde counterpart)
    ("backprop / euler_heun", "euler_heun", "backprop", "torchsde backprop / euler_heun"),
    ("backprop / reversible_heun", "reversible_heun", "backprop", None),
    ("checkpoint / reversible_heun", "reversible_heun", "checkpoint", None),
    ("reversible adjoint / rev. Heun", "reversible_heun", "reversible",
     "torchsde adjoint / rev. Heun"),
    ("stochastic adjoint / euler_heun", "euler_heun", "stochastic", None),
]


def neural(quick):
    d, batch, hidden = (4, 16, 16) if quick else (16, 256, 64)
    steps_list = (20, 80) if quick else (100, 1000)
    drift = ds.nn.MLP.init(0, [d + 1, hidden, hidden, d], activation="tanh")
    diff = ds.nn.MLP.init(1, [d + 1, hidden, d], activation="tanh", final_activation="sigmoid")

    def with_t(t, y):
        return np.concatenate([np.full((y.shape[0], 1), t), y], axis=1)

    prob = sde.SDE(lambda t, y, p: p[0](with_t(t, y)), lambda t, y, p: p[1](with_t(t, y)),
                   calculus="stratonovich")
    y0 = np.random.default_rng(0).standard_normal((batch, d)) * 0.5
    torch_runs = torchsde_runs(d, batch, hidden)
    print(f"\nNeural-SDE gradient (d={d}, batch={batch}, float64, T=1, one thread; median of "
          f"interleaved rounds)")
    print(f"{'steps':>6} {'method':<34}{'time s':>8}{'peak MiB':>10}{'rel err vs backprop':>22}"
          f"{'÷ torchsde':>12}")
    ds.grad(lambda p: np.sum(sde.sdeint(prob, y0, np.array([0.0, 1.0]), p, dt=0.5)))(
        (drift, diff))  # warm-up: first-call costs out of the table
    for steps in steps_list:
        rounds = 3 if quick or steps >= 1000 else 5
        losses = {}
        for label, method, adjoint, _ in DIFFSCI_ROWS:
            def loss(p, method=method, adjoint=adjoint):
                ys = sde.sdeint(prob, y0, np.array([0.0, 1.0]), p, method=method,
                                dt=1.0 / steps, adjoint=adjoint, seed=1)
                return np.mean(ys[-1] ** 2)

            losses[label] = lambda loss=loss: ds.grad(loss)((drift, diff))
        runs = dict(losses)
        if torch_runs:
            runs.update({label: (lambda run=run: run(steps)) for label, run in torch_runs.items()})
            for run in torch_runs.values():
                run(min(steps, 10))  # warm-up
        times = {label: [] for label in runs}
        grads = {}
        for _ in range(rounds):
            for label, run in runs.items():
                t0 = time.perf_counter()
                out = run()
                times[label].append(time.perf_counter() - t0)
                if label in losses:
                    grads[label] = out
        median = {label: statistics.median(v) for label, v in times.items()}
        refs = {}
        for label, method, _adjoint, peer in DIFFSCI_ROWS:
            tracemalloc.start()  # a separate run: tracemalloc slows allocation a lot
            losses[label]()
            peak = tracemalloc.get_traced_memory()[1] / 2**20
            tracemalloc.stop()
            flat = np.concatenate([np.ravel(x) for x in ds.tree_leaves(grads[label])])
            ref = refs.setdefault(method, flat)
            err = "(reference)" if ref is flat else \
                f"{np.max(np.abs(flat - ref)) / np.max(np.abs(ref)):.1e}"
            ratio = f"{median[label] / median[peer]:.2f}" if peer in median else "-"
            print(f"{steps:>6} {label:<34}{median[label]:>8.3f}{peak:>10.1f}{err:>22}"
                  f"{ratio:>12}")
        for label in torch_runs:
            print(f"{steps:>6} {label:<34}{median[label]:>8.3f}{'-':>10}{'':>22}{'1.00':>12}")
    if not torch_runs:
        print("torchsde: not installed (pip install torchsde) — column skipped")


def torchsde_runs(d, batch, hidden):
    """``{label: run(steps)}`` for torchsde's counterparts of the rows above ({} without it)."""
    try:
        import torch
        import torchsde
    except ImportError:
        return {}
    torch.set_num_threads(1)

    class SDEModule(torch.nn.Module):
        noise_type, sde_type = "diagonal", "stratonovich"

        def __init__(self):
            super().__init__()
            self.f_net = torch.nn.Sequential(torch.nn.Linear(d + 1, hidden), torch.nn.Tanh(),
                                             torch.nn.Linear(hidden, hidden), torch.nn.Tanh(),
                                             torch.nn.Linear(hidden, d))
            self.g_net = torch.nn.Sequential(torch.nn.Linear(d + 1, hidden), torch.nn.Tanh(),
                                             torch.nn.Linear(hidden, d), torch.nn.Sigmoid())

        def f(self, t, y):
            return self.f_net(torch.cat([t.expand(y.shape[0], 1), y], 1))

        def g(self, t, y):
            return self.g_net(torch.cat([t.expand(y.shape[0], 1), y], 1))

    torch.manual_seed(0)
    model = SDEModule().double()
    y0 = torch.randn(batch, d, dtype=torch.float64) * 0.5

    def make(method, adjoint):
        def run(steps):
            model.zero_grad()
            ts = torch.tensor([0.0, 1.0], dtype=torch.float64)
            bm = torchsde.BrownianInterval(0.0, 1.0, (batch, d), dtype=torch.float64,
                                           levy_area_approximation="none")
            solve = torchsde.sdeint_adjoint if adjoint else torchsde.sdeint
            kw = dict(adjoint_method="adjoint_reversible_heun") if adjoint else {}
            ys = solve(model, y0, ts, method=method, dt=1.0 / steps, bm=bm, **kw)
            (ys[-1] ** 2).mean().backward()

        return run

    return {"torchsde backprop / euler_heun": make("euler_heun", False),
            "torchsde adjoint / rev. Heun": make("reversible_heun", True)}


def brownian(quick):
    shape = (16, 4) if quick else (256, 16)
    n = 200 if quick else 1000
    ts = np.linspace(0, 1, n + 1)
    print(f"\nBrownian interval queries/s, shape {shape}, {n} steps of 1/{n} (no hint)")
    bm = sde.BrownianInterval(0.0, 1.0, shape, seed=0)
    for order in ("forward", "reverse"):
        idx = range(n) if order == "forward" else reversed(range(n))
        t0 = time.perf_counter()
        for i in idx:
            bm.increment(ts[i], ts[i + 1])
        print(f"  sde.BrownianInterval {order:<8} {n / (time.perf_counter() - t0):>10.0f} /s")
    try:
        import torch
        import torchsde
    except ImportError:
        print("  torchsde: not installed — skipped")
        return
    tb = torchsde.BrownianInterval(0.0, 1.0, shape, dtype=torch.float64)
    for order in ("forward", "reverse"):
        idx = range(n) if order == "forward" else reversed(range(n))
        t0 = time.perf_counter()
        for i in idx:
            tb(float(ts[i]), float(ts[i + 1]))
        print(f"  torchsde.BrownianInterval {order:<8} {n / (time.perf_counter() - t0):>10.0f} /s")


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small sizes (seconds)")
    args = parser.parse_args()
    convergence(args.quick)
    neural(args.quick)
    brownian(args.quick)


if __name__ == "__main__":
    main()
