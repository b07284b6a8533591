"""``diffsci.jit`` end to end: compiled value-and-gradient of real programs against eager mode.

Each case is a training-loop step, ``ds.jit(ds.value_and_grad(loss))`` against
``ds.value_and_grad(loss)`` in the same run, on parameters that change between calls (an update
is simulated by a small perturbation, so guards on values are exercised as in training):

  taylor    the paper's Taylor-series sin (``examples/01_taylor_sin.py``), ``jit(grad)`` over
            inputs that change its number of terms: compile time per new specialisation, run
            time per call after
  ode-bp    ``odeint`` (RK4, fixed step) of a user-written MLP right-hand side, gradient by
            backpropagation through the steps (``gradient="backprop"``)
  ode-adj   the same loss with ``gradient="adjoint"``
  sde       the neural-SDE drift of ``examples/sde/01_neural_sde.py``: one Euler-Maruyama path
            with its Brownian path fixed (``seed``), squared distance to fixed data
  trebuchet ``examples/04_trebuchet.py``'s training loss (MLP controller through the swing and
            flight ODEs; its landing index is an argmax, a guard of the compiled program)
  lstm-T    the 2-layer character LSTM of ``examples/03_lstm_char_model.py`` at sequence
            lengths T (compile time against T; the example's own T = 24 is not run by default)

Compile time (first jitted call, including tracing and any re-specialisation over the updates)
is reported apart from the steady-state time (medians of interleaved samples,
``bench_overhead.time_interleaved``). Each case checks that jitted and eager values and
gradients agree; the run exits 1 if any differs by more than 1e-10 relative. One thread
everywhere; the machine may be shared: the figures are for this run only.

Usage:
    python benchmarks/bench_jit_e2e.py [--quick] [--json PATH] [--cases taylor,ode-bp,...]
        [--lstm-lengths 2,4,8]
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMBA_NUM_THREADS",
             "VECLIB_MAXIMUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import importlib  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

import diffsci as ds  # noqa: E402
from benchmarks import bench_overhead as bo  # noqa: E402
from diffsci.scipy.integrate import odeint  # noqa: E402

REL_TOL = 1e-10


def _max_rel_diff(a, b):
    """Largest |a - b| over all leaves, relative to max(1, |b|) leaf-wise maxima."""
    la, lb = ds.tree_leaves(a), ds.tree_leaves(b)
    assert len(la) == len(lb), "jit and eager results have different structures"
    worst = 0.0
    for x, y in zip(la, lb):
        x, y = np.asarray(x, float), np.asarray(y, float)
        scale = max(1.0, float(np.max(np.abs(y))) if y.size else 1.0)
        if x.size:
            worst = max(worst, float(np.max(np.abs(x - y))) / scale)
    return worst


def _perturb(params, k):
    """The k-th simulated update: every leaf times (1 + 1e-3 k) plus 1e-3 k (deterministic)."""
    return ds.tree_map(lambda p: np.asarray(p) * (1.0 + 1e-3 * k) + 1e-3 * k, params)


def run_vg_case(name, loss, params, args, updates, reps, target_s):
    """jit(value_and_grad(loss)) against value_and_grad(loss) at ``updates`` parameter sets."""
    eager = ds.value_and_grad(loss)
    jitted = ds.jit(ds.value_and_grad(loss))
    t0 = time.perf_counter()
    jitted(params, *args)
    first_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    diff = 0.0
    points = [_perturb(params, k) for k in range(updates)]
    for p in points:  # the later updates: re-specialisations, if a guard fails
        diff = max(diff, _max_rel_diff(jitted(p, *args), eager(p, *args)))
    update_s = time.perf_counter() - t0
    it = [0]

    def step(f):
        def run():
            it[0] = (it[0] + 1) % len(points)
            f(points[it[0]], *args)
        return run

    te, tj = bo.time_interleaved([step(eager), step(jitted)], reps, target_s)
    st = jitted.stats()
    return {"case": name, "eager_s": te, "jit_s": tj, "speedup": te / tj,
            "compile_s": first_s, "updates_s": update_s, "max_rel_diff": diff,
            "specializations": st["specializations"], "eager_fallbacks": st["eager"],
            "traces": st["traces"]}


# ---------------------------------------------------------------- the cases
def _mlp_rhs(y, t, net):
    return net(y[None, :])[0] - 0.1 * y


def case_ode(gradient, quick):
    net = ds.nn.MLP.init(0, [2, 16, 2], activation="tanh")
    y0 = np.array([1.0, -0.5])
    ts = np.linspace(0.0, 1.0, 3 if quick else 11)  # RK4 steps: 2 quick, 10 full
    step = float(ts[1] - ts[0])
    target = np.stack([np.cos(ts), np.sin(ts)], axis=1)

    def loss(net, y0):
        ys = odeint(_mlp_rhs, y0, ts, net, method="rk4", step=step, gradient=gradient)
        return np.sum((ys - target) ** 2)

    return loss, net, (y0,)


def case_sde(quick):
    import sde
    spec = importlib.import_module("examples.sde.01_neural_sde")
    mlp = ds.nn.MLP.init(0, [2, 50, 2], activation="tanh")
    ts = np.linspace(0.0, 1.0, 30 if not quick else 10)
    data = np.stack([2.0 * np.cos(2 * ts), 2.0 * np.sin(2 * ts)], axis=1)

    def loss(mlp):
        ys = sde.sdeint(spec.MODEL, spec.U0[None, :], ts, mlp, dt=spec.DT, seed=1000)
        return np.sum((ys - data[:, None, :]) ** 2)

    return loss, mlp, ()


def case_trebuchet(quick):
    tre = importlib.import_module("examples.04_trebuchet")
    rng = np.random.default_rng(0)
    train_t, train_w = tre.sample_tasks(rng, 8 if quick else 96)
    net = ds.nn.MLP.init(0, [2, 32, 32, 2], activation="tanh")

    def loss(net):
        mc, ar = tre.controls(net, train_t, train_w)
        return np.mean(((tre.distance(mc, ar, train_w) - train_t) / 10.0) ** 2)

    return loss, net, ()


def case_lstm(length, quick):
    lstm = importlib.import_module("examples.03_lstm_char_model")
    chars = sorted(set(lstm.TEXT))
    vocab = len(chars)
    ids = np.array([chars.index(ch) for ch in lstm.TEXT])
    xs, ys = lstm.windows(ids, length, stride=6, vocab=vocab)
    hidden = 8 if quick else 48
    model = lstm.CharModel.init(0, vocab, hidden, layers=2)
    return lstm.cross_entropy, model, (xs, ys)


def run_taylor():
    """jit(grad(taylor_sin)) over inputs with different numbers of terms."""
    tay = importlib.import_module("examples.01_taylor_sin")

    def f(x):
        return tay.taylor_sin(x, log=lambda s: None)

    g, eager = ds.jit(ds.grad(f)), ds.grad(f)
    xs = [0.1, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0]
    first = []
    for x in xs:
        t0 = time.perf_counter()
        g(x)
        first.append(time.perf_counter() - t0)
    diff = max(_max_rel_diff(g(x), eager(x)) for x in xs)
    steps = [lambda: [g(x) for x in xs], lambda: [eager(x) for x in xs]]
    tj, te = bo.time_interleaved(steps, 5, 0.02)
    st = g.stats()
    return {"case": "taylor", "eager_s": te / len(xs), "jit_s": tj / len(xs),
            "speedup": te / tj, "compile_s": sum(first), "first_call_s": first,
            "updates_s": 0.0, "max_rel_diff": diff, "specializations": st["specializations"],
            "eager_fallbacks": st["eager"], "traces": st["traces"], "inputs": xs}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="small sizes, few samples (smoke test)")
    ap.add_argument("--json", help="write the figures to this file")
    ap.add_argument("--cases", default=None,
                    help="comma-separated subset of taylor,ode-bp,ode-adj,sde,trebuchet,lstm "
                         "(default: all; with --quick: taylor, the others compile for minutes)")
    ap.add_argument("--lstm-lengths", default=None,
                    help="comma-separated LSTM sequence lengths (default 2 quick, 2,4,8 full)")
    ns = ap.parse_args(argv)
    chosen = ns.cases or ("taylor" if ns.quick else "taylor,ode-bp,ode-adj,sde,trebuchet,lstm")
    cases = [c.strip() for c in chosen.split(",") if c.strip()]
    known = {"taylor", "ode-bp", "ode-adj", "sde", "trebuchet", "lstm"}
    if not set(cases) <= known:
        ap.error(f"--cases: expected a subset of {sorted(known)}, got {cases}")
    lengths = [int(s) for s in (ns.lstm_lengths or ("2" if ns.quick else "2,4,8")).split(",")]
    reps, target_s, updates = (3, 0.02, 2) if ns.quick else (7, 0.2, 4)

    rows = []
    for c in cases:
        print(f"running {c} ...", flush=True)
        if c == "taylor":
            rows.append(run_taylor())
            continue
        if c == "lstm":
            for T in lengths:
                loss, p, a = case_lstm(T, ns.quick)
                rows.append(run_vg_case(f"lstm-T{T}", loss, p, a, updates, reps, target_s))
            continue
        loss, p, a = {"ode-bp": lambda: case_ode("backprop", ns.quick),
                      "ode-adj": lambda: case_ode("adjoint", ns.quick),
                      "sde": lambda: case_sde(ns.quick),
                      "trebuchet": lambda: case_trebuchet(ns.quick)}[c]()
        rows.append(run_vg_case(c, loss, p, a, updates, reps, target_s))

    print()
    print(f"{'case':<12} {'eager ms':>10} {'jit ms':>10} {'speed-up':>9} {'compile s':>10} "
          f"{'updates s':>10} {'specs':>6} {'eager fb':>8} {'max rel diff':>13}")
    for r in rows:
        print(f"{r['case']:<12} {r['eager_s'] * 1e3:10.3f} {r['jit_s'] * 1e3:10.3f} "
              f"{r['speedup']:8.2f}x {r['compile_s']:10.2f} {r['updates_s']:10.2f} "
              f"{r['specializations']:6d} {r['eager_fallbacks']:8d} {r['max_rel_diff']:13.2e}")
    print("compile s: first jitted call (trace + Numba); updates s: the perturbed parameter "
          "sets after it (re-specialisations, compared with eager); speed-up: eager / jit "
          "steady state")
    bad = [r["case"] for r in rows if not r["max_rel_diff"] <= REL_TOL]
    if ns.json:
        Path(ns.json).write_text(json.dumps({"quick": ns.quick, "rows": rows,
                                             "rel_tol": REL_TOL, "failed": bad}, indent=1))
    if bad:
        print(f"FAIL: jit and eager differ by more than {REL_TOL:g} relative in {bad}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
