"""Per-operation AD overhead, the paper's way, side by side with peers (arXiv:1907.07587).

Forward + backward in float64 on one thread, for the same model code written against a NumPy-like
namespace ``np`` and run on: plain NumPy (forward only, the baseline), diffsci (``ds.grad`` through
``diffsci.numpy``; also through plain ``numpy`` dispatch), autograd, PyTorch eager (CPU) and JAX
eager (``jax.grad`` without ``jit``).  Peers that are not installed get a "not installed" row.

Workloads:
  W1  a chain of 400 elementwise ops (``sin, *1.01, +0.1, exp`` x 100) on 1 element, then sum
  W2  the same chain on 100 elements
  W3  a stacked LSTM (LSTM(4,4) layers: gates from x Wx + h Wh + b, sigmoid/tanh), 1-3 layers,
      feature size 4, sequence length 4, batch sizes 1..8; loss = sum of the last hidden state.
      Per-op overhead as in the paper: least-squares fit of time against batch size, the intercept
      at batch 0 divided by the number of recorded ops.

Op counts: the number of records diffsci's tape gets for one traced call (``len(tape.records)``
minus the leaves, counted with ``diffsci.extend.Tape``).  The same count is the denominator for
every implementation, peers included, since they run the same model code.

Timing: implementations are interleaved (round-robin inside each repetition), each sample times a
calibrated number of calls with the garbage collector off, and the table shows medians over
repetitions.  Thread pools are pinned to one thread before NumPy/torch/JAX are imported.

Usage:
    python benchmarks/bench_overhead.py [--quick] [--no-peers] [--json PATH] [--profile]
"""

from __future__ import annotations

import os

# One thread everywhere, before any numerical library is imported.
for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMBA_NUM_THREADS",
             "VECLIB_MAXIMUM_THREADS"):
    os.environ[_var] = "1"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ.setdefault("XLA_FLAGS",
                      "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")

import argparse  # noqa: E402
import gc  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import types  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import diffsci as ds  # noqa: E402
import diffsci.numpy as dnp  # noqa: E402

#: The paper's Zygote numbers (ns per op) for the stacked LSTM, by layer count; PyTorch "≥ 1 µs".
PAPER_NS_PER_OP = {1: 576.3, 2: 571.3, 3: 558.6}

#: Targets reported as PASS/FAIL lines (not asserted).
W1_MAX_US_PER_OP = 3.0
W1_MAX_RATIO_TO_NUMPY = 4.0
W3_AIM_US_PER_OP = 2.0

CHAIN_REPEATS = 100  # x 4 ops = 400 elementwise ops
LSTM_FEATURES = 4
LSTM_HIDDEN = 4
LSTM_SEQ_LEN = 4


# ---------------------------------------------------------------------------
# The model code: plain functions of a NumPy-like namespace ``np``
# ---------------------------------------------------------------------------
def chain(np, x):
    """400 elementwise ops then a sum: ``x <- exp(sin(x) * 1.01 + 0.1)``, 100 times."""
    for _ in range(CHAIN_REPEATS):
        x = np.exp(np.sin(x) * 1.01 + 0.1)
    return np.sum(x)


def sigmoid(np, z):
    return 1.0 / (1.0 + np.exp(-z))


def lstm_layer(np, params, xs):
    """One LSTM layer over ``xs`` (a list of (batch, features) arrays); returns the h states."""
    wx, wh, b = params
    hid = wh.shape[0]
    batch = xs[0].shape[0]
    h = np.zeros((batch, hid))
    c = np.zeros((batch, hid))
    out = []
    for x in xs:
        z = x @ wx + h @ wh + b
        i = sigmoid(np, z[:, :hid])
        f = sigmoid(np, z[:, hid:2 * hid])
        o = sigmoid(np, z[:, 2 * hid:3 * hid])
        g = np.tanh(z[:, 3 * hid:])
        c = f * c + i * g
        h = o * np.tanh(c)
        out.append(h)
    return out


def lstm_loss(np, params, xs):
    """Stacked LSTM: each layer reads the previous one's hidden states; loss = sum of the last h."""
    for layer in params:
        xs = lstm_layer(np, layer, xs)
    return np.sum(xs[-1])


def lstm_params(layers, rng):
    out = []
    for k in range(layers):
        fin = LSTM_FEATURES if k == 0 else LSTM_HIDDEN
        out.append((0.5 * rng.standard_normal((fin, 4 * LSTM_HIDDEN)),
                    0.5 * rng.standard_normal((LSTM_HIDDEN, 4 * LSTM_HIDDEN)),
                    0.1 * rng.standard_normal(4 * LSTM_HIDDEN)))
    return out


def lstm_inputs(batch, rng):
    return [rng.standard_normal((batch, LSTM_FEATURES)) for _ in range(LSTM_SEQ_LEN)]


# ---------------------------------------------------------------------------
# Implementations: each turns (workload, data) into a zero-argument step
# ---------------------------------------------------------------------------
def _version(dist):
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(dist)
    except PackageNotFoundError:
        return "?"


def _ns(**fns):
    return types.SimpleNamespace(**fns)


NUMPY_NS = _ns(sin=np.sin, exp=np.exp, tanh=np.tanh, sum=np.sum, zeros=np.zeros)
DNP_NS = _ns(sin=dnp.sin, exp=dnp.exp, tanh=dnp.tanh, sum=dnp.sum, zeros=np.zeros)


@dataclass
class Impl:
    """One implementation: ``make(kind, data) -> step``; ``kind`` is "chain" or "lstm"."""

    name: str
    make: object = None
    missing: str = ""  # why it cannot run (not installed ...)
    notes: list = field(default_factory=list)


def _numpy_impl():
    def make(kind, data):
        if kind == "chain":
            return lambda: chain(NUMPY_NS, data)
        params, xs = data
        return lambda: lstm_loss(NUMPY_NS, params, xs)

    return Impl("numpy forward (no AD)", make)


def _diffsci_impl(ns, label):
    def make(kind, data):
        if kind == "chain":
            g = ds.grad(lambda x: chain(ns, x))
            return lambda: g(data)
        params, xs = data
        g = ds.grad(lambda p: lstm_loss(ns, p, xs))
        return lambda: g(params)

    return Impl(label, make)


def _autograd_impl():
    try:
        import autograd
        import autograd.numpy as anp
    except ImportError:
        return Impl("autograd", missing="not installed")
    ns = _ns(sin=anp.sin, exp=anp.exp, tanh=anp.tanh, sum=anp.sum, zeros=np.zeros)

    def make(kind, data):
        if kind == "chain":
            g = autograd.grad(lambda x: chain(ns, x))
            return lambda: g(data)
        params, xs = data
        g = autograd.grad(lambda p: lstm_loss(ns, p, xs))
        return lambda: g(params)

    return Impl(f"autograd {_version('autograd')}", make)


def _torch_impl():
    try:
        import torch
    except ImportError:
        return Impl("torch eager", missing="not installed")
    torch.set_num_threads(1)
    f64 = torch.float64
    ns = _ns(sin=torch.sin, exp=torch.exp, tanh=torch.tanh, sum=torch.sum,
             zeros=lambda shape: torch.zeros(shape, dtype=f64))

    def make(kind, data):
        if kind == "chain":
            def step():
                x = torch.tensor(data, dtype=f64, requires_grad=True)
                chain(ns, x).backward()
                return x.grad
            return step
        params, xs = data
        txs = [torch.tensor(x, dtype=f64) for x in xs]

        def step():
            tp = [tuple(torch.tensor(a, dtype=f64, requires_grad=True) for a in layer)
                  for layer in params]
            lstm_loss(ns, tp, txs).backward()
            return [a.grad for layer in tp for a in layer]
        return step

    return Impl(f"torch {torch.__version__} eager", make)


def _jax_impl():
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return Impl("jax eager grad", missing="not installed")
    jax.config.update("jax_enable_x64", True)
    ns = _ns(sin=jnp.sin, exp=jnp.exp, tanh=jnp.tanh, sum=jnp.sum,
             zeros=lambda shape: jnp.zeros(shape, jnp.float64))

    def make(kind, data):
        if kind == "chain":
            g = jax.grad(lambda x: chain(ns, x))
            x = jnp.asarray(data)
            return lambda: jax.block_until_ready(g(x))
        params, xs = data
        jxs = [jnp.asarray(x) for x in xs]
        jp = [tuple(jnp.asarray(a) for a in layer) for layer in params]
        g = jax.grad(lambda p: lstm_loss(ns, p, jxs))
        return lambda: jax.block_until_ready(g(jp))

    return Impl(f"jax {jax.__version__} eager grad", make)


def implementations(peers):
    impls = [_numpy_impl(), _diffsci_impl(DNP_NS, "diffsci (diffsci.numpy)"),
             _diffsci_impl(NUMPY_NS, "diffsci (numpy dispatch)")]
    if peers:
        impls += [_autograd_impl(), _torch_impl(), _jax_impl()]
    else:
        impls += [Impl(n, missing="disabled (--no-peers)")
                  for n in ("autograd", "torch eager", "jax eager grad")]
    return impls


# ---------------------------------------------------------------------------
# Op counting (diffsci's tape) and timing
# ---------------------------------------------------------------------------
def count_ops(fn, *args):
    """Records diffsci's tape gets for one traced call of ``fn`` (leaves excluded)."""
    tape = ds.extend.Tape()
    leaves, tree = ds.tree_flatten(args)
    traced = ds.tree_unflatten(tree, [tape.leaf(np.asarray(a)) for a in leaves])
    fn(*traced)
    return len(tape.records) - len(leaves)


def _calibrate(step, target_s):
    """Number of calls per sample so that one sample takes about ``target_s``."""
    step()  # warm up (first-call costs: imports, caches, JAX dispatch tables)
    t0 = time.perf_counter()
    step()
    dt = time.perf_counter() - t0
    return max(1, min(10_000, int(target_s / max(dt, 1e-7))))


def time_interleaved(steps, reps, target_s):
    """Median seconds per call for each step, sampling them round-robin ``reps`` times."""
    loops = [_calibrate(s, target_s) for s in steps]
    samples = [[] for _ in steps]
    gc_was = gc.isenabled()
    try:
        for _ in range(reps):
            gc.collect()
            gc.disable()
            for k, (s, n) in enumerate(zip(steps, loops)):
                t0 = time.perf_counter()
                for _ in range(n):
                    s()
                samples[k].append((time.perf_counter() - t0) / n)
            gc.enable()
    finally:
        if gc_was:
            gc.enable()
    return [statistics.median(s) for s in samples]


def fit_line(xs, ys):
    """Least-squares ``y = a + b x``; returns ``(a, b)``."""
    b, a = np.polyfit(np.asarray(xs, float), np.asarray(ys, float), 1)
    return float(a), float(b)


# ---------------------------------------------------------------------------
# Workloads
# ---------------------------------------------------------------------------
def run_chain(impls, n, reps, target_s):
    x = np.random.default_rng(0).uniform(-1, 1, n)
    ops = count_ops(lambda x: chain(DNP_NS, x), x)
    live = [i for i in impls if not i.missing]
    times = dict(zip([i.name for i in live],
                     time_interleaved([i.make("chain", x) for i in live], reps, target_s)))
    return {"ops": ops, "n": n, "seconds_per_call": times}


def run_lstm(impls, layers_list, batches, reps, target_s):
    rng = np.random.default_rng(1)
    live = [i for i in impls if not i.missing]
    out = {}
    for layers in layers_list:
        params = lstm_params(layers, rng)
        per_batch = {i.name: [] for i in live}
        ops = None
        for batch in batches:
            xs = lstm_inputs(batch, rng)
            n_ops = count_ops(lambda p: lstm_loss(DNP_NS, p, xs), params)
            if ops is not None and n_ops != ops:
                raise AssertionError(f"op count changed with batch size: {ops} vs {n_ops}")
            ops = n_ops
            ts = time_interleaved([i.make("lstm", (params, xs)) for i in live], reps, target_s)
            for i, t in zip(live, ts):
                per_batch[i.name].append(t)
        fits = {name: fit_line(batches, ts) for name, ts in per_batch.items()}
        out[layers] = {"ops": ops, "batches": list(batches), "seconds_per_call": per_batch,
                       "intercept_s": {k: a for k, (a, b) in fits.items()},
                       "slope_s_per_batch": {k: b for k, (a, b) in fits.items()}}
    return out


# ---------------------------------------------------------------------------
# Reporting
# ---------------------------------------------------------------------------
def _row(cells, widths):
    return "  ".join(str(c).rjust(w) if k else str(c).ljust(w)
                     for k, (c, w) in enumerate(zip(cells, widths)))


TABLE_HEADER = ("implementation", "µs/call", "ops", "µs/op", "× numpy fwd")
_W = (34, 12, 6, 9, 12)


def print_chain(title, res, impls):
    print(f"\n{title}")
    print(_row(TABLE_HEADER, _W))
    print(_row(["-" * w for w in _W], _W))
    base = res["seconds_per_call"].get(impls[0].name)
    for i in impls:
        if i.missing:
            print(_row((i.name, i.missing, "", "", ""), _W))
            continue
        t = res["seconds_per_call"][i.name]
        print(_row((i.name, f"{t * 1e6:.1f}", res["ops"], f"{t * 1e6 / res['ops']:.3f}",
                    f"{t / base:.2f}"), _W))


def print_lstm(res, impls):
    print("\nW3: stacked LSTM(4,4), seq 4, forward + backward; batch sizes "
          f"{res[next(iter(res))]['batches']}; intercept at batch 0 per recorded op")
    base = impls[0].name
    w = (34, 7, 6, 14, 14, 12, 14)
    print(_row(("implementation", "layers", "ops", "intercept µs", "ns/op (icpt)",
                "× numpy fwd", "slope µs/batch"), w))
    print(_row(["-" * k for k in w], w))
    for layers, r in res.items():
        for i in impls:
            if i.missing:
                print(_row((i.name, layers, "", i.missing, "", "", ""), w))
                continue
            a = r["intercept_s"][i.name]
            print(_row((i.name, layers, r["ops"], f"{a * 1e6:.1f}", f"{a * 1e9 / r['ops']:.0f}",
                        f"{a / r['intercept_s'][base]:.2f}",
                        f"{r['slope_s_per_batch'][i.name] * 1e6:.2f}"), w))
        print(_row(("paper (Zygote, Julia)", layers, "", "", f"{PAPER_NS_PER_OP[layers]:.0f}",
                    "", ""), w))


def verdicts(results, impls):
    """The target lines: (label, status, detail)."""
    lines = []
    ds_name = "diffsci (diffsci.numpy)"
    w1 = results["W1"]
    t, ops = w1["seconds_per_call"][ds_name], w1["ops"]
    us_op = t * 1e6 / ops
    lines.append((f"W1 diffsci ≤ {W1_MAX_US_PER_OP:.0f} µs/op",
                  us_op <= W1_MAX_US_PER_OP, f"{us_op:.3f} µs/op"))
    ratio = t / w1["seconds_per_call"][impls[0].name]
    lines.append((f"W1 diffsci ≤ {W1_MAX_RATIO_TO_NUMPY:.0f}× numpy forward",
                  ratio <= W1_MAX_RATIO_TO_NUMPY, f"{ratio:.2f}×"))
    torch_name = next((i.name for i in impls if i.name.startswith("torch") and not i.missing),
                      None)
    for layers, r in results["W3"].items():
        ours = r["intercept_s"][ds_name] / r["ops"]
        if torch_name is None:
            lines.append((f"W3 {layers} layer(s) diffsci per-op overhead < torch", None,
                          "torch not run"))
        else:
            theirs = r["intercept_s"][torch_name] / r["ops"]
            lines.append((f"W3 {layers} layer(s) diffsci per-op overhead < torch",
                          ours < theirs, f"{ours * 1e9:.0f} vs {theirs * 1e9:.0f} ns/op"))
        lines.append((f"W3 {layers} layer(s) diffsci < {W3_AIM_US_PER_OP:.0f} µs/op (aim)",
                      ours * 1e6 < W3_AIM_US_PER_OP, f"{ours * 1e9:.0f} ns/op"))
    return lines


def profile_w1(n=1, calls=200, top=25):
    """cProfile of diffsci's forward + backward on W1, sorted by own time."""
    import cProfile
    import pstats

    x = np.random.default_rng(0).uniform(-1, 1, n)
    g = ds.grad(lambda x: chain(DNP_NS, x))
    g(x)
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(calls):
        g(x)
    prof.disable()
    print(f"\ncProfile: diffsci W1 (n={n}), {calls} calls of grad, by own time")
    pstats.Stats(prof).sort_stats("tottime").print_stats(top)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true",
                   help="few repetitions and batch sizes (CI smoke test)")
    p.add_argument("--no-peers", action="store_true",
                   help="do not import or run autograd, torch, jax")
    p.add_argument("--json", metavar="PATH", help="write the results as JSON")
    p.add_argument("--profile", action="store_true", help="also print a cProfile of diffsci on W1")
    args = p.parse_args(argv)

    reps, target = (3, 0.002) if args.quick else (9, 0.02)
    batches = (1, 8) if args.quick else tuple(range(1, 9))
    t_start = time.perf_counter()
    impls = implementations(peers=not args.no_peers)
    print("Per-op AD overhead (arXiv:1907.07587): forward + backward, float64, one thread")
    print(f"python {platform.python_version()}, numpy {np.__version__}, "
          f"diffsci {ds.__version__}, {platform.machine()}; medians of {reps} interleaved "
          f"repetitions{' (--quick)' if args.quick else ''}")

    results = {"W1": run_chain(impls, 1, reps, target)}
    print_chain("W1: chain of 400 elementwise ops on 1 element, then sum", results["W1"], impls)
    results["W2"] = run_chain(impls, 100, reps, target)
    print_chain("W2: the same chain on 100 elements", results["W2"], impls)
    results["W3"] = run_lstm(impls, (1, 2, 3), batches, reps, target)
    print_lstm(results["W3"], impls)

    print("\nTargets (reported, not asserted):")
    checks = verdicts(results, impls)
    for label, ok, detail in checks:
        status = "SKIP" if ok is None else ("PASS" if ok else "FAIL")
        print(f"  {status}  {label}: {detail}")
    elapsed = time.perf_counter() - t_start
    print(f"\n(op counts: records on diffsci's tape for one traced call, leaves excluded; used as "
          f"the denominator for every implementation. Total run time {elapsed:.1f} s.)")

    if args.profile:
        profile_w1()
    if args.json:
        payload = {
            "quick": args.quick,
            "implementations": {i.name: (i.missing or "ran") for i in impls},
            "W1": results["W1"], "W2": results["W2"],
            "W3": {str(k): v for k, v in results["W3"].items()},
            "targets": [{"label": a, "status": "SKIP" if b is None else ("PASS" if b else "FAIL"),
                         "detail": c} for a, b, c in checks],
            "elapsed_s": elapsed,
        }
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(payload, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
