"""``diffsci.jit``: per-operation overhead of compiled value-and-gradient, compile and cache costs.

The workloads and the op counts are those of ``bench_overhead.py`` (same model code, same
denominator: the records of diffsci's tape for one eager forward call):

  W1  400-op elementwise chain on 1 element: µs/op of ``ds.jit(ds.value_and_grad(f))``
      (target ≤ 0.05 µs/op, i.e. ≥ 25× eager), and of ``ds.value_and_grad(ds.jit(f))`` (which
      is ``jit(value_and_grad(f))``: the same fused program, reached through grad)
  W2  the same chain on 100 elements, against the chain written by hand as one fused Numba
      forward + backward loop (target: within 1.5×)
  W3  stacked LSTM, 1-3 layers (intercept method: least-squares fit of time against batch
      size, intercept over ops; target ≤ 0.25 µs/op, below Zygote's 0.57 in the paper)
  C   compile time of a 1000-op program in a fresh cache (aim ≤ 2 s), the same program's first
      call in a new process that finds Numba's cache (aim ≤ 50 ms; Numba's one-time start in
      a process, its registries and first array type, is paid by a 2-op program before and
      reported apart, as is the import of diffsci and Numba), and the re-tracing cost
      of the paper's Taylor-series sin over inputs that change its number of terms

Peers in the same run: the NumPy forward pass, eager diffsci, ``jax.jit(jax.value_and_grad)``
(if installed).  Timing: medians of interleaved samples (``bench_overhead.time_interleaved``);
one thread everywhere.  The machine may be shared: figures are for this run only.

Usage:
    python benchmarks/bench_jit.py [--quick] [--no-peers] [--json PATH]
"""

from __future__ import annotations

import os

# One thread everywhere, before any numerical library is imported (as bench_overhead.py).
for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMBA_NUM_THREADS",
             "VECLIB_MAXIMUM_THREADS"):
    os.environ[_var] = "1"
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import argparse  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import textwrap  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numba  # noqa: E402
import numpy as np  # noqa: E402

import diffsci as ds  # noqa: E402
from benchmarks import bench_overhead as bo  # noqa: E402

W1_MAX_US_PER_OP = 0.05
W2_MAX_RATIO_TO_HAND = 1.5
W3_MAX_US_PER_OP = 0.25
COMPILE_1000_MAX_S = 2.0
CACHE_HIT_MAX_S = 0.050


# ---------------------------------------------------------------------------
# The hand-written reference: the W1/W2 chain, forward and backward fused in one Numba loop
# ---------------------------------------------------------------------------
@numba.njit(cache=True, error_model="numpy")
def hand_chain_vg(x, reps):
    n = x.shape[0]
    g = np.empty(n)
    total = 0.0
    ins = np.empty(reps)
    outs = np.empty(reps)
    for k in range(n):
        v = x[k]
        for r in range(reps):
            ins[r] = v
            v = math.exp(math.sin(v) * 1.01 + 0.1)
            outs[r] = v
        total += v
        d = 1.0
        for r in range(reps - 1, -1, -1):
            d = d * outs[r] * 1.01 * math.cos(ins[r])
        g[k] = d
    return total, g


def _chain_loss(x):
    return bo.chain(bo.DNP_NS, x)


def _steps_chain(x, peers):
    vg = ds.value_and_grad(_chain_loss)
    steps = {
        "numpy forward": lambda: bo.chain(bo.NUMPY_NS, x),
        "diffsci eager value_and_grad": lambda: vg(x),
    }
    jvg = ds.jit(ds.value_and_grad(_chain_loss))
    jvg(x)
    steps["diffsci jit value_and_grad"] = lambda: jvg(x)
    vgj = ds.value_and_grad(ds.jit(_chain_loss))  # grad of the jitted f: the same program
    vgj(x)
    steps["diffsci value_and_grad(jit(f))"] = lambda: vgj(x)
    hand_chain_vg(x, bo.CHAIN_REPEATS)
    steps["hand-written Numba fwd+bwd"] = lambda: hand_chain_vg(x, bo.CHAIN_REPEATS)
    if peers:
        jx = _jax_vg("chain", x)
        if jx is not None:
            steps["jax.jit(value_and_grad)"] = jx
    # same numbers as eager (and as the hand-written loop)
    v, g = jvg(x)
    ev, eg = ds.value_and_grad(_chain_loss)(x)
    hv, hg = hand_chain_vg(x, bo.CHAIN_REPEATS)
    assert abs(v - ev) <= 1e-12 * abs(ev) and np.allclose(g, eg, rtol=1e-12, atol=0)
    ov, og = vgj(x)
    assert abs(ov - ev) <= 1e-12 * abs(ev) and np.allclose(og, eg, rtol=1e-12, atol=0)
    assert np.allclose(g, hg, rtol=1e-10)
    return steps


def _jax_vg(kind, data):
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", True)
    ns = bo._ns(sin=jnp.sin, exp=jnp.exp, tanh=jnp.tanh, sum=jnp.sum, zeros=jnp.zeros)
    if kind == "chain":
        f = jax.jit(jax.value_and_grad(lambda x: bo.chain(ns, x)))
        xj = jnp.asarray(data)
        f(xj)[1].block_until_ready()
        return lambda: f(xj)[1].block_until_ready()
    params, xs = data
    f = jax.jit(jax.value_and_grad(lambda p, xs: bo.lstm_loss(ns, p, xs)))
    pj = [tuple(jnp.asarray(a) for a in layer) for layer in params]
    xj = [jnp.asarray(a) for a in xs]
    jax.block_until_ready(f(pj, xj))
    return lambda: jax.block_until_ready(f(pj, xj))


def run_chain(n, peers, reps, target_s):
    x = np.random.default_rng(0).uniform(-1, 1, n)
    ops = bo.count_ops(_chain_loss, x)
    t0 = time.perf_counter()
    steps = _steps_chain(x, peers)
    setup = time.perf_counter() - t0
    names = list(steps)
    times = bo.time_interleaved([steps[k] for k in names], reps, target_s)
    return {"ops": ops, "n": n, "setup_s": setup, "seconds_per_call": dict(zip(names, times))}


def run_lstm(layers_list, batches, peers, reps, target_s):
    rng = np.random.default_rng(1)
    out = {}

    def loss(p, xs):
        return bo.lstm_loss(bo.DNP_NS, p, xs)

    for layers in layers_list:
        params = bo.lstm_params(layers, rng)
        per = {}
        compile_s, compile_auto_s = [], []
        ops = None
        for batch in batches:
            xs = bo.lstm_inputs(batch, rng)
            ops = bo.count_ops(lambda p, xs=xs: loss(p, xs), params)
            vg = ds.value_and_grad(loss)
            # the steady state of the compiled program: every segment compiled at the first
            # call (by default a long one first runs as Python calling its compiled kernels,
            # see diffsci/ARCHITECTURE_JIT.md); the default's first call is timed apart
            auto = ds.jit(vg)
            t0 = time.perf_counter()
            auto(params, xs)
            compile_auto_s.append(time.perf_counter() - t0)
            jvg = ds.jit(vg, compile_all=True)
            t0 = time.perf_counter()
            got = jvg(params, xs)
            compile_s.append(time.perf_counter() - t0)
            ref = vg(params, xs)
            for a, b in zip(ds.tree_leaves(got), ds.tree_leaves(ref)):
                np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
            steps = {
                "numpy forward": lambda xs=xs: bo.lstm_loss(bo.NUMPY_NS, params, xs),
                "diffsci eager value_and_grad": lambda xs=xs, vg=vg: vg(params, xs),
                "diffsci jit value_and_grad": lambda xs=xs, jvg=jvg: jvg(params, xs),
            }
            if peers:
                jx = _jax_vg("lstm", (params, xs))
                if jx is not None:
                    steps["jax.jit(value_and_grad)"] = jx
            names = list(steps)
            ts = bo.time_interleaved([steps[k] for k in names], reps, target_s)
            for k, t in zip(names, ts):
                per.setdefault(k, []).append(t)
        fits = {k: bo.fit_line(batches, ts) for k, ts in per.items()} if len(batches) > 1 \
            else {k: (ts[0], 0.0) for k, ts in per.items()}
        out[layers] = {"ops": ops, "batches": list(batches), "seconds_per_call": per,
                       "intercept_s": {k: a for k, (a, b) in fits.items()},
                       "compile_s": compile_s, "compile_default_s": compile_auto_s}
    return out


# ---------------------------------------------------------------------------
# Compile and cache costs (fresh cache folder; a second process for the cache hit)
# ---------------------------------------------------------------------------
_PROGRAM = textwrap.dedent("""
    import time, sys
    t0 = time.perf_counter()
    import numpy as np, diffsci as ds
    t1 = time.perf_counter()
    def f(x):
        for _ in range(int(sys.argv[1])):
            x = np.exp(np.sin(x) * 1.01 + 0.1)
        return np.sum(x)
    jf = ds.jit(f)
    x = np.array([0.3, 0.7])
    # Numba's one-time start in a process (its typing and target registries, the first
    # array type): paid by the first compiled call of any program, measured apart
    tw = time.perf_counter()
    ds.jit(lambda x: x * 2.0 + 1.0)(np.ones(3))
    t2 = time.perf_counter()
    jf(x)
    t3 = time.perf_counter()
    print(t1 - t0, t3 - t2, t2 - tw)
""")


def run_compile(repeats=250):
    with tempfile.TemporaryDirectory() as d:
        env = dict(os.environ, DIFFSCI_JIT_CACHE=d,
                   PYTHONPATH=str(Path(__file__).resolve().parent.parent))
        res = []
        for _ in range(2):
            p = subprocess.run([sys.executable, "-c", _PROGRAM, str(repeats)], env=env,
                               capture_output=True, text=True, timeout=900, check=True)
            res.append([float(v) for v in p.stdout.split()])
    ops = bo.count_ops(lambda x: _chain_of(x, repeats), np.array([0.3, 0.7]))
    return {"ops": ops, "compile_s": res[0][1], "cache_hit_s": res[1][1],
            "import_s": res[1][0], "numba_start_s": res[1][2]}


def _chain_of(x, repeats):
    for _ in range(repeats):
        x = np.exp(np.sin(x) * 1.01 + 0.1)
    return np.sum(x)


def _taylor(x):
    t, sign = 0.0, -1.0
    for i in range(1, 20):
        if i % 2 == 1:
            term = x ** i / float(np.prod(np.arange(1, i + 1)))
            if abs(term) < 1e-8:
                return t
            sign = -sign
            t = t + sign * term
    return t


def run_taylor():
    g = ds.jit(ds.grad(_taylor))
    xs = [0.1, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0]
    first, again = [], []
    for x in xs:
        t0 = time.perf_counter()
        g(x)
        first.append(time.perf_counter() - t0)
    for x in xs:
        t0 = time.perf_counter()
        for _ in range(100):
            g(x)
        again.append((time.perf_counter() - t0) / 100)
    eager = ds.grad(_taylor)
    t0 = time.perf_counter()
    for _ in range(20):
        eager(1.0)
    te = (time.perf_counter() - t0) / 20
    for x in xs:
        assert g(x) == eager(x)
    return {"inputs": xs, "first_call_s": first, "cached_call_s": again, "eager_s": te,
            "specializations": g.stats()["specializations"]}


# ---------------------------------------------------------------------------
def _fmt_us(s):
    return f"{s * 1e6:10.2f}"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true",
                    help="a smoke run: 40-op chains, W3 with 1 layer, batch 1 and 2 time steps, "
                         "C on a 100-op program, few repetitions (figures not comparable)")
    ap.add_argument("--no-peers", action="store_true", help="skip JAX")
    ap.add_argument("--json", help="write the figures to this file")
    a = ap.parse_args(argv)
    peers = not a.no_peers
    reps, target = (3, 0.02) if a.quick else (7, 0.1)
    if a.quick:  # small programs: the compile times, not the figures, bound a smoke run
        bo.CHAIN_REPEATS = 10
        bo.LSTM_SEQ_LEN = 2
    warnings.simplefilter("default")
    print("diffsci.jit benchmark (one thread; medians of interleaved samples; the machine "
          f"may be shared: load average {os.getloadavg()[0]:.1f} at start)")
    results = {}
    targets = []
    for key, n in (("W1", 1), ("W2", 100)):
        r = run_chain(n, peers, reps, target)
        results[key] = r
        print(f"\n{key}: {4 * bo.CHAIN_REPEATS}-op chain on {n} element(s), {r['ops']} ops, "
              f"value and gradient "
              f"(compile + first call {r['setup_s']:.2f} s)")
        print(f"  {'implementation':34s} {'µs/call':>10s} {'µs/op':>8s}")
        for k, t in r["seconds_per_call"].items():
            print(f"  {k:34s} {_fmt_us(t)} {t * 1e6 / r['ops']:8.4f}")
    w1 = results["W1"]["seconds_per_call"]
    us_op = w1["diffsci jit value_and_grad"] * 1e6 / results["W1"]["ops"]
    speed = w1["diffsci eager value_and_grad"] / w1["diffsci jit value_and_grad"]
    targets.append(("W1 jit ≤ 0.05 µs/op", us_op <= W1_MAX_US_PER_OP,
                    f"{us_op:.4f} µs/op, {speed:.0f}× eager"))
    outer = w1["diffsci value_and_grad(jit(f))"] / w1["diffsci jit value_and_grad"]
    print(f"\nW1: value_and_grad(jit(f)) takes {outer:.1f}× the time of jit(value_and_grad(f)) "
          f"(it is jit(value_and_grad(f)): one fused program), "
          f"{w1['diffsci eager value_and_grad'] / w1['diffsci value_and_grad(jit(f))']:.0f}× "
          f"faster than eager")
    w2 = results["W2"]["seconds_per_call"]
    ratio = w2["diffsci jit value_and_grad"] / w2["hand-written Numba fwd+bwd"]
    targets.append(("W2 jit ≤ 1.5× hand-written Numba", ratio <= W2_MAX_RATIO_TO_HAND,
                    f"{ratio:.2f}×"))
    layers = (1,) if a.quick else (1, 2, 3)
    batches = (1,) if a.quick else (1, 2, 4, 8)
    w3 = run_lstm(layers, batches, peers, reps, target)
    results["W3"] = {str(k): v for k, v in w3.items()}
    print(f"\nW3: stacked LSTM, batches {batches}, intercept method (paper: Zygote "
          f"{bo.PAPER_NS_PER_OP[1]:.0f} ns/op)")
    print(f"  {'layers':6s} {'ops':>5s} {'implementation':34s} {'icpt µs':>9s} {'ns/op':>8s}"
          f"  compile s (compile_all=True; default)")
    for nl, r in w3.items():
        for k, icpt in r["intercept_s"].items():
            comp = (", ".join(f"{c:.1f}" for c in r["compile_s"]) + " (default: " + ", ".join(
                f"{c:.1f}" for c in r["compile_default_s"]) + ")") if "jit" in k else ""
            print(f"  {nl:<6d} {r['ops']:5d} {k:34s} {icpt * 1e6:9.2f} "
                  f"{icpt * 1e9 / r['ops']:8.1f}  {comp}")
        jit_ns = r["intercept_s"]["diffsci jit value_and_grad"] * 1e9 / r["ops"]
        targets.append((f"W3 {nl} layer(s) jit ≤ 250 ns/op", jit_ns <= W3_MAX_US_PER_OP * 1e3,
                        f"{jit_ns:.0f} ns/op"))
    c = run_compile(25 if a.quick else 250)
    results["compile"] = c
    print(f"\nC: a {c['ops']}-op program (forward): compile {c['compile_s']:.2f} s in a fresh "
          f"cache; first call in a new process with the cache {c['cache_hit_s'] * 1e3:.1f} ms "
          f"(after importing diffsci: {c['import_s']:.2f} s, and Numba's one-time start in "
          f"the process, measured apart on a 2-op program: {c['numba_start_s'] * 1e3:.0f} ms)")
    targets.append(("compile of a 1000-op program ≤ 2 s", c["compile_s"] <= COMPILE_1000_MAX_S,
                    f"{c['compile_s']:.2f} s"))
    targets.append(("cache hit ≤ 50 ms", c["cache_hit_s"] <= CACHE_HIT_MAX_S,
                    f"{c['cache_hit_s'] * 1e3:.1f} ms"))
    t = run_taylor()
    results["taylor"] = t
    print(f"\nRe-tracing: grad of the Taylor-series sin, {t['specializations']} specializations "
          f"over x in {t['inputs']}")
    print("  first call (trace + compile) ms: "
          + ", ".join(f"{v * 1e3:.0f}" for v in t["first_call_s"]))
    print("  cached call µs: " + ", ".join(f"{v * 1e6:.1f}" for v in t["cached_call_s"])
          + f"   (eager grad {t['eager_s'] * 1e6:.0f} µs)")
    # a --quick run measures smaller programs: its figures are not held to the targets
    status = [("SKIP" if a.quick else "PASS" if ok else "FAIL") for _, ok, _ in targets]
    print("\nTargets" + (" (not evaluated: --quick measures smaller programs)" if a.quick
                         else ""))
    for (name, _ok, fig), st in zip(targets, status):
        print(f"  {st}  {name}: {fig}")
    results["targets"] = [{"name": n, "status": st, "figure": f}
                          for (n, _ok, f), st in zip(targets, status)]
    results["quick"] = a.quick
    if a.json:
        Path(a.json).write_text(json.dumps(results, indent=1, default=float))
    return 0


if __name__ == "__main__":
    sys.exit(main())
