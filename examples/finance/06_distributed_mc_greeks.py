"""Monte Carlo price and Greeks with standard errors on a Dask LocalCluster (diffsci.distributed).

A European call under Black–Scholes, priced with its six first-order Greeks by
``diffsci.distributed.mc_price_greeks``: the paths are split into shards, each shard is one Dask
task running ``finance.mc_greeks`` (the Numba path kernel with its pathwise adjoint) with its own
seed from the counter-based generator (``shard_seeds``), and the per-shard sums of every sample
and of its square are added by a fixed tree of tasks on the cluster, so the standard errors are
those of one estimator over all the paths. The cluster is a ``LocalCluster`` of worker processes
started by the script (nothing to set up; the same code takes ``client=`` of a dask-jobqueue or
Kubernetes cluster). The run checks every estimate against the closed form (z-scores), that the
standard errors fall as N^-1/2, and that the cluster's result equals the in-process
(``client="serial"``) one bit for bit.
"""

import os
import time

import matplotlib.pyplot as plt
import numpy as np

import finance
from diffsci import distributed as dd
from examples._common import parse_args, result, save_figure

KW = dict(spot=100.0, strike=105.0, expiry=1.0, rate=0.03, dividend=0.01, vol=0.25)


def analytic():
    """The closed-form price and Greeks (AD of ``finance.bsm_price``), named as mc_greeks'."""
    g = finance.greeks(finance.bsm_price, **KW)
    return {k: float(g[k]) for k in dd._domains.MC_NAMES}


def main():
    args = parse_args()
    import distributed

    n_total = 2**26 if args.full else 2**22  # 67M or 4.2M paths: powers of two split evenly
    n_shards = 64 if args.full else 16
    sizes = [n_total // 16, n_total // 4, n_total]
    exact = analytic()
    workers = max(1, min(os.cpu_count() or 1, 4))
    t0 = time.perf_counter()
    with distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                  dashboard_address=":0", silence_logs=40) as cluster, \
            distributed.Client(cluster) as client:
        client.wait_for_workers(workers)
        client.run(lambda: __import__("finance"))  # warm the workers (imports, kernel cache)
        dd.mc_price_greeks(**KW, n_paths=8_000, n_shards=workers, client=client,
                           progress=False)
        startup = time.perf_counter() - t0
        runs, wall = {}, {}
        for n in sizes:
            t = time.perf_counter()
            runs[n] = dd.mc_price_greeks(**KW, n_paths=n, n_shards=n_shards, seed=2024,
                                         client=client)
            wall[n] = time.perf_counter() - t
    t = time.perf_counter()
    serial = dd.mc_price_greeks(**KW, n_paths=n_total, n_shards=n_shards, seed=2024,
                                client="serial", progress=False)
    t_serial = time.perf_counter() - t
    best = runs[n_total]
    same = all(best[k] == serial[k] for k in best)

    names = list(dd._domains.MC_NAMES)
    z = np.array([(best[k][0] - exact[k]) / best[k][1] for k in names])
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4.5))
    ax1.axhspan(-1.96, 1.96, color="0.85", label="±1.96 (95 %)")
    ax1.bar(names, z, color=["C0" if abs(v) < 1.96 else "C3" for v in z])
    ax1.axhline(0.0, color="k", lw=0.8)
    ax1.set_ylabel("(MC − closed form) / s.e.")
    ax1.set_title(f"z-scores, {n_total:,} paths in {n_shards} shards on {workers} workers")
    ax1.legend(fontsize=8)
    ax1.tick_params(axis="x", rotation=30)
    ns = np.array(sizes, dtype=float)
    for j, (k, c) in enumerate((("price", "C0"), ("delta", "C1"), ("vega", "C2"))):
        est = np.array([runs[n][k][0] for n in sizes])
        se = np.array([runs[n][k][1] for n in sizes])
        ax2.errorbar(ns * (1.0 + 0.06 * (j - 1)), (est - exact[k]) / abs(exact[k]),
                     yerr=1.96 * se / abs(exact[k]), fmt="o", color=c, capsize=3,
                     label=f"{k}: (MC − exact)/|exact| ± 1.96 s.e.")
    ax2.axhline(0.0, color="k", lw=0.8)
    ax2.set_xscale("log")
    ax2.set_xlabel("paths N (the same shard seeds: each run's paths contain the smaller runs')")
    ax2.set_ylabel("relative error")
    ax2.set_title("95 % bands shrink as N^-1/2 and cover the closed form")
    ax2.legend(fontsize=8)
    fig.suptitle("diffsci.distributed.mc_price_greeks: Black–Scholes call, pathwise adjoints")
    fig.tight_layout()
    save_figure(fig)

    for k in names:
        print(f"{k:>13}: {best[k][0]: .6f} ± {best[k][1]:.6f}   closed form {exact[k]: .6f}   "
              f"z = {(best[k][0] - exact[k]) / best[k][1]: .2f}")
    print(f"cluster start {startup:.1f} s; {n_total:,} paths: {wall[n_total]:.2f} s on {workers} "
          f"workers, {t_serial:.2f} s in process (whose Numba kernel threads use every core too; a "
          f"shared machine: timings are indicative)")
    covered = int(np.sum(np.abs(z) < 1.96))
    ratio = best["price"][1] / runs[sizes[0]]["price"][1]
    result(f"{covered}/{len(names)} of price and six Greeks within 1.96 s.e. of the closed form "
           f"(delta {best['delta'][0]:.5f} ± {best['delta'][1]:.5f} vs {exact['delta']:.5f}); "
           f"s.e. ×{ratio:.3f} for 16× the paths (N^-1/2: 0.25); cluster = in-process bit for "
           f"bit: {same}; {n_total:,} paths {wall[n_total]:.2f} s on {workers} workers vs "
           f"{t_serial:.2f} s in one process")
    if not same:
        raise SystemExit("the cluster's result differs from the in-process one")


if __name__ == "__main__":
    main()
