"""Smoke test of benchmarks/bench_overhead.py: ``--quick --no-peers`` exits 0, prints its tables."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "benchmarks" / "bench_overhead.py"


def test_bench_overhead_quick(tmp_path):
    out_json = tmp_path / "overhead.json"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--quick", "--no-peers", "--json", str(out_json)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    out = proc.stdout
    for header in ("implementation", "µs/op", "× numpy fwd", "ns/op (icpt)"):
        assert header in out
    for workload in ("W1:", "W2:", "W3:", "Targets"):
        assert workload in out
    assert "disabled (--no-peers)" in out
    data = json.loads(out_json.read_text())
    assert data["W1"]["ops"] == 401
    assert set(data["W3"]) == {"1", "2", "3"}
    assert all(t["status"] in ("PASS", "FAIL", "SKIP") for t in data["targets"])


def test_bench_forward_quick_runs(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = tmp_path / "fwd.json"
    proc = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bench_forward.py"), "--quick", "--no-peers",
         "--json", str(out)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for title in ("(a) W1:", "(b) Hessian", "(c) ds.jvp"):
        assert title in proc.stdout
    assert json.loads(out.read_text())["W1"]["ops"] == 401
