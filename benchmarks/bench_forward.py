"""Forward mode and second order beside peers: ``jvp`` per-op overhead, ``hessian``, ``hvp``.

Float64 on one thread (thread pools pinned by ``bench_overhead``, imported first).  Peers that are
not installed get a "not installed" row.

(a) Per-op overhead of ``ds.jvp`` on the reverse-mode benchmark's workloads (``bench_overhead``'s
    ``chain``: W1 = 400 elementwise ops on 1 element then a sum, W2 = the same on 100 elements),
    against the plain NumPy forward pass, ``torch.func.jvp``, ``torch.autograd.forward_ad`` (dual
    tensors) and ``jax.jvp`` (eager, no ``jit``).  One JVP along a random direction per call.
(b) ``ds.hessian`` (forward over reverse) and ``ds.hvp`` on the extended Rosenbrock function
    (Moré, Garbow & Hillstrom 1981, problem 21) in n = 10 and 100 dimensions, beside
    ``ds.jacobian(ds.grad(f))`` (reverse over reverse: the gradient recorded once, n sweeps) and
    ``autograd.hessian`` / ``autograd.hessian_tensor_product``, PyTorch's
    ``torch.autograd.functional.hessian`` / ``hvp`` (reverse over reverse; also ``vectorize=True``
    for the Hessian) and JAX eager ``jax.hessian`` / ``jax.jvp`` of ``jax.grad``.  Every Hessian
    is checked against the closed form before it is timed.
(c) Explicit JVP rules against the fallback through the VJP (``_core._jvp_from_vjp``, one reverse
    pass per call) on a few diffsci ops.

Timing as in ``bench_overhead``: implementations interleaved round-robin inside each repetition,
each sample a calibrated number of calls with the garbage collector off; medians of the
repetitions.

Usage:
    python benchmarks/bench_forward.py [--quick] [--no-peers] [--json PATH]
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

# bench_overhead pins every thread pool to one thread before NumPy/torch/JAX are imported.
from benchmarks.bench_overhead import (  # noqa: E402, I001
    CHAIN_REPEATS,
    DNP_NS,
    NUMPY_NS,
    Impl,
    _ns,
    _row,
    _version,
    chain,
    count_ops,
    time_interleaved,
)

import argparse  # noqa: E402
import contextlib  # noqa: E402
import gc  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import diffsci as ds  # noqa: E402
import diffsci.numpy as dnp  # noqa: E402
from diffsci.numpy import _wrap as W  # noqa: E402

ROSENBROCK_DIMS = (10, 100)


# ---------------------------------------------------------------------------
# The model code: plain functions of a NumPy-like namespace ``np``
# ---------------------------------------------------------------------------
def rosenbrock(np, x):
    """Extended Rosenbrock: Σ_i 100 (x_2i - x_2i-1²)² + (1 - x_2i-1)² over the n/2 pairs."""
    odd, even = x[0::2], x[1::2]
    return np.sum(100.0 * (even - odd ** 2) ** 2 + (1.0 - odd) ** 2)


def rosenbrock_hessian(x):
    """The closed-form Hessian (block diagonal, 2×2 blocks), for checking every implementation."""
    n = x.size
    h = np.zeros((n, n))
    for i in range(0, n, 2):
        a, b = x[i], x[i + 1]
        h[i, i] = 1200 * a * a - 400 * b + 2
        h[i, i + 1] = h[i + 1, i] = -400 * a
        h[i + 1, i + 1] = 200
    return h


# ---------------------------------------------------------------------------
# (a) jvp per-op overhead: implementations make(x, v) -> step
# ---------------------------------------------------------------------------
def _jvp_numpy():
    return Impl("numpy forward (no AD)", lambda x, v: lambda: chain(NUMPY_NS, x))


def _jvp_diffsci(ns, label):
    def make(x, v):
        f = lambda x: chain(ns, x)  # noqa: E731
        return lambda: ds.jvp(f, (x,), (v,))
    return Impl(label, make)


def _jvp_torch_func():
    try:
        import torch
        import torch.func
    except ImportError:
        return Impl("torch.func.jvp", missing="not installed")
    torch.set_num_threads(1)
    ns = _ns(sin=torch.sin, exp=torch.exp, sum=torch.sum)

    def make(x, v):
        tx, tv = torch.tensor(x), torch.tensor(v)
        return lambda: torch.func.jvp(lambda x: chain(ns, x), (tx,), (tv,))
    return Impl(f"torch {torch.__version__} func.jvp", make)


def _jvp_torch_forward_ad():
    try:
        import torch
        import torch.autograd.forward_ad as fwAD
    except ImportError:
        return Impl("torch forward_ad", missing="not installed")
    ns = _ns(sin=torch.sin, exp=torch.exp, sum=torch.sum)

    def make(x, v):
        tx, tv = torch.tensor(x), torch.tensor(v)

        def step():
            with fwAD.dual_level():
                y = chain(ns, fwAD.make_dual(tx, tv))
                return fwAD.unpack_dual(y).tangent
        return step
    return Impl(f"torch {torch.__version__} forward_ad", make)


def _jvp_jax():
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return Impl("jax eager jvp", missing="not installed")
    jax.config.update("jax_enable_x64", True)
    ns = _ns(sin=jnp.sin, exp=jnp.exp, sum=jnp.sum)

    def make(x, v):
        jx, jv = jnp.asarray(x), jnp.asarray(v)
        f = lambda x: chain(ns, x)  # noqa: E731
        return lambda: jax.block_until_ready(jax.jvp(f, (jx,), (jv,)))
    return Impl(f"jax {jax.__version__} eager jvp", make)


def jvp_implementations(peers):
    impls = [_jvp_numpy(), _jvp_diffsci(DNP_NS, "diffsci jvp (diffsci.numpy)"),
             _jvp_diffsci(NUMPY_NS, "diffsci jvp (numpy dispatch)")]
    if peers:
        return impls + [_jvp_torch_func(), _jvp_torch_forward_ad(), _jvp_jax()]
    return impls + [Impl(n, missing="disabled (--no-peers)")
                    for n in ("torch.func.jvp", "torch forward_ad", "jax eager jvp")]


def run_jvp_chains(impls, sizes, reps, target_s):
    """W1/W2 (the chain on each size in ``sizes``), all steps interleaved in one run."""
    live = [i for i in impls if not i.missing]
    steps, out = [], {}
    for n in sizes:
        rng = np.random.default_rng(0)
        x, v = rng.uniform(-1, 1, n), rng.standard_normal(n)
        out[n] = {"ops": count_ops(lambda x: chain(DNP_NS, x), x), "n": n}
        steps += [i.make(x, v) for i in live]
    times = iter(time_interleaved(steps, reps, target_s))
    for n in sizes:
        out[n]["seconds_per_call"] = {i.name: next(times) for i in live}
    return out


def print_jvp_chain(title, res, impls):
    print(f"\n{title}")
    header = ("implementation", "µs/call", "ops", "µs/op", "× numpy fwd", "overhead µs/op")
    w = (34, 12, 6, 9, 12, 15)
    print(_row(header, w))
    print(_row(["-" * k for k in w], w))
    base = res["seconds_per_call"][impls[0].name]
    for i in impls:
        if i.missing:
            print(_row((i.name, i.missing, "", "", "", ""), w))
            continue
        t = res["seconds_per_call"][i.name]
        over = f"{(t - base) * 1e6 / res['ops']:.3f}" if i is not impls[0] else ""
        print(_row((i.name, f"{t * 1e6:.1f}", res["ops"], f"{t * 1e6 / res['ops']:.3f}",
                    f"{t / base:.2f}", over), w))


# ---------------------------------------------------------------------------
# (b) hessian and hvp: implementations make(kind, x, v) -> step returning a NumPy array
# ---------------------------------------------------------------------------
def _second_diffsci():
    def make(kind, x, v):
        f = lambda x: rosenbrock(dnp, x)  # noqa: E731
        if kind == "hessian":
            h = ds.hessian(f)
            return lambda: h(x)
        return lambda: ds.hvp(f, x, v)
    return Impl("diffsci (fwd over rev)", make)


def _second_diffsci_rev():
    def make(kind, x, v):
        if kind != "hessian":
            return None
        h = ds.jacobian(ds.grad(lambda x: rosenbrock(dnp, x)))
        return lambda: h(x)
    return Impl("diffsci jacobian(grad) (rev over rev)", make)


def _second_autograd():
    try:
        import autograd
        import autograd.numpy as anp
    except ImportError:
        return Impl("autograd", missing="not installed")

    def make(kind, x, v):
        f = lambda x: rosenbrock(anp, x)  # noqa: E731
        if kind == "hessian":
            h = autograd.hessian(f)
            return lambda: h(x)
        hvp = autograd.hessian_tensor_product(f)
        return lambda: hvp(x, v)
    return Impl(f"autograd {_version('autograd')}", make)


def _second_torch(vectorize=False):
    label = "torch {} functional" + (" (vectorize)" if vectorize else "")
    try:
        import torch
        from torch.autograd.functional import hessian, hvp
    except ImportError:
        return Impl(label.format(""), missing="not installed")
    torch.set_num_threads(1)

    def make(kind, x, v):
        tx, tv = torch.tensor(x), torch.tensor(v)
        f = lambda x: rosenbrock(torch, x)  # noqa: E731
        if kind == "hessian":
            return lambda: hessian(f, tx, vectorize=vectorize).numpy()
        if vectorize:
            return None
        return lambda: hvp(f, tx, tv)[1].numpy()
    return Impl(label.format(torch.__version__), make)


def _second_jax():
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return Impl("jax eager", missing="not installed")
    jax.config.update("jax_enable_x64", True)

    def make(kind, x, v):
        jx, jv = jnp.asarray(x), jnp.asarray(v)
        f = lambda x: rosenbrock(jnp, x)  # noqa: E731
        if kind == "hessian":
            h = jax.hessian(f)
            return lambda: np.asarray(h(jx))
        g = jax.grad(f)
        return lambda: np.asarray(jax.jvp(g, (jx,), (jv,))[1])
    return Impl(f"jax {jax.__version__} eager", make)


def second_implementations(peers):
    impls = [_second_diffsci(), _second_diffsci_rev()]
    if peers:
        return impls + [_second_autograd(), _second_torch(), _second_torch(vectorize=True),
                        _second_jax()]
    return impls + [Impl(n, missing="disabled (--no-peers)")
                    for n in ("autograd", "torch functional", "jax eager")]


def run_second(impls, dims, reps, target_s):
    """Every implementation's Hessian and HVP for every n, checked, then timed interleaved."""
    steps, keys = [], []
    for n in dims:
        rng = np.random.default_rng(n)
        x, v = rng.uniform(-1.5, 1.5, n), rng.standard_normal(n)
        exact = rosenbrock_hessian(x)
        for kind, want in (("hessian", exact), ("hvp", exact @ v)):
            for i in impls:
                step = None if i.missing else i.make(kind, x, v)
                if step is None:
                    continue
                if not np.allclose(np.asarray(step()), want, rtol=1e-10, atol=1e-8):
                    raise AssertionError(f"{i.name}: wrong {kind} for n = {n}")
                steps.append(step)
                keys.append((kind, n, i.name))
    out = {}
    for (kind, n, name), t in zip(keys, time_interleaved(steps, reps, target_s)):
        out.setdefault((kind, n), {})[name] = t
    return out


def print_second(res, impls):
    ours = impls[0].name
    kinds = sorted({k for k, _ in res}, key=["hessian", "hvp"].index)
    dims = sorted({n for _, n in res})
    cols = [(k, n) for k in kinds for n in dims]
    print("\n(b) Hessian and Hessian-vector product of the extended Rosenbrock function; "
          "time per call (µs) and ratio to diffsci (> 1: diffsci is faster)")
    w = (34,) + (20,) * len(cols)
    print(_row(("implementation",) + tuple(f"{k} n={n}" for k, n in cols), w))
    print(_row(["-" * k for k in w], w))
    for i in impls:
        if i.missing:
            print(_row((i.name, i.missing) + ("",) * (len(cols) - 1), w))
            continue
        cells = []
        for c in cols:
            t = res[c].get(i.name)
            if t is None:
                cells.append("—")
            elif i.name == ours:
                cells.append(f"{t * 1e6:.0f}")
            else:
                cells.append(f"{t * 1e6:.0f} ({t / res[c][ours]:.2f}×)")
        print(_row((i.name,) + tuple(cells), w))


# ---------------------------------------------------------------------------
# (c) explicit JVP rules against the VJP fallback
# ---------------------------------------------------------------------------
@contextlib.contextmanager
def _fallback(*prims):
    saved = [dict(p.jvps) for p in prims]
    for p in prims:
        p.jvps.clear()
    try:
        yield
    finally:
        for p, s in zip(prims, saved):
            p.jvps.update(s)


FALLBACK_CASES = [
    # (label, primitives whose rules are removed, function, input shape)
    ("W1 chain (sin, multiply, add, exp, sum)", (W.sin, W.multiply, W.add, W.exp, W.sum),
     lambda x: chain(DNP_NS, x), (1,)),
    ("matmul 8×8, 20 times", (W.matmul,), lambda x: _matmul_chain(x), (8, 8)),
    ("cumprod 4×16 along axis 1", (W.cumprod,), lambda x: dnp.cumprod(x, axis=1), (4, 16)),
    ("linalg.solve 6×6", (dnp.linalg.solve,),
     lambda x: dnp.linalg.solve(x + 6 * np.eye(6), x[0]), (6, 6)),
]


def _matmul_chain(x):
    y = x
    for _ in range(20):
        y = W.matmul(x, y) * 0.1
    return y


def run_fallback(reps, target_s):
    steps = []
    for label, prims, f, shape in FALLBACK_CASES:
        rng = np.random.default_rng(0)
        x, v = rng.uniform(-1, 1, shape), rng.standard_normal(shape)

        def explicit(f=f, x=x, v=v):
            return ds.jvp(f, (x,), (v,))

        def fallback(explicit=explicit, prims=prims):
            with _fallback(*prims):
                return explicit()

        if not np.allclose(fallback()[1], explicit()[1], rtol=1e-10, atol=1e-12):
            raise AssertionError(f"fallback and explicit JVP disagree on {label}")
        steps += [explicit, fallback]
    times = time_interleaved(steps, reps, target_s)
    return [{"case": c[0], "explicit_s": times[2 * k], "fallback_s": times[2 * k + 1]}
            for k, c in enumerate(FALLBACK_CASES)]


def print_fallback(res):
    print("\n(c) ds.jvp with explicit JVP rules vs the fallback through the VJP (one reverse "
          "pass per call)")
    w = (42, 14, 14, 10)
    print(_row(("case", "explicit µs", "fallback µs", "speed-up"), w))
    print(_row(["-" * k for k in w], w))
    for r in res:
        print(_row((r["case"], f"{r['explicit_s'] * 1e6:.1f}", f"{r['fallback_s'] * 1e6:.1f}",
                    f"{r['fallback_s'] / r['explicit_s']:.1f}×"), w))


# ---------------------------------------------------------------------------
def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="few repetitions (CI smoke test)")
    p.add_argument("--no-peers", action="store_true",
                   help="do not import or run autograd, torch, jax")
    p.add_argument("--json", metavar="PATH", help="write the results as JSON")
    args = p.parse_args(argv)

    reps, target = (3, 0.002) if args.quick else (9, 0.02)
    dims = ROSENBROCK_DIMS[:1] if args.quick else ROSENBROCK_DIMS
    t_start = time.perf_counter()
    print("Forward mode and second order (issue #3 §8): float64, one thread")
    print(f"python {platform.python_version()}, numpy {np.__version__}, diffsci {ds.__version__}, "
          f"{platform.machine()}; medians of {reps} interleaved repetitions"
          f"{' (--quick)' if args.quick else ''}")

    impls = jvp_implementations(peers=not args.no_peers)
    second = second_implementations(peers=not args.no_peers)
    gc.freeze()  # the libraries' objects: keeps the per-repetition gc.collect() cheap

    chains = run_jvp_chains(impls, (1, 100), reps, target)
    results = {"W1": chains[1], "W2": chains[100]}
    print_jvp_chain(f"(a) W1: ds.jvp of a chain of {4 * CHAIN_REPEATS} elementwise ops on 1 "
                    "element, then sum", results["W1"], impls)
    print_jvp_chain("(a) W2: the same chain on 100 elements", results["W2"], impls)

    results["second"] = run_second(second, dims, reps, target)
    print_second(results["second"], second)

    results["fallback"] = run_fallback(reps, target)
    print_fallback(results["fallback"])

    elapsed = time.perf_counter() - t_start
    print(f"\n(ops: records on diffsci's tape for one traced call of the chain, leaves excluded; "
          f"the denominator for every implementation. Every Hessian and HVP was checked "
          f"against the closed form. Total run time {elapsed:.1f} s.)")
    if args.json:
        payload = {
            "quick": args.quick,
            "implementations": {i.name: (i.missing or "ran") for i in impls + second},
            "W1": results["W1"], "W2": results["W2"],
            "second": {f"{k} n={n}": v for (k, n), v in results["second"].items()},
            "fallback": results["fallback"],
            "elapsed_s": elapsed,
        }
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(payload, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
