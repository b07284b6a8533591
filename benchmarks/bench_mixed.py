"""Mixed mode: where ``forwarddiff`` (the paper's forward-mode-inside-reverse) wins.

Workload: the gradient of a loss on the end state of an explicit-Euler
integration of a small nonlinear ODE (a damped pendulum with 2 parameters and
a 2-dimensional state), ``steps`` steps.  The parameters go through a
``forwarddiff``-wrapped simulator (one dual-number pass per input, no tape) or
through plain reverse mode (a tape of ~8 records per step).  Printed: time
(medians of interleaved repetitions) and memory held between the forward and
backward pass (tracemalloc), against the number of steps.

Run: ``python benchmarks/bench_mixed.py [--quick]``.
"""

from __future__ import annotations

import argparse
import time
import tracemalloc

import numpy as np

import diffsci as ds


def simulate(theta, steps):
    """End state of a damped pendulum (length/damping in theta) after ``steps`` Euler steps."""
    g_over_l, damping = theta[0], theta[1]
    q, p = 1.0 + 0.0 * g_over_l, 0.0 * g_over_l
    dt = 1.0 / steps
    for _ in range(steps):
        q, p = q + dt * p, p - dt * (g_over_l * np.sin(q) + damping * p)
    return np.stack([q, p])


def loss_reverse(theta, steps):
    return np.sum(simulate(theta, steps) ** 2)


def loss_mixed(theta, steps):
    return np.sum(ds.forwarddiff(lambda th: simulate(th, steps))(theta) ** 2)


def held_bytes(loss, theta, steps):
    """Memory retained between the forward pass and the backward pass."""
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    _, back = ds.pullback(lambda th: loss(th, steps), theta)
    held = tracemalloc.get_traced_memory()[0] - base
    tracemalloc.stop()
    back(1.0)
    return held


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer sizes and repetitions")
    args = parser.parse_args(argv)
    sizes = [100, 1000] if args.quick else [100, 1000, 10000]
    reps = 3 if args.quick else 7
    theta = np.array([9.81, 0.3])
    g_rev = ds.grad(loss_reverse)
    g_mix = ds.grad(loss_mixed)
    print(__doc__.splitlines()[0])
    print(f"{'steps':>7} {'reverse s':>10} {'mixed s':>10} {'time ratio':>11} "
          f"{'reverse KB':>11} {'mixed KB':>9} {'grad diff':>10}")
    for n in sizes:
        times = {"rev": [], "mix": []}
        for _ in range(reps):  # interleaved
            for key, g in (("rev", g_rev), ("mix", g_mix)):
                t0 = time.perf_counter()
                out = g(theta, n)
                times[key].append(time.perf_counter() - t0)
                if key == "rev":
                    a = out
                else:
                    b = out
        tr, tm = np.median(times["rev"]), np.median(times["mix"])
        mr, mm = held_bytes(loss_reverse, theta, n), held_bytes(loss_mixed, theta, n)
        diff = float(np.max(np.abs(a - b) / np.maximum(np.abs(a), 1e-300)))
        print(f"{n:>7} {tr:>10.4f} {tm:>10.4f} {tm / tr:>10.2f}x {mr / 1e3:>11.1f} "
              f"{mm / 1e3:>9.1f} {diff:>10.1e}")
    print("time ratio = mixed / reverse (below 1: forwarddiff is faster); memory: held between "
          "the passes")


if __name__ == "__main__":
    main()
