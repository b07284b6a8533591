"""checkpointed_loop against the plain loop: peak memory and time of a gradient, against n.

Workload: n explicit steps of a 1-D Allen–Cahn reaction–diffusion equation on a periodic grid of
``--size`` points (10 000 by default),

    u ← u + dt · (D · (u[i−1] − 2u[i] + u[i+1]) + u − u³),   dt = 0.1,

and the gradient of ``loss = Σ u_n²`` with respect to the initial state u₀ and the diffusion
coefficient D (``ds.grad(loss, argnums=(0, 1))``), computed two ways:

* plain: the Python loop is recorded on the tape (every step's intermediates kept);
* checkpointed: ``ds.checkpointed_loop(step, u0, n, snapshots=k, args=(D,))`` with k fixed
  (``--snapshots``, 10 by default): revolve's binomial schedule, at most k stored states.

Also shown: one forward pass without AD (the baseline cost of n steps), the number of step
evaluations of the checkpointed gradient (n taped + revolve's r·n − β(k+1, r−1) recomputed, see
diffsci/DERIVATIONS.md eq. (C6)) against the plain gradient's n, and the largest relative
difference between the two gradients.

Memory: the peak of ``tracemalloc`` during one gradient call, above what was allocated before it
(NumPy reports its buffers to tracemalloc).  Time: median wall time over ``--repeats`` gradient
calls, measured in runs without tracemalloc.  Plain-loop rows whose memory, extrapolated from the
smallest n, would exceed ``--max-plain-gb`` are skipped and show the estimate instead.

Usage:
    python benchmarks/bench_checkpoint.py [--quick] [--snapshots K] [--size N] [--repeats R]
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
from diffsci._checkpoint import LoopStats, checkpointed_loop, min_advances  # noqa: E402

DT = 0.1
D0 = 0.5
FULL_NS = (100, 1000, 10000)
QUICK_NS = (100, 1000)


def step(u, D):
    """One explicit Allen–Cahn step (u³ written as u·u·u: NumPy's float power is ~100× slower)."""
    lap = np.roll(u, 1) - 2.0 * u + np.roll(u, -1)
    return u + DT * (D * lap + u - u * u * u)


def plain_loss(u, D, n):
    for _ in range(n):
        u = step(u, D)
    return np.sum(u * u)


def checkpointed_loss(u, D, n, k):
    u = checkpointed_loop(step, u, n, k, (D,))
    return np.sum(u * u)


def forward_only(u, D, n):
    for _ in range(n):
        u = step(u, D)
    return float(np.sum(u * u))


def rel_diff(g1, g2):
    return max(float(np.max(np.abs(np.asarray(a) - np.asarray(b))) / np.max(np.abs(np.asarray(b))))
               for a, b in zip(g1, g2))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help=f"n in {QUICK_NS}, one repeat")
    parser.add_argument("--snapshots", type=int, default=10, help="k, stored states (10)")
    parser.add_argument("--size", type=int, default=10_000, help="grid points (10000)")
    parser.add_argument("--repeats", type=int, default=None, help="timed repeats (3; quick: 1)")
    parser.add_argument("--max-plain-gb", type=float, default=1.0,
                        help="skip plain rows whose extrapolated peak exceeds this (1.0)")
    opts = parser.parse_args(argv)
    ns = QUICK_NS if opts.quick else FULL_NS
    repeats = opts.repeats or (1 if opts.quick else 3)
    k = opts.snapshots

    rng = np.random.default_rng(0)
    u0 = rng.uniform(-1.0, 1.0, opts.size)
    grad_plain = ds.grad(plain_loss, argnums=(0, 1))
    grad_ck = ds.grad(checkpointed_loss, argnums=(0, 1))

    print(f"checkpointed_loop vs plain loop: gradient of sum(u_n^2) w.r.t. (u0, D), Allen-Cahn "
          f"steps on {opts.size} points, k = {k} snapshots; times: median of {repeats} run(s); "
          f"memory: tracemalloc peak above the inputs")
    cols = [("n", 7), ("fwd no-AD", 10), ("plain", 9), ("ckpt", 9), ("t ratio", 8),
            ("plain MB", 10), ("ckpt MB", 8), ("mem ratio", 9), ("step evals", 12),
            ("r", 3), ("grad diff", 9)]
    print(" ".join(f"{name:>{w}}" for name, w in cols))
    print(" ".join("-" * w for _, w in cols))
    bytes_per_step = None
    start = time.perf_counter()
    for n in ns:
        row = {"n": str(n)}
        row["fwd no-AD"] = f"{median_time(lambda: forward_only(u0, D0, n), repeats):.3f}s"
        peak_ck, g_ck = peak_bytes(lambda: grad_ck(u0, D0, n, k))
        t_ck = median_time(lambda: grad_ck(u0, D0, n, k), repeats)
        row["ckpt"] = f"{t_ck:.3f}s"
        row["ckpt MB"] = f"{peak_ck / 1e6:.2f}"
        est = None if bytes_per_step is None else bytes_per_step * n
        if est is not None and est > opts.max_plain_gb * 1e9:
            row["plain"] = "skipped"
            row["plain MB"] = f"~{est / 1e6:,.0f}*"
            row["mem ratio"] = f"~{est / peak_ck:,.0f}x*"
        else:
            peak_pl, g_pl = peak_bytes(lambda: grad_plain(u0, D0, n))
            t_pl = median_time(lambda: grad_plain(u0, D0, n), repeats)
            bytes_per_step = bytes_per_step or peak_pl / n
            row["plain"] = f"{t_pl:.3f}s"
            row["t ratio"] = f"{t_ck / t_pl:.2f}x"
            row["plain MB"] = f"{peak_pl / 1e6:,.1f}"
            row["mem ratio"] = f"{peak_pl / peak_ck:,.0f}x"
            row["grad diff"] = f"{rel_diff(g_ck, g_pl):.0e}"
        evals = n + min_advances(n, k)
        row["step evals"] = f"{evals / n:.2f}n"
        row["r"] = str(LoopStats(n, k).repetitions)
        print(" ".join(f"{row.get(name, '-'):>{w}}" for name, w in cols), flush=True)
    print("step evals: step evaluations of the checkpointed gradient per step (n taped + revolve's "
          "r*n - beta(k+1, r-1) recomputed); the plain gradient's is 1.00n.")
    print("grad diff: max relative difference of the two gradients. "
          "* plain row skipped: memory extrapolated linearly from the smallest n "
          f"(over --max-plain-gb {opts.max_plain_gb:g}).")
    print(f"(total {time.perf_counter() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
