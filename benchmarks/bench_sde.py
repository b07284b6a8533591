"""sde benchmarks: strong-order convergence per solver, gradient cost per method, Brownian queries.

1. Strong order: runs ``benchmarks/convergence/gbm.py`` (every diagonal-noise solver on GBM
   dX = 0.5X dt + X dW, exact solution on the same path, dt = 2⁻²…2⁻⁹) and
   ``benchmarks/convergence/additive.py`` (SRA1 and the others on additive noise), each with
   ``--quick`` when given.
2. Neural-SDE gradient cost (d = 16, batch 256, drift MLP 17→64→64→16 tanh, diffusion MLP
   17→64→16 sigmoid, diagonal Stratonovich noise, loss mean(y_T²)) at 100 and 1000 steps
   (``--quick``: d = 4, batch 16, 10/40 steps, one round), in float64 and float32 (torchsde's
   published figures are float32). Per method: the time; the peak resident-memory growth of
   one gradient in a fresh process (``--memory-probe``, the same measure for both libraries;
   not measured with ``--quick``); diffsci's tracemalloc peak; the relative gradient
   difference to backprop with the same solver and dtype; and the time ÷ that of torchsde's
   counterpart in the same run (backprop through the same solver; ``sdeint_adjoint`` with
   ``adjoint_reversible_heun`` for the reversible adjoint, with ``euler_heun`` for the
   stochastic adjoint).
3. Brownian interval queries per second, forward then reverse order on one interval, beside
   torchsde's BrownianInterval (no step hint for either), interleaved rounds, medians.

All timings are single-threaded: OPENBLAS/OMP/MKL/NUMBA threads are set to 1 before NumPy loads
and ``torch.set_num_threads(1)`` (on a shared machine, multi-threaded BLAS on 256×64 matmuls was
measured 5–15× *slower* from contention). diffsci and torchsde rows are timed in the same process,
interleaved (one run of each method per round), and the table reports medians over the rounds.
Both libraries run in the dtype of the row. ``--only SECTION`` runs one section.
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


ROWS = [  # (label, method, adjoint, torchsde counterpart: (method, adjoint method or None))
    ("backprop / euler_heun", "euler_heun", "backprop", ("euler_heun", None)),
    ("backprop / reversible_heun", "reversible_heun", "backprop", ("reversible_heun", None)),
    ("checkpoint / reversible_heun", "reversible_heun", "checkpoint", None),
    ("reversible adjoint / rev. Heun", "reversible_heun", "reversible",
     ("reversible_heun", "adjoint_reversible_heun")),
    ("stochastic adjoint / euler_heun", "euler_heun", "stochastic",
     ("euler_heun", "euler_heun")),
]


def sizes(quick):
    """``(d, batch, hidden, steps list)``."""
    return (4, 16, 16, (10, 40)) if quick else (16, 256, 64, (100, 1000))


def diffsci_model(d, hidden, dtype):
    """``(sde, params)`` of the neural SDE, parameters in ``dtype``."""
    drift = ds.nn.MLP.init(0, [d + 1, hidden, hidden, d], activation="tanh")
    diff = ds.nn.MLP.init(1, [d + 1, hidden, d], activation="tanh", final_activation="sigmoid")
    params = ds.tree_map(lambda x: np.asarray(x, dtype=dtype), (drift, diff))

    def with_t(t, y):
        return np.concatenate([np.full((y.shape[0], 1), t, dtype=y.dtype), y], axis=1)

    prob = sde.SDE(lambda t, y, p: p[0](with_t(t, y)), lambda t, y, p: p[1](with_t(t, y)),
                   calculus="stratonovich")
    return prob, params


def diffsci_run(d, batch, hidden, dtype, method, adjoint):
    """``run(steps) -> gradient`` for one diffsci row."""
    prob, params = diffsci_model(d, hidden, dtype)
    y0 = (np.random.default_rng(0).standard_normal((batch, d)) * 0.5).astype(dtype)

    def run(steps):
        def loss(p):
            ys = sde.sdeint(prob, y0, np.array([0.0, 1.0]), p, method=method, dt=1.0 / steps,
                            adjoint=adjoint, seed=1)
            return np.mean(ys[-1] ** 2)

        return ds.grad(loss)(params)

    return run


def torchsde_run(d, batch, hidden, dtype, method, adjoint_method):
    """``run(steps)`` for one torchsde row (None when torchsde is not installed)."""
    try:
        import torch
        import torchsde
    except ImportError:
        return None
    torch.set_num_threads(1)
    tdtype = {np.float32: torch.float32, np.float64: torch.float64}[dtype]

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
    model = SDEModule().to(tdtype)
    y0 = torch.randn(batch, d, dtype=tdtype) * 0.5

    def run(steps):
        model.zero_grad()
        ts = torch.tensor([0.0, 1.0], dtype=tdtype)
        bm = torchsde.BrownianInterval(0.0, 1.0, (batch, d), dtype=tdtype,
                                       levy_area_approximation="none")
        if adjoint_method is None:
            ys = torchsde.sdeint(model, y0, ts, method=method, dt=1.0 / steps, bm=bm)
        else:
            ys = torchsde.sdeint_adjoint(model, y0, ts, method=method, dt=1.0 / steps, bm=bm,
                                         adjoint_method=adjoint_method)
        (ys[-1] ** 2).mean().backward()

    return run


def make_run(lib, d, batch, hidden, dtype, method, adjoint):
    if lib == "diffsci":
        return diffsci_run(d, batch, hidden, dtype, method, adjoint)
    return torchsde_run(d, batch, hidden, dtype, method, adjoint)


def _status_kib(field):
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise OSError(field)


def memory_probe(spec):
    """(In a fresh process.) Peak resident-memory growth of one gradient, in MiB: the kernel's
    peak-RSS mark (VmHWM) is reset just before the gradient (``echo 5 > /proc/self/clear_refs``,
    Linux ≥ 4.0) after imports, model build and a 2-step warm-up, and read after it, minus the
    RSS before it. (``ru_maxrss`` would include the import and compilation peaks.)"""
    lib, method, adjoint, steps, dtype, d, batch, hidden = spec.split(",")
    adjoint = None if adjoint == "none" else adjoint
    run = make_run(lib, int(d), int(batch), int(hidden), np.dtype(dtype).type, method, adjoint)
    run(2)
    run(2)
    before = _status_kib("VmRSS")
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")
    run(int(steps))
    peak = _status_kib("VmHWM")
    print(f"{max(0, peak - before) / 1024:.1f}")


def peak_rss_growth(lib, method, adjoint, steps, dtype, d, batch, hidden):
    """:func:`memory_probe` in a subprocess, in MiB (nan if it fails)."""
    spec = ",".join(map(str, (lib, method, adjoint or "none", steps, np.dtype(dtype).name, d,
                              batch, hidden)))
    path = [str(Path(__file__).resolve().parents[1]), os.environ.get("PYTHONPATH", "")]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in path if p))  # keep a peer's
    proc = subprocess.run([sys.executable, __file__, "--memory-probe", spec], env=env,
                          capture_output=True, text=True, timeout=600)
    try:
        return float(proc.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return float("nan")


def _flat(g):
    return np.concatenate([np.ravel(np.asarray(x, dtype=np.float64))
                           for x in ds.tree_leaves(g)])


def neural(quick):
    d, batch, hidden, steps_list = sizes(quick)
    have_torch = torchsde_run(d, batch, hidden, np.float64, "euler_heun", None) is not None
    print(f"\nNeural-SDE gradient (d={d}, batch={batch}, hidden={hidden}, T=1, loss mean(y_T²), "
          f"one thread; time: median of interleaved rounds; memory: peak RSS growth of one "
          f"gradient in a fresh process, and diffsci's tracemalloc peak)")
    print(f"{'dtype':<8}{'steps':>6} {'method':<44}{'time s':>8}{'RSS MiB':>9}{'traced MiB':>11}"
          f"{'rel err vs backprop':>21}{'÷ torchsde':>11}")
    for dtype in (np.float64, np.float32):
        runs, grads = {}, {}
        for label, method, adjoint, peer in ROWS:
            runs[label] = ("diffsci", method, adjoint,
                           diffsci_run(d, batch, hidden, dtype, method, adjoint))
            if peer and have_torch:
                runs["torchsde " + label] = ("torchsde", *peer,
                                             torchsde_run(d, batch, hidden, dtype, *peer))
        for _lib, _m, _a, run in runs.values():
            run(4)  # warm-up: first-call costs out of the table
        for steps in steps_list:
            rounds = 1 if quick else 3 if steps >= 1000 else 5
            times = {label: [] for label in runs}
            for _ in range(rounds):
                for label, (lib, _m, _a, run) in runs.items():
                    t0 = time.perf_counter()
                    out = run(steps)
                    times[label].append(time.perf_counter() - t0)
                    if lib == "diffsci":
                        grads[label] = _flat(out)
            median = {label: statistics.median(v) for label, v in times.items()}
            refs = {}
            for label, (lib, method, adjoint, run) in runs.items():
                rss = float("nan") if quick else peak_rss_growth(lib, method, adjoint, steps,
                                                                 dtype, d, batch, hidden)
                traced, err, ratio = "-", "", "-"
                if lib == "diffsci":
                    tracemalloc.start()  # a separate run: tracemalloc slows allocation a lot
                    run(steps)
                    traced = f"{tracemalloc.get_traced_memory()[1] / 2**20:.1f}"
                    tracemalloc.stop()
                    ref = refs.setdefault(method, grads[label])
                    err = "(reference)" if ref is grads[label] else \
                        f"{np.max(np.abs(grads[label] - ref)) / np.max(np.abs(ref)):.1e}"
                    peer = "torchsde " + label
                    if peer in median:
                        ratio = f"{median[label] / median[peer]:.2f}"
                print(f"{np.dtype(dtype).name:<8}{steps:>6} {label:<44}{median[label]:>8.3f}"
                      f"{rss:>9.1f}{traced:>11}{err:>21}{ratio:>11}")
    if not have_torch:
        print("torchsde: not installed (pip install torchsde torch) — its rows are skipped")
    else:
        print("(torchsde in float32 at dt = 1/100 is an outlier: ≈ 1.1 s against ≈ 0.14 s at "
              "1/128 and 1.8 s at 1/1000 when measured alone — so the float32 100-step ratios "
              "overstate diffsci's lead; the 1000-step rows are representative)")
    if quick:
        print("(--quick: RSS column not measured)")
    else:
        flat_memory(d, batch, hidden, have_torch)
    print("Targets: every method faster than its torchsde counterpart (÷ torchsde < 1); adjoint "
          "memory flat in steps; reversible-Heun gradient error < 1e-8 in float64.")


def flat_memory(d, batch, hidden, have_torch, steps_list=(100, 300, 1000, 3000)):
    """Peak RSS growth of the O(1)-memory gradients against the number of steps (float64)."""
    print("\nAdjoint memory vs steps (float64, peak RSS growth in MiB, fresh process each; "
          "diffsci's includes its BrownianInterval node cache, bounded at 8 MiB)")
    print(f"{'method':<44}" + "".join(f"{n:>9}" for n in steps_list))
    for label, method, adjoint, peer in ROWS:
        if adjoint not in ("reversible", "stochastic"):
            continue
        cases = [("diffsci", label, method, adjoint)]
        if have_torch:
            cases.append(("torchsde", "torchsde " + label, *peer))
        for lib, name, m, a in cases:
            mib = [peak_rss_growth(lib, m, a, n, np.float64, d, batch, hidden)
                   for n in steps_list]
            print(f"{name:<44}" + "".join(f"{v:>9.1f}" for v in mib))


def brownian(quick):
    """Queries per second, forward then reverse order on one interval, diffsci and torchsde
    interleaved (a fresh interval of each per round), medians over the rounds."""
    shape = (16, 4) if quick else (256, 16)
    n, rounds = (100, 1) if quick else (1000, 5)
    ts = np.linspace(0, 1, n + 1)
    makers = {"sde.BrownianInterval": lambda r: sde.BrownianInterval(0.0, 1.0, shape, seed=r)
              .increment}
    try:
        import torch
        import torchsde

        def make_torch(r):
            tb = torchsde.BrownianInterval(0.0, 1.0, shape, dtype=torch.float64, entropy=r)
            return lambda s, t: tb(float(s), float(t))

        makers["torchsde.BrownianInterval"] = make_torch
    except ImportError:
        pass
    rates = {(name, order): [] for name in makers for order in ("forward", "reverse")}
    for r in range(rounds):
        for name, make in makers.items():
            query = make(r)
            for order in ("forward", "reverse"):
                idx = range(n) if order == "forward" else range(n - 1, -1, -1)
                t0 = time.perf_counter()
                for i in idx:
                    query(ts[i], ts[i + 1])
                rates[(name, order)].append(n / (time.perf_counter() - t0))
    print(f"\nBrownian interval queries/s, shape {shape}, {n} steps of 1/{n} (no hint; forward "
          f"then reverse on one interval; median of {rounds} interleaved rounds)")
    for (name, order), v in rates.items():
        ratio = ""
        peer = ("torchsde.BrownianInterval", order)
        if name == "sde.BrownianInterval" and peer in rates:
            ratio = f"   {statistics.median(v) / statistics.median(rates[peer]):.2f}× torchsde"
        print(f"  {name:<26}{order:<8} {statistics.median(v):>10.0f} /s{ratio}")
    if "torchsde.BrownianInterval" not in makers:
        print("  torchsde: not installed — skipped")


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small sizes (seconds)")
    parser.add_argument("--only", choices=("convergence", "neural", "brownian"),
                        help="run one section")
    parser.add_argument("--memory-probe", metavar="SPEC", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.memory_probe:
        memory_probe(args.memory_probe)
        return
    if args.only:
        {"convergence": convergence, "neural": neural, "brownian": brownian}[args.only](
            args.quick)
        return
    convergence(args.quick)
    neural(args.quick)
    brownian(args.quick)


if __name__ == "__main__":
    main()
