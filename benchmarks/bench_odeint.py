"""odeint's two gradients: the continuous adjoint against backpropagation through the solver.

Workload: a small neural ODE, dy/dt = W2 · tanh(W1 · y + b1) + b2 − 0.1 y, for a batch of 64
two-dimensional states (y has shape (64, 2); a 2-32-2 tanh MLP, 162 parameters), integrated over
t ∈ [0, 5] with output at 6 equally spaced times, and the gradient of
``loss = Σ_t Σ y(t)²`` with respect to the initial states and every parameter:

* backprop: ``odeint(..., gradient="backprop")`` — the solver's steps on the tape, the exact
  derivative of the discrete solution, memory O(number of steps);
* adjoint: ``odeint(..., gradient="adjoint")`` — the augmented system [y, λ, θ̄] solved backwards
  in time (Chen et al. 2018), memory O(1) in the number of steps.

Rows: fixed-step RK4 with n steps (the adjoint's backward solve uses the same steps), then
adaptive Dormand–Prince 5(4) at several tolerances (its step count is the forward solve's).
Columns: the forward solve without AD, both gradients' median wall time, both gradients' peak
memory (``tracemalloc`` during one gradient call, above what was allocated before it; NumPy
reports its buffers to tracemalloc; times are measured in runs without tracemalloc), and the
largest relative difference between the two gradients (they converge to the same continuous
gradient as the steps shrink: O(h⁴) for RK4, O(tol) for dopri5) and of each against a reference
(adjoint dopri5 at rtol = 1e-11).

Usage:
    python benchmarks/bench_odeint.py [--quick] [--repeats R]
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMBA_NUM_THREADS",
             "VECLIB_MAXIMUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import diffsci as ds  # noqa: E402
from benchmarks._measure import median_time, peak_bytes  # noqa: E402
from diffsci.scipy.integrate import odeint  # noqa: E402

T = np.linspace(0.0, 5.0, 6)
FULL_STEPS = (100, 300, 1000, 3000)
QUICK_STEPS = (100, 300)
FULL_RTOLS = (1e-4, 1e-6, 1e-8)
QUICK_RTOLS = (1e-5,)


def neural_ode(y, t, params):
    w1, b1, w2, b2 = params
    return np.tanh(y @ w1 + b1) @ w2 + b2 - 0.1 * y


def make_loss(gradient, solver):
    def loss(y0, params):
        ys = odeint(neural_ode, y0, T, params, gradient=gradient, **solver)
        return np.sum(ys ** 2)
    return ds.grad(loss, argnums=(0, 1))


def rel_diff(g1, g2):
    a = np.concatenate([np.ravel(x) for x in ds.tree_leaves(g1)])
    b = np.concatenate([np.ravel(x) for x in ds.tree_leaves(g2)])
    return float(np.max(np.abs(a - b)) / np.max(np.abs(b)))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help=f"RK4 steps {QUICK_STEPS}, dopri5 rtol {QUICK_RTOLS}, one repeat")
    parser.add_argument("--repeats", type=int, default=None, help="timed repeats (3; quick: 1)")
    opts = parser.parse_args(argv)
    repeats = opts.repeats or (1 if opts.quick else 3)
    rng = np.random.default_rng(0)
    y0 = rng.standard_normal((64, 2))
    params = (0.5 * rng.standard_normal((2, 32)), 0.1 * rng.standard_normal(32),
              0.5 * rng.standard_normal((32, 2)) / np.sqrt(32), 0.1 * rng.standard_normal(2))
    start = time.perf_counter()
    reference = make_loss("adjoint", dict(rtol=1e-11, atol=1e-12))(y0, params)

    print("odeint gradients, adjoint vs backprop: neural ODE (2-32-2 tanh MLP, batch 64), "
          f"t in [0, 5], 6 outputs; times: median of {repeats} run(s); memory: tracemalloc "
          "peak during one gradient call")
    cols = [("solver", 14), ("steps", 6), ("fwd no-AD", 10), ("backprop", 9), ("adjoint", 9),
            ("t ratio", 8), ("backprop MB", 12), ("adjoint MB", 11), ("mem ratio", 9),
            ("adj-bp diff", 11), ("bp err", 8), ("adj err", 8)]
    print(" ".join(f"{name:>{w}}" for name, w in cols))
    print(" ".join("-" * w for _, w in cols))
    solvers = [(f"rk4 n={n}", dict(method="rk4", step=5.0 / n))
               for n in (QUICK_STEPS if opts.quick else FULL_STEPS)]
    solvers += [(f"dopri5 {r:.0e}", dict(method="dopri5", rtol=r, atol=r * 1e-2))
                for r in (QUICK_RTOLS if opts.quick else FULL_RTOLS)]
    for name, solver in solvers:
        row = {"solver": name}
        _, info = odeint(neural_ode, y0, T, params, full_output=True, **solver)
        row["steps"] = str(info["nsteps"])
        row["fwd no-AD"] = f"{median_time(lambda: odeint(neural_ode, y0, T, params, **solver), repeats):.3f}s"  # noqa: E501
        results = {}
        for gradient in ("backprop", "adjoint"):
            grad = make_loss(gradient, solver)
            peak, g = peak_bytes(lambda: grad(y0, params))
            results[gradient] = (median_time(lambda: grad(y0, params), repeats), peak, g)
        (t_bp, m_bp, g_bp), (t_adj, m_adj, g_adj) = results["backprop"], results["adjoint"]
        row["backprop"] = f"{t_bp:.3f}s"
        row["adjoint"] = f"{t_adj:.3f}s"
        row["t ratio"] = f"{t_adj / t_bp:.2f}x"
        row["backprop MB"] = f"{m_bp / 1e6:,.2f}"
        row["adjoint MB"] = f"{m_adj / 1e6:,.2f}"
        row["mem ratio"] = f"{m_bp / m_adj:,.1f}x"
        row["adj-bp diff"] = f"{rel_diff(g_adj, g_bp):.1e}"
        row["bp err"] = f"{rel_diff(g_bp, reference):.0e}"
        row["adj err"] = f"{rel_diff(g_adj, reference):.0e}"
        print(" ".join(f"{row.get(c, '-'):>{w}}" for c, w in cols), flush=True)
    print("t ratio: adjoint time / backprop time; mem ratio: backprop MB / adjoint MB. "
          "adj-bp diff: max relative difference of the two gradients; bp err, adj err: each "
          "against the adjoint dopri5 gradient at rtol 1e-11.")
    print(f"(total {time.perf_counter() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
