"""Smoke test of benchmarks/convergence/*.py --quick (tiny sizes): they run, print a row per
solver with a finite measured order, and write their JSON. The orders themselves are measured by
the full runs (slow statistical checks live in benchmarks/, not in the unit tests)."""

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = {"gbm.py": {"euler", "milstein", "sri", "heun", "euler_heun", "reversible_heun"},
           "additive.py": {"sra1", "euler", "heun", "euler_heun", "reversible_heun"}}


@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_convergence_script_quick(script, tmp_path):
    out = tmp_path / "rows.json"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "convergence" / script),
                           "--quick", "--json", str(out)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "Strong order" in proc.stdout
    rows = json.loads(out.read_text())
    assert {r["solver"] for r in rows} == SCRIPTS[script]
    for r in rows:
        assert math.isfinite(r["measured"]) and r["measured"] > 0, r
        assert len(r["errors"]) == 4 and all(e > 0 for e in r["errors"]), r
