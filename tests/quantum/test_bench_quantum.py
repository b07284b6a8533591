"""Smoke test of benchmarks/bench_quantum.py: ``--quick --no-peers`` exits 0, prints its table."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_bench_quantum_quick(tmp_path):
    out = tmp_path / "q.json"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bench_quantum.py"), "--quick", "--no-peers",
         "--json", str(out)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    for text in ("N×L", "adjoint", "gate throughput", "batch of 64", "Targets", "1 thread(s)",
                 "2 thread(s)"):
        assert text in proc.stdout
    data = json.loads(out.read_text())["by_threads"]
    assert sorted(data) == ["1", "2"], "one table per thread count (the default is 1,2)"
    for k, run in data.items():
        assert run["threads"] == int(k)
        assert [(r["N"], r["L"]) for r in run["rows"]] == [(4, 2), (8, 4)]
        assert all(r["shift_max_diff"] < 1e-9 for r in run["rows"])
        assert all(r["mem_states"] > 0 for r in run["rows"])
