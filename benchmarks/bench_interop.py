"""Per-call overhead of the PyTorch/JAX bridges (diffsci.interop), and a quantum layer in torch.

Overhead of a bridge = its forward + backward time minus the time of the same function's
forward + backward on the side that computes it, on a tiny input (8 float64 elements) so
that the crossing dominates:

  to_torch    to_torch(f)(x).backward(g)           minus  ds.pullback(f, x) + back(g)
  from_torch  ds.pullback(from_torch(tf), x)+back  minus  tf(x).backward(g) in torch
  to_jax      jit(value_and_grad(sum∘to_jax(f)))(x) minus  ds.pullback(f, x) + back(g)
              (also for mode="both", reported without a verdict: f runs twice per grad)
  from_jax    ds.pullback(from_jax(jf), x)+back    minus  jit(vjp(jf))(x, g)

with f(x) = sin(x)·2 (two diffsci ops), tf and jf the same in torch/JAX.  The unit for the
torch bridges is an empty ``torch.autograd.Function`` (identity forward, identity backward)
called and backpropagated in the same run; for the JAX bridges a jitted
``jax.value_and_grad`` through an empty ``pure_callback`` pair (identity forward and backward
callbacks under a ``custom_vjp``; with ``grad`` alone XLA drops the unused forward).
Aim (issue #15): each bridge's overhead ≤ 1.5 units.  ``--quick`` (the CI smoke run,
tests/interop/test_bench_interop_smoke.py, about 25 s) takes 5 short repetitions and marks
the verdicts SKIP: its figures are too noisy to hold to the aim.

Quantum layer: a 4-qubit classifier layer (RY angle encoding of 4 features, L layers of
trainable RY·RZ plus a CNOT ring, ⟨Z⟩ on every wire), batch 16, forward + backward of
sum(outputs) w.r.t. the weights: ``TorchModule`` over ``quantum.expval`` (adjoint method,
batched θ[B, P]) against PennyLane's ``qml.qnn.TorchLayer`` on ``lightning.qubit``
(``diff_method="adjoint"``), in the same run; the column is skipped if PennyLane is absent.

Timing: implementations interleaved round-robin, each sample a calibrated number of calls
with the garbage collector off, medians over repetitions (benchmarks/bench_overhead.py's
``time_interleaved``), one thread.  The machine may be shared: compare ratios in one run.

Usage:
    python benchmarks/bench_interop.py [--quick] [--json PATH]
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ[_var] = "1"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ.setdefault("XLA_FLAGS",
                      "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import diffsci as ds  # noqa: E402
from benchmarks.bench_overhead import time_interleaved  # noqa: E402

AIM_UNITS = 1.5
N = 8


def _f(x):
    return np.sin(x) * 2.0


def torch_rows(reps, target):
    import torch

    from diffsci.interop import from_torch, to_torch

    torch.set_num_threads(1)

    class Empty(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.view_as(x)

        @staticmethod
        def backward(ctx, g):
            return g

    x = np.linspace(0.1, 0.8, N)
    g = np.ones(N)
    xt = torch.tensor(x, requires_grad=True)
    gt = torch.ones(N, dtype=torch.float64)
    bridged = to_torch(_f)
    tf = from_torch(lambda x: torch.sin(x) * 2.0)

    def empty():
        Empty.apply(xt).backward(gt)

    def ds_direct():
        _, back = ds.pullback(_f, x)
        back(g)

    def to_torch_step():
        bridged(xt).backward(gt)

    def torch_direct():
        (torch.sin(xt) * 2.0).backward(gt)

    def from_torch_step():
        _, back = ds.pullback(tf, x)
        back(g)

    t_empty, t_ds, t_to, t_torch, t_from = time_interleaved(
        [empty, ds_direct, to_torch_step, torch_direct, from_torch_step], reps, target)
    return t_empty, [("to_torch", t_to, t_ds, "ds.pullback + back"),
                     ("from_torch", t_from, t_torch, "torch forward + backward")]


def jax_rows(reps, target):
    import jax
    import jax.numpy as jnp

    from diffsci.interop import from_jax, to_jax

    jax.config.update("jax_enable_x64", True)
    x = np.linspace(0.1, 0.8, N)
    g = np.ones(N)
    xj = jnp.asarray(x)
    sds = jax.ShapeDtypeStruct((N,), jnp.float64)

    @jax.custom_vjp
    def empty_cb(x):
        return jax.pure_callback(lambda a: a, sds, x, vmap_method="sequential")

    empty_cb.defvjp(lambda x: (empty_cb(x), None),
                    lambda _, g: (jax.pure_callback(lambda a: a, sds, g,
                                                    vmap_method="sequential"),))
    # value_and_grad: with grad alone XLA drops the forward callback (its value is unused)
    empty_grad = jax.jit(jax.value_and_grad(lambda x: jnp.sum(empty_cb(x))))
    bridged = to_jax(_f)
    to_grad = jax.jit(jax.value_and_grad(lambda x: jnp.sum(bridged(x))))
    both = to_jax(_f, mode="both")
    both_grad = jax.jit(jax.value_and_grad(lambda x: jnp.sum(both(x))))
    jf = lambda x: jnp.sin(x) * 2.0  # noqa: E731
    jax_vjp = jax.jit(lambda x, g: jax.vjp(jf, x)[1](g))
    fj = from_jax(jf)

    def empty():
        jax.block_until_ready(empty_grad(xj))

    def ds_direct():
        _, back = ds.pullback(_f, x)
        back(g)

    def to_jax_step():
        jax.block_until_ready(to_grad(xj))

    def to_jax_both_step():
        jax.block_until_ready(both_grad(xj))

    def jax_direct():
        jax_vjp(xj, xj)[0].block_until_ready()

    def from_jax_step():
        _, back = ds.pullback(fj, x)
        back(g)

    t_empty, t_ds, t_to, t_jax, t_from, t_both = time_interleaved(
        [empty, ds_direct, to_jax_step, jax_direct, from_jax_step, to_jax_both_step], reps,
        target)
    # the empty callback pair is paid by to_jax too: compare the bridge with it (ds's own
    # sum in the loss is part of the jitted function in both)
    return t_empty, [("to_jax", t_to, t_ds, "ds.pullback + back"),
                     ("from_jax", t_from, t_jax, "jit(vjp) in JAX"),
                     ("to_jax both", t_both, t_ds, "ds.pullback + back (mode='both')")]


# ---------------------------------------------------------------------------
# the quantum layer
# ---------------------------------------------------------------------------
QUBITS = 4


def _circuit(layers):
    from quantum import Circuit

    c = Circuit(QUBITS)
    for w in range(QUBITS):
        c = c.ry(w)  # the features
    for _ in range(layers):
        for w in range(QUBITS):
            c = c.ry(w).rz(w)
        for w in range(QUBITS):
            c = c.cnot(w, (w + 1) % QUBITS)
    return c


def quantum_rows(layers, batch, reps, target):
    import torch

    from diffsci.interop import TorchModule
    from quantum import Z, expval

    torch.set_num_threads(1)
    c = _circuit(layers)
    obs = [Z(w) for w in range(QUBITS)]
    rng = np.random.default_rng(0)
    w0 = rng.uniform(0, np.pi, (layers, QUBITS, 2))
    xb = torch.tensor(rng.uniform(0, np.pi, (batch, QUBITS)))

    def layer(w, x):
        theta = np.concatenate([x, np.broadcast_to(np.reshape(w, (1, -1)),
                                                   (x.shape[0], w.size))], axis=1)
        return expval(c, theta, obs)

    mod = TorchModule(layer, w0)

    def ds_step():
        mod.zero_grad()
        mod(xb).sum().backward()

    steps, labels = [ds_step], ["diffsci TorchModule (adjoint)"]
    outs = [mod(xb).detach().numpy()]
    try:
        import pennylane as qml

        # PennyLane's torch interface makes its results in torch's default dtype: float64
        # here, as diffsci's (else it computes the layer to float32 accuracy)
        torch.set_default_dtype(torch.float64)
        dev = qml.device("lightning.qubit", wires=QUBITS)

        @qml.qnode(dev, interface="torch", diff_method="adjoint")
        def qnode(inputs, weights):
            for w in range(QUBITS):
                qml.RY(inputs[..., w], wires=w)
            for k in range(layers):
                for w in range(QUBITS):
                    qml.RY(weights[k, w, 0], wires=w)
                    qml.RZ(weights[k, w, 1], wires=w)
                for w in range(QUBITS):
                    qml.CNOT(wires=[w, (w + 1) % QUBITS])
            return [qml.expval(qml.PauliZ(w)) for w in range(QUBITS)]

        ql = qml.qnn.TorchLayer(qnode, {"weights": (layers, QUBITS, 2)})
        ql.weights.data = torch.tensor(w0)  # float64, as diffsci's (TorchLayer makes float32)
        outs.append(ql(xb).detach().numpy())

        def pl_step():
            ql.zero_grad()
            ql(xb).sum().backward()

        steps.append(pl_step)
        labels.append(f"PennyLane {qml.__version__} TorchLayer, lightning.qubit (adjoint)")
    except ImportError:
        labels.append("PennyLane: not installed")
    if len(outs) == 2:
        np.testing.assert_allclose(outs[0], outs[1], rtol=1e-9, atol=1e-9)
    times = time_interleaved(steps, reps, target)
    return list(zip(labels, times + [float("nan")] * (len(labels) - len(times))))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer repetitions (smoke run)")
    ap.add_argument("--json", type=Path, help="write the figures as JSON here")
    args = ap.parse_args(argv)
    reps, target = (5, 0.02) if args.quick else (21, 0.1)
    print(f"# bench_interop: {platform.processor() or platform.machine()}, "
          f"python {platform.python_version()}, {reps} interleaved repetitions, medians; the "
          f"machine may be shared by other jobs")
    report = {"quick": args.quick, "reps": reps, "aim_units": AIM_UNITS, "bridges": [],
              "quantum": []}
    for side, rows_fn in (("torch", torch_rows), ("jax", jax_rows)):
        try:
            unit, rows = rows_fn(reps, target)
        except ImportError as e:
            print(f"{side}: not installed ({e})")
            continue
        unit_name = ("empty torch.autograd.Function fwd+bwd" if side == "torch"
                     else "jit(value_and_grad) through an empty pure_callback pair")
        print(f"\n{side}: unit = {unit_name} = {unit * 1e6:.1f} µs")
        print(f"{'bridge':<11} {'bridged µs':>11} {'direct µs':>10} {'overhead µs':>12} "
              f"{'units':>6}  direct = ")
        for name, t, direct, what in rows:
            over = t - direct
            units = over / unit
            # the aim is the for to_jax's default mode; mode="both" is reported only
            verdict = ("SKIP" if args.quick or name == "to_jax both" else
                       "PASS" if units <= AIM_UNITS else "FAIL")
            print(f"{name:<11} {t * 1e6:>11.1f} {direct * 1e6:>10.1f} {over * 1e6:>12.1f} "
                  f"{units:>6.2f}  {what}   [{verdict} aim ≤ {AIM_UNITS}]")
            report["bridges"].append(dict(bridge=name, bridged_s=t, direct_s=direct,
                                          unit_s=unit, units=units, verdict=verdict))
    layers, batch = (2, 16)
    print(f"\nquantum layer: {QUBITS} qubits, {layers} layers, batch {batch}, "
          f"forward + backward")
    try:
        for label, t in quantum_rows(layers, batch, reps, target):
            print(f"  {label:<62} {t * 1e3:8.2f} ms")
            report["quantum"].append(dict(impl=label, seconds=t))
    except ImportError as e:
        print(f"  torch not installed ({e})")
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
