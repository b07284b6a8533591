import numpy as np
import pytest

import sde


def test_strings_become_enums():
    s = sde.SDE(lambda t, y, p: y, lambda t, y, p: y, noise="Scalar", calculus="stratonovich")
    assert s.noise is sde.Noise.SCALAR and s.calculus is sde.Calculus.STRATONOVICH


def test_bad_strings_name_the_argument():
    with pytest.raises(ValueError, match=r"noise must be a Noise or one of 'diagonal'"):
        sde.SDE(lambda t, y, p: y, lambda t, y, p: y, noise="diag0nal")
    with pytest.raises(ValueError, match="calculus"):
        sde.SDE(lambda t, y, p: y, lambda t, y, p: y, calculus="ita")
    with pytest.raises(TypeError, match="drift must be a function"):
        sde.SDE(1.0, lambda t, y, p: y)


def test_frozen():
    s = sde.SDE(lambda t, y, p: y, lambda t, y, p: y)
    with pytest.raises(AttributeError):
        s.noise = sde.Noise.SCALAR


def test_solver_declarations():
    for method, solver in sde._solvers.SOLVERS.items():
        assert solver.method is method
        assert solver.strong_order and solver.calculus
        assert all(isinstance(k, sde.Noise) for k in solver.strong_order)
    assert sde.SRA1.strong_order[sde.Noise.ADDITIVE] == 1.5
    assert np.isclose(sde.Euler.strong_order[sde.Noise.DIAGONAL], 0.5)
