"""numba.cuda twins of the tree Greeks and vibrato kernels (under the CUDA simulator where no GPU
is present) against the CPU kernels, and the GPU checks' tree reference (AD through the NumPy
tree) against the CPU kernel."""

import itertools

import numpy as np
import pytest

from finance import _cuda, _kernels
from finance._gpu_checks import CHECKS, tree_cpu

pytestmark = pytest.mark.kernels


@pytest.mark.parametrize("exercise,smooth", list(itertools.product(
    ("american", "bermudan", "european"), (False, True))))
def test_cuda_tree_greeks_equal_cpu(exercise, smooth):
    rng = np.random.default_rng(5)
    m, n = 4, 12
    args = (rng.uniform(80, 120, m), np.full(m, 100.0), rng.uniform(0.2, 2.0, m),
            rng.uniform(0.0, 0.06, m), rng.uniform(0.0, 0.04, m), rng.uniform(0.1, 0.5, m),
            np.array([1.0, -1.0, 1.0, -1.0]))
    static = (exercise != "european", n, 3 if exercise == "bermudan" else 1, smooth)
    gpu = _cuda.tree_greeks(*args, *static)
    cpu = tree_cpu(*args, *static)
    assert gpu.shape == (m, _kernels.N_TREE_OUT)
    np.testing.assert_allclose(gpu, cpu, rtol=1e-13, atol=1e-13)


def test_cuda_vibrato_equals_cpu():
    for product, w in ((_kernels.EUROPEAN, 1.0), (_kernels.DIGITAL, -1.0)):
        args = (np.uint64(9), 100.0, 104.0, 0.8, 0.03, 0.01, 0.25, w, product, 6, 32)
        np.testing.assert_allclose(_cuda.gbm_vibrato(*args), _kernels.gbm_vibrato(*args),
                                   rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("check", [c for c in CHECKS if c.name.startswith("tree_")],
                         ids=lambda c: c.name)
def test_gpu_check_tree_reference_equals_cpu(check):
    # the reference is diffsci AD through the NumPy tree: every column, per element
    args = check.make_inputs(np.random.default_rng(2), 6)
    got, ref = check.cpu_fn(*args), check.reference_fn(*args)
    assert np.all(np.abs(got - ref) <= 1e-9 * np.maximum(1.0, np.abs(ref)))
    assert np.max(np.abs(got - ref)) / np.max(np.abs(ref)) <= check.rtol
