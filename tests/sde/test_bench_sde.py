"""Smoke test of benchmarks/bench_sde.py --quick: exits 0 and prints its three tables."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_bench_sde_quick():
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_sde.py"), "--quick"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    for header in ("Strong order on GBM", "Strong order, additive noise", "Neural-SDE gradient",
                   "Brownian interval queries"):
        assert header in proc.stdout


def test_bench_sde_memory_probe():
    """The fresh-process memory probe (not run by --quick) prints one number of MiB."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_sde.py"),
                           "--memory-probe", "diffsci,reversible_heun,reversible,10,float32,2,4,4"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert float(proc.stdout.strip().splitlines()[-1]) >= 0.0
