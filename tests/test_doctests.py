"""The docstring examples of every module of the five packages run as doctests.

One test per module (``pkgutil.walk_packages`` over diffsci, raytrace, quantum, sde and
finance), so a broken example names its module. Every module is imported, examples or not: a
module that cannot be imported fails here too. The examples run under

- ``NORMALIZE_WHITESPACE | ELLIPSIS``;
- NumPy's printing fixed to ``legacy="1.25"`` (scalars print as ``12.0``, not
  ``np.float64(12.0)``) with the default precision, restored after each module;
- the module's own namespace, as ``python -m doctest`` would give them.

Docstrings that NumPy's own functions lend to diffsci's wrappers (``diffsci.numpy.sin`` carries
``numpy.sin``'s text) are NumPy's examples, not ours, and are left out.
"""

import doctest
import importlib
import pkgutil

import numpy as np
import pytest

PACKAGES = ("diffsci", "raytrace", "quantum", "sde", "finance")
# Packages whose examples run Numba kernels: `make test` runs them again with bounds checks on.
KERNEL_PACKAGES = ("raytrace", "quantum", "sde", "finance")
OPTIONS = doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS


def _module_names():
    names = []
    for top in PACKAGES:
        package = importlib.import_module(top)
        names.append(top)
        # A subpackage that fails to import is still listed (its test then fails on import).
        found = pkgutil.walk_packages(package.__path__, top + ".", onerror=lambda name: None)
        names.extend(m.name for m in found)
    return names


class _OwnDocstrings(doctest.DocTestFinder):
    """A finder that skips docstrings borrowed from a wrapped function of another library."""

    def _get_test(self, obj, name, module, globs, source_lines):
        wrapped = getattr(obj, "__wrapped__", None)
        if wrapped is not None and getattr(obj, "__doc__", None) is not None \
                and obj.__doc__ == getattr(wrapped, "__doc__", None):
            origin = getattr(wrapped, "__module__", None) or type(wrapped).__module__ or ""
            if origin.split(".")[0] not in PACKAGES:
                return None
        return super()._get_test(obj, name, module, globs, source_lines)


def _params():
    out = []
    for name in _module_names():
        marks = [pytest.mark.kernels] if name.split(".")[0] in KERNEL_PACKAGES else []
        out.append(pytest.param(name, id=name, marks=marks))
    return out


@pytest.fixture
def numpy_printing():
    saved = np.get_printoptions()
    np.set_printoptions(legacy="1.25")
    try:
        yield
    finally:
        np.set_printoptions(**saved)


@pytest.mark.parametrize("module_name", _params())
def test_docstring_examples(module_name, numpy_printing):
    module = importlib.import_module(module_name)
    tests = [t for t in _OwnDocstrings().find(module) if t.examples]
    runner = doctest.DocTestRunner(optionflags=OPTIONS)
    report = []
    for test in tests:
        runner.run(test, out=report.append)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, (
        f"{result.failed} of {result.attempted} docstring examples of {module_name} failed:\n"
        + "".join(report))


def test_every_package_has_examples():
    """The collection is not empty by accident: each package's own docstring shows its use."""
    for top in PACKAGES:
        module = importlib.import_module(top)
        assert ">>>" in (module.__doc__ or ""), f"{top}'s module docstring has no example"
    assert "diffsci.numpy._sets" in _module_names()
