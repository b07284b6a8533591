"""The public API's type hints: complete, shipped (py.typed) and checked by mypy.

- Every function and class in the five packages' ``__all__`` (and in ``SUBMODULES``': nn, optim,
  integrate, optimize, testing) annotates each parameter and its return value; dataclass fields
  are typed (raytrace's scene fields are not ``object``).
- mypy (configured in pyproject's ``[tool.mypy]``) accepts ``tests/typecheck_usage.py``, each
  package's first task as a typed user script, and rejects a script that misuses the API (so the
  hints are what is checked, not ``Any``; seven misuses, one per line). Both files go through
  one mypy run; its cache is ``.mypy_cache``.
- The usage script runs and gets the right answers.
"""

import dataclasses
import enum
import importlib
import inspect
import pathlib
import re
import subprocess
import sys
import tomllib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGES = ("diffsci", "raytrace", "quantum", "sde", "finance")
# Public subpackages a first script uses, checked like the packages' own __all__.
SUBMODULES = ("diffsci.nn", "diffsci.optim", "diffsci.scipy.integrate", "diffsci.scipy.optimize",
              "diffsci.testing")
# Public names whose modules are being rewritten by their owners right now; annotate them there.
KNOWN_UNANNOTATED: set[str] = set()

MISUSE = '''\
import numpy as np
import diffsci as ds
import finance
import quantum
import raytrace as rt
import sde

quantum.sample(quantum.Circuit(1).h(0), shots="many")
rt.Scene(rt.Camera(eye=(0.0, 0.0, -5.0)), shapes=3)
finance.mc_price(spot=100.0, strike=100.0, expiry=1.0, vol=0.2, n_paths=1e5)
sde.sdeint(sde.SDE(lambda t, y, p: y, lambda t, y, p: y), np.ones(1), np.ones(2), dt="0.1")
ds.grad(lambda x: x, argnums="x")
finance.bsm_price(spot=100.0, strike=100.0, expiry=1.0, vol=0.2, is_call="yes")
ds.optim.Adam(0.1).update(np.ones(2), np.ones(2), ds.optim.Adam(0.1).init(np.ones(2)))
'''
MISUSE_LINES = {8: "shots", 9: "shapes", 10: "n_paths", 11: "dt", 12: "argnums", 13: "is_call",
                14: "state"}


def _missing_hints(obj):
    """The unannotated parameters (and "return") of a function or class, or untyped fields."""
    if type(obj).__module__ == "typing":  # an alias such as Literal["cpu", "cuda"]
        return []
    if inspect.isclass(obj):
        if dataclasses.is_dataclass(obj):
            return [f.name for f in dataclasses.fields(obj) if f.type in (object, "object")]
        if issubclass(obj, (BaseException, enum.Enum)) or not inspect.isfunction(obj.__init__):
            return []  # no __init__ written in Python (object's, dict's ...)
        fun, is_class = obj.__init__, True
    else:
        fun, is_class = obj, False
    sig = inspect.signature(inspect.unwrap(fun))
    bad = [p.name for p in sig.parameters.values()
           if p.annotation is inspect.Parameter.empty and p.name not in ("self", "cls")]
    if not is_class and sig.return_annotation is inspect.Signature.empty:
        bad.append("return")
    return bad


def _unannotated():
    missing = {}
    for top in PACKAGES + SUBMODULES:
        package = importlib.import_module(top)
        for name in package.__all__:
            obj = getattr(package, name)
            if inspect.ismodule(obj) or not callable(obj):
                continue
            bad = _missing_hints(obj)
            if bad:
                missing[f"{top}.{name}"] = bad
    return missing


def test_every_public_function_and_class_is_annotated():
    missing = _unannotated()
    new = {k: v for k, v in missing.items() if k not in KNOWN_UNANNOTATED}
    assert not new, f"public names without type hints (name: unannotated parameters): {new}"
    done = KNOWN_UNANNOTATED - set(missing)
    assert not done, f"now annotated, remove from KNOWN_UNANNOTATED: {sorted(done)}"


def test_the_inspection_reports_what_is_missing():
    """The inspection above is not vacuous: it names what a half-annotated API lacks."""

    def f(x, y: int = 1):
        return x

    class C:
        def __init__(self, a: float, b) -> None:
            pass

    @dataclasses.dataclass
    class D:
        center: object
        radius: float

    def g(x: float) -> float:
        return x

    assert _missing_hints(f) == ["x", "return"]
    assert _missing_hints(C) == ["b"]
    assert _missing_hints(D) == ["center"]
    assert _missing_hints(g) == []


def test_each_package_ships_py_typed():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "py.typed" in config["tool"]["setuptools"]["package-data"]["*"]
    for top in PACKAGES:
        assert (ROOT / top / "py.typed").is_file(), f"{top}/py.typed is missing"


def test_mypy_accepts_the_usage_and_rejects_misuse(tmp_path):
    pytest.importorskip("mypy", reason="mypy is in the test extra: pip install -e '.[test]'")
    misuse = tmp_path / "misuse.py"
    misuse.write_text(MISUSE)
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"),
         "--cache-dir", str(ROOT / ".mypy_cache"), "tests/typecheck_usage.py", str(misuse)],
        cwd=ROOT, capture_output=True, text=True, timeout=600)
    out = proc.stdout + proc.stderr
    usage_errors = [line for line in out.splitlines() if "typecheck_usage.py" in line]
    assert not usage_errors, "mypy rejects tests/typecheck_usage.py:\n" + out
    # By file name: mypy replays a cached file's errors under the path it had when cached.
    flagged = {int(m.group(1)): line for line in out.splitlines()
               if (m := re.search(r"misuse\.py:(\d+): error:", line))}
    for line, argument in MISUSE_LINES.items():
        assert line in flagged, f"mypy missed the misuse of {argument} on line {line}:\n{out}"
        assert argument in flagged[line] or "Argument" in flagged[line], flagged[line]
    assert proc.returncode == 1, out


@pytest.mark.kernels
def test_the_usage_script_runs():
    from tests import typecheck_usage

    typecheck_usage.main()
