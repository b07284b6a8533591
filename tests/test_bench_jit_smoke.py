"""Smoke test of benchmarks/bench_jit.py: ``--quick --no-peers`` exits 0 and prints its tables.

The quick run compiles small programs (40-op chains, a 2-step LSTM, a 100-op program for the
compile and cache figures) in a fresh cache folder: about 40 s on a lightly loaded 2-core
machine, almost all of it Numba compiling.  Its figures are not held to the targets.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

# Not in make test's bounds-checked pass (not marked `kernels`): the generated kernels it runs
# are bounds-checked there by tests/diffsci/test_jit_numba.py and test_jit_chunks.py, and a
# fresh-cache benchmark run under bounds checks added 5-25 s to that pass for no more cover.

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "benchmarks" / "bench_jit.py"


def test_bench_jit_quick(tmp_path):
    out_json = tmp_path / "jit.json"
    env = dict(os.environ, PYTHONPATH=str(ROOT), DIFFSCI_JIT_CACHE=str(tmp_path / "cache"))
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--quick", "--no-peers", "--json", str(out_json)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    out = proc.stdout
    for header in ("implementation", "µs/call", "µs/op", "icpt µs", "ns/op", "compile s"):
        assert header in out
    for section in ("W1:", "W2:", "W3:", "C: a", "Re-tracing:", "Targets"):
        assert section in out
    for row in ("diffsci jit value_and_grad", "diffsci value_and_grad(jit(f))",
                "diffsci eager value_and_grad", "hand-written Numba fwd+bwd"):
        assert row in out
    data = json.loads(out_json.read_text())
    assert data["quick"] is True
    assert set(data) >= {"W1", "W2", "W3", "compile", "taylor", "targets"}
    assert data["W1"]["ops"] == 41 and data["W1"]["n"] == 1 and data["W2"]["n"] == 100
    times = data["W1"]["seconds_per_call"]
    assert set(times) >= {"numpy forward", "diffsci eager value_and_grad",
                          "diffsci jit value_and_grad", "diffsci value_and_grad(jit(f))"}
    assert all(t > 0 for t in times.values())
    assert set(data["W3"]) == {"1"} and data["W3"]["1"]["batches"] == [1]
    assert set(data["compile"]) == {"ops", "compile_s", "cache_hit_s", "import_s",
                                    "numba_start_s"}
    assert data["compile"]["ops"] == 101
    assert data["taylor"]["specializations"] >= 2
    assert data["targets"] and all(t["status"] == "SKIP" for t in data["targets"])
