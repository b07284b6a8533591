"""Smoke test of benchmarks/bench_jit_e2e.py: ``--quick --cases taylor`` exits 0.

The quick run compiles the Taylor-series sin's specialisations (about 25 s on a loaded 2-core
machine, a fresh cache folder); the other cases compile for a minute or more each (even a
2-step RK4 ``odeint`` of a 2-16-2 MLP: ~60 s at load 7) and are run by hand.  The run itself
fails if jit and eager values or gradients differ by more than 1e-10 relative; the figures are
not held to any target.
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
SCRIPT = ROOT / "benchmarks" / "bench_jit_e2e.py"


def test_bench_jit_e2e_quick(tmp_path):
    out_json = tmp_path / "e2e.json"
    env = dict(os.environ, PYTHONPATH=str(ROOT), DIFFSCI_JIT_CACHE=str(tmp_path / "cache"))
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--quick", "--cases", "taylor",
         "--json", str(out_json)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    for header in ("case", "eager ms", "jit ms", "speed-up", "compile s", "max rel diff"):
        assert header in proc.stdout
    data = json.loads(out_json.read_text())
    assert data["quick"] is True and data["failed"] == []
    rows = {r["case"]: r for r in data["rows"]}
    assert set(rows) == {"taylor"}
    for r in rows.values():
        assert r["eager_s"] > 0 and r["jit_s"] > 0 and r["compile_s"] > 0
        assert 0.0 <= r["max_rel_diff"] <= data["rel_tol"]
    assert rows["taylor"]["specializations"] >= 2  # the inputs change the number of terms


def test_bench_jit_e2e_bad_case():
    proc = subprocess.run([sys.executable, str(SCRIPT), "--cases", "nope"], cwd=ROOT,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)), capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 2 and "--cases" in proc.stderr
