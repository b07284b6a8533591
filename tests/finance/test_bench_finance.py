"""Smoke test of benchmarks/bench_finance.py: ``--quick --no-peers`` exits 0, prints its tables."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_bench_finance_quick():
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bench_finance.py"), "--quick", "--no-peers"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    for header in ("1. Monte Carlo", "2. Heston calibration", "3. Key-rate durations",
                   "4. Implied vol", "5. American put", "Heston QE", "Heston FT",
                   "Lev.-Marquardt, AD Jacobian", "path-weight sweep",
                   "ratio"):
        assert header in proc.stdout
