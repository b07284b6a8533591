"""Smoke test of benchmarks/bench_interop.py: ``--quick`` exits 0, prints its tables and
writes its JSON.

The quick run (5 short repetitions) takes about 25 s on a lightly loaded 2-core machine,
most of it importing torch and JAX and compiling the quantum layer's kernels.  Its figures
are not held to the aim (the verdicts are SKIP); only their presence and sign are checked.
"""

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("jax")

# Not marked `kernels` (make test's bounds-checked pass): the quantum layer's kernels it
# compiles are bounds-checked there by tests/quantum/ and tests/interop/test_torch.py.

ROOT = Path(__file__).resolve().parent.parent.parent
SCRIPT = ROOT / "benchmarks" / "bench_interop.py"


def test_bench_interop_quick(tmp_path):
    out_json = tmp_path / "interop.json"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, str(SCRIPT), "--quick", "--json", str(out_json)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    out = proc.stdout
    for text in ("torch: unit = empty torch.autograd.Function fwd+bwd",
                 "jax: unit = jit(value_and_grad) through an empty pure_callback pair",
                 "bridged µs", "direct µs", "overhead µs", "units", "quantum layer: 4 qubits",
                 "diffsci TorchModule (adjoint)"):
        assert text in out, text
    rows = {line.split()[0] + (" both" if line.startswith("to_jax both") else "")
            for line in out.splitlines() if "[SKIP aim ≤ 1.5]" in line}
    assert rows == {"to_torch", "from_torch", "to_jax", "from_jax", "to_jax both"}, out
    data = json.loads(out_json.read_text())
    assert set(data) == {"quick", "reps", "aim_units", "bridges", "quantum"}
    assert data["quick"] is True and data["reps"] == 5 and data["aim_units"] == 1.5
    assert [b["bridge"] for b in data["bridges"]] == ["to_torch", "from_torch", "to_jax",
                                                      "from_jax", "to_jax both"]
    for b in data["bridges"]:
        assert set(b) == {"bridge", "bridged_s", "direct_s", "unit_s", "units", "verdict"}
        assert b["verdict"] == "SKIP"
        assert 0 < b["direct_s"] and 0 < b["bridged_s"] < 1 and 0 < b["unit_s"] < 1
        assert math.isclose(b["units"], (b["bridged_s"] - b["direct_s"]) / b["unit_s"])
    impls = [q["impl"] for q in data["quantum"]]
    assert impls[0] == "diffsci TorchModule (adjoint)" and 0 < data["quantum"][0]["seconds"] < 1
