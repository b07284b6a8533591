"""Tests for benchmarks/gpu_check.py: run it on the CUDA simulator, and its registry logic."""

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
SCRIPT = REPO_ROOT / "benchmarks" / "gpu_check.py"


def _run(*args, simulator_env=None, timeout=240):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_ROOT), env.get("PYTHONPATH")) if p)
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    if simulator_env is not None:
        env["NUMBA_ENABLE_CUDASIM"] = simulator_env
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.fixture
def gpu_check(monkeypatch):
    """benchmarks/gpu_check.py imported as a module (it is a script, not part of a package)."""
    monkeypatch.syspath_prepend(str(REPO_ROOT))
    spec = importlib.util.spec_from_file_location("gpu_check_under_test", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_simulate_runs_the_diffsci_check(tmp_path):
    out = tmp_path / "rows.json"
    # Each check at its own (small) simulator size: the simulator runs kernels in Python threads.
    proc = _run("--simulate", "--repeats", "2", "--json", str(out))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    table = proc.stdout[proc.stdout.index("gpu_check results") :]
    row = re.search(r"^diffsci\s+axpy\s+\d+\s+(\S+)\s+(\S+)\s.*\bok\b", table, re.MULTILINE)
    assert row, table
    assert float(row.group(1)) < 1e-12  # CPU kernel vs float64 reference
    assert float(row.group(2)) < 1e-12  # CUDA kernel (simulated) vs float64 reference
    for package in ("raytrace", "quantum", "sde", "finance"):
        assert re.search(rf"^{package}\s.*no kernels yet", table, re.MULTILINE) or re.search(
            rf"^{package}\s.*\bok\b", table, re.MULTILINE
        ), table

    rows = {(r["package"], r["kernel"]): r for r in json.loads(out.read_text())["rows"]}
    axpy = rows[("diffsci", "axpy")]
    assert axpy["status"] == "ok" and axpy["size"] > 0
    assert axpy["cuda_err"] < 1e-12 and axpy["cpu_err"] < 1e-12


@pytest.mark.skipif(shutil.which("nvidia-smi") is not None, reason="a GPU may be present")
def test_without_a_gpu_it_says_so_and_exits_zero():
    proc = _run(timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "gpu_check: no CUDA GPU on this machine" in proc.stdout
    assert "--simulate" in proc.stdout


def test_simulator_env_without_simulate_flag_is_not_a_gpu():
    proc = _run(simulator_env="1", timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "CUDA simulator is switched on" in proc.stdout


def test_registry_skips_missing_modules_and_reports_broken_ones(tmp_path, monkeypatch, gpu_check):
    pkg = tmp_path / "brokenpkg_for_gpu_check"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "_gpu_checks.py").write_text("import module_that_does_not_exist_xyz\n")
    wrong = tmp_path / "wrongpkg_for_gpu_check"
    wrong.mkdir()
    (wrong / "__init__.py").write_text("")
    (wrong / "_gpu_checks.py").write_text("CHECKS = ['not a GpuCheck']\n")
    monkeypatch.syspath_prepend(str(tmp_path))

    checks, rows = gpu_check.collect_checks(
        (
            "diffsci._gpu_checks",
            "no_such_package_for_gpu_check._gpu_checks",
            "raytrace._no_such_module",
            "brokenpkg_for_gpu_check._gpu_checks",
            "wrongpkg_for_gpu_check._gpu_checks",
        )
    )
    assert [(c.package, c.name) for c in checks] == [("diffsci", "axpy")]
    status = {row.package: (row.status, row.note) for row in rows}
    assert status["no_such_package_for_gpu_check"][0] == "no kernels yet"
    assert status["raytrace"][0] == "no kernels yet"
    assert status["brokenpkg_for_gpu_check"][0] == "ERROR"
    assert "module_that_does_not_exist_xyz" in status["brokenpkg_for_gpu_check"][1]
    assert status["wrongpkg_for_gpu_check"] == (
        "ERROR",
        "wrongpkg_for_gpu_check._gpu_checks.CHECKS must be a list of GpuCheck",
    )


def test_relative_error(gpu_check):
    import numpy as np

    ref = (np.array([1.0, -2.0, 4.0]),)
    assert gpu_check.relative_error((np.array([1.0, -2.0, 4.0]),), ref) == 0.0
    assert gpu_check.relative_error((np.array([1.0, -2.0, 4.4]),), ref) == pytest.approx(0.1)
    assert gpu_check.relative_error((np.zeros(2),), ref) == float("inf")  # shape mismatch
    assert gpu_check.relative_error((), ref) == float("inf")  # output count mismatch
