"""quantum: adjoint-method value+gradient of ⟨H⟩ against PennyLane and parameter shift.

Workload "HEA-TFIM" (issue 4): |0…0⟩, then L × [RY on every qubit, RZ on every qubit, CNOT ladder
(i, i+1)]; H = Σ Z_i Z_{i+1} + 0.5 Σ X_i (open chain); value and gradient of ⟨H⟩ with respect to
all 2·N·L angles, for N×L in {4×2, 8×4, 12×4, 16×4, 16×10, 20×2}. One thread by default; with
``--threads 2`` Numba and OpenMP (PennyLane Lightning) get two: our sweeps then run split in two
halves (``quantum._kernels.*_split``) from ``quantum._kernels.PAR_MIN_AMPS`` amplitudes, and
batches run their rows in parallel. BLAS stays at one thread.
Thread counts are pinned before any import, so ``--threads 1,2`` (the default) runs this script
once per count in a fresh process and prints one table per count (and one JSON with both).

Columns (median seconds over repeats; each repeat runs the call at least once and ~0.2 s in all):
- ``fwd``: our forward pass (``quantum.expval``).
- ``adjoint``: our value+gradient (``ds.value_and_grad`` of ``expval``: forward + H ψ + one
  backward sweep).
- ``shift``: our value+gradient by parameter shift (2 circuits per angle; N ≤ 12 only).
- ``lightning``: PennyLane ``lightning.qubit``, ``diff_method="adjoint"``, ``qml.grad`` (which
  includes its forward pass), when PennyLane is installed.
- ``dq-bp``: PennyLane ``default.qubit`` with backprop (autograd), N ≤ 12 only.
Ratios: ``adjoint / lightning`` (< 1: we are faster) and ``adjoint / fwd`` (gradient cost in
forward passes). Also: peak NumPy memory of one value+gradient in state vectors (tracemalloc;
Numba kernels allocate nothing), gate throughput in ns per amplitude per gate at the largest N, and
a batch of 64 parameter sets against a Python loop.

Usage: ``python benchmarks/bench_quantum.py [--quick] [--no-peers] [--threads 1,2] [--json PATH]``.
"""

from __future__ import annotations

import os
import sys


def _threads_arg(argv: list[str]) -> str:
    """``--threads`` read before NumPy/Numba are imported (they fix thread counts at import)."""
    for i, a in enumerate(argv):
        if a == "--threads" and i + 1 < len(argv):
            return argv[i + 1]
        if a.startswith("--threads="):
            return a.split("=", 1)[1]
    return "1,2"


THREADS = _threads_arg(sys.argv[1:])
_FIRST = THREADS.split(",")[0]  # a multi-count run only dispatches; see _run_each
os.environ["NUMBA_NUM_THREADS"] = _FIRST
os.environ["OMP_NUM_THREADS"] = _FIRST
os.environ["OPENBLAS_NUM_THREADS"] = "1"
os.environ["MKL_NUM_THREADS"] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import diffsci as ds  # noqa: E402
from quantum import Circuit, X, Z, expval  # noqa: E402
from quantum._ops import forward_states  # noqa: E402

SIZES = [(4, 2), (8, 4), (12, 4), (16, 4), (16, 10), (20, 2)]
QUICK_SIZES = [(4, 2), (8, 4)]
SHIFT_MAX_N = 12
BACKPROP_MAX_N = 12


def hea(n: int, layers: int) -> Circuit:
    """L × [RY all, RZ all, CNOT ladder]."""
    c = Circuit(n)
    for _ in range(layers):
        for q in range(n):
            c.ry(q)
        for q in range(n):
            c.rz(q)
        for q in range(n - 1):
            c.cnot(q, q + 1)
    return c


def tfim_h(n: int):
    H = Z(0) @ Z(1)
    for i in range(1, n - 1):
        H = H + Z(i) @ Z(i + 1)
    for i in range(n):
        H = H + 0.5 * X(i)
    return H


def timeit(fn, budget: float = 0.2, repeats: int = 5) -> float:
    """Median seconds of fn() over ``repeats`` samples, each looping ~budget/repeats seconds."""
    fn()
    t0 = time.perf_counter()
    fn()
    once = time.perf_counter() - t0
    inner = max(1, int(budget / repeats / max(once, 1e-9)))
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(inner):
            fn()
        samples.append((time.perf_counter() - t0) / inner)
    return statistics.median(samples)


def pennylane_fns(n: int, layers: int, theta: np.ndarray):
    """(lightning adjoint grad, default.qubit backprop grad) callables, or Nones."""
    try:
        import pennylane as qml
        from pennylane import numpy as pnp
    except ImportError:
        return None, None
    H = qml.Hamiltonian([1.0] * (n - 1) + [0.5] * n,
                        [qml.Z(i) @ qml.Z(i + 1) for i in range(n - 1)]
                        + [qml.X(i) for i in range(n)])

    def circ(p):
        k = 0
        for _ in range(layers):
            for q in range(n):
                qml.RY(p[k], wires=q)
                k += 1
            for q in range(n):
                qml.RZ(p[k], wires=q)
                k += 1
            for q in range(n - 1):
                qml.CNOT(wires=[q, q + 1])
        return qml.expval(H)

    p = pnp.array(theta, requires_grad=True)
    out = []
    try:
        qn = qml.QNode(circ, qml.device("lightning.qubit", wires=n), diff_method="adjoint")
        out.append((lambda: qml.grad(qn)(p), qn(p)))
    except Exception as exc:  # noqa: BLE001 - a missing plugin means "no column"
        print(f"  lightning.qubit unavailable: {exc}")
        out.append(None)
    if n <= BACKPROP_MAX_N:
        qb = qml.QNode(circ, qml.device("default.qubit", wires=n), diff_method="backprop")
        out.append((lambda: qml.grad(qb)(p), qb(p)))
    else:
        out.append(None)
    return out[0], out[1]


def peak_states(fn, n: int) -> float:
    tracemalloc.start()
    tracemalloc.reset_peak()
    fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / (16 * 2**n)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="4×2 and 8×4 only, short timings")
    ap.add_argument("--no-peers", action="store_true", help="skip PennyLane")
    ap.add_argument("--json", type=Path, help="write the results as JSON")
    ap.add_argument("--threads", default="1,2",
                    help="Numba and OpenMP threads, or a comma-separated list of counts run one "
                         "process each (read before import; BLAS stays at 1)")
    args = ap.parse_args(argv)
    counts = args.threads.split(",")
    if len(counts) > 1:
        return _run_each(counts, sys.argv[1:] if argv is None else list(argv), args.json)
    sizes = QUICK_SIZES if args.quick else SIZES
    budget = 0.05 if args.quick else 0.3
    rows = []
    print(f"HEA-TFIM value+gradient, {counts[0]} thread(s); median seconds (budget {budget} s "
          f"per cell)")
    header = (f"{'N×L':>6} {'P':>4} {'fwd':>10} {'adjoint':>10} {'shift':>10} {'lightning':>10} "
              f"{'dq-bp':>10} {'adj/light':>9} {'adj/fwd':>7} {'mem(states)':>11}")
    print(header)
    for n, layers in sizes:
        c = hea(n, layers)
        H = tfim_h(n)
        theta = np.random.default_rng(n * 100 + layers).uniform(-np.pi, np.pi, c.n_params)
        vg = ds.value_and_grad(lambda t: expval(c, t, H))
        val, grad = vg(theta)
        row = {"N": n, "L": layers, "P": c.n_params}
        row["fwd"] = timeit(lambda: expval(c, theta, H), budget)
        row["adjoint"] = timeit(lambda: vg(theta), budget)
        row["mem_states"] = peak_states(lambda: vg(theta), n)
        if n <= SHIFT_MAX_N:
            sg = ds.grad(lambda t: expval(c, t, H, method="parameter-shift"))
            gs = sg(theta)
            row["shift_max_diff"] = float(np.max(np.abs(gs - grad)))
            row["shift"] = timeit(lambda: sg(theta), budget, repeats=3)
        if not args.no_peers:
            light, bp = pennylane_fns(n, layers, theta)
            if light is not None:
                fn, pval = light
                row["lightning_value_diff"] = abs(float(pval) - float(val))
                row["lightning_grad_diff"] = float(np.max(np.abs(np.asarray(fn()) - grad)))
                row["lightning"] = timeit(fn, budget)
            if bp is not None:
                row["dq_backprop"] = timeit(bp[0], budget, repeats=3)
        rows.append(row)
        f = lambda k: f"{row[k]:10.3g}" if k in row else f"{'-':>10}"
        ratio = row["adjoint"] / row["lightning"] if "lightning" in row else None
        print(f"{n:>3}×{layers:<2} {c.n_params:>4} {f('fwd')} {f('adjoint')} {f('shift')} "
              f"{f('lightning')} {f('dq_backprop')} "
              f"{(f'{ratio:9.2f}' if ratio else f'{chr(45):>9}')} "
              f"{row['adjoint'] / row['fwd']:7.2f} {row['mem_states']:11.1f}", flush=True)

    # Gate throughput at the largest N: the forward kernels alone (no <H>), per gate per amplitude.
    n, layers = sizes[-1]
    c = hea(n, layers)
    theta = np.random.default_rng(1).uniform(-np.pi, np.pi, c.n_params)
    t_gates = timeit(lambda: forward_states(c.program, theta), budget)
    gates = len(c.ops)
    ns_per_amp = t_gates / (gates * 2**n) * 1e9
    print(f"\ngate throughput at {n} qubits: {ns_per_amp:.2f} ns per amplitude per gate "
          f"({gates} gates: RY, RZ, CNOT; state preparation included)")

    # Batch of 64 parameter sets vs a loop, at 8×4.
    c = hea(8, 4)
    H = tfim_h(8)
    thetas = np.random.default_rng(0).uniform(-np.pi, np.pi, (64, c.n_params))
    loss_b = ds.grad(lambda t: np.sum(expval(c, t, H)))
    vg1 = ds.grad(lambda t: expval(c, t, H))
    t_batch = timeit(lambda: loss_b(thetas), budget, repeats=3)
    t_loop = timeit(lambda: [vg1(t) for t in thetas], budget, repeats=3)
    print(f"batch of 64 at 8×4 (gradients): batched {t_batch * 1e3:.2f} ms, loop "
          f"{t_loop * 1e3:.2f} ms, loop/batch = {t_loop / t_batch:.2f}")

    targets = []
    for r in rows:
        if "lightning" in r:
            ok = r["adjoint"] < r["lightning"]
            targets.append((f"{r['N']}×{r['L']} faster than lightning adjoint", ok))
        targets.append((f"{r['N']}×{r['L']} gradient ≤ 3× forward", r["adjoint"] <= 3 * r["fwd"]))
        kib = r["mem_states"] * 16 * 2 ** r["N"] / 1024  # the peak in KiB, to tell bookkeeping
        targets.append((f"{r['N']}×{r['L']} peak memory ≤ 4 states ({r['mem_states']:.1f} states "
                        f"= {kib:.1f} KiB)", r["mem_states"] <= 4.0))
    print("\nTargets:")
    for name, ok in targets:
        print(f"  {'PASS' if ok else 'FAIL'}  {name}")
    if args.json:
        args.json.write_text(json.dumps({
            "threads": int(counts[0]), "rows": rows, "ns_per_amplitude": ns_per_amp,
            "batch64": {"batched_s": t_batch, "loop_s": t_loop},
            "targets": [{"name": k, "status": "PASS" if v else "FAIL"} for k, v in targets],
        }, indent=1))
    return 0


def _run_each(counts: list[str], argv: list[str], json_path: Path | None) -> int:
    """Run this script once per thread count (each pins its count before importing Numba)."""
    rest = []
    skip = False
    for a in argv:  # drop --threads and --json; each child gets its own
        if skip:
            skip = False
            continue
        if a in ("--threads", "--json"):
            skip = True
            continue
        if a.startswith(("--threads=", "--json=")):
            continue
        rest.append(a)
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for k in counts:
            out = Path(tmp) / f"t{k}.json"
            code = subprocess.call([sys.executable, __file__, *rest, "--threads", k,
                                    "--json", str(out)])
            if code:
                return code
            results[k] = json.loads(out.read_text())
            print(flush=True)
    if json_path:
        json_path.write_text(json.dumps({"by_threads": results}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
