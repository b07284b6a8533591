"""``autograd.test_util`` over :func:`diffsci.testing.check_grads` (finite differences, both
modes, to the order asked)."""

import itertools

import numpy as np

import diffsci as ds
from diffsci.testing import check_grads as _check

from ._nary import nary

TOL = 1e-6
RTOL = 1e-6


def scalar_close(a, b):
    return abs(a - b) < TOL or abs(a - b) / abs(a + b) < RTOL


def _close(x, y):
    xs, ys = ds.tree_leaves(x), ds.tree_leaves(y)
    assert len(xs) == len(ys), (x, y)
    for a, b in zip(xs, ys):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=RTOL, atol=TOL)


def check_equivalent(x, y):
    _close(x, y)


def check_grads(fun, argnum=0, modes=("fwd", "rev"), order=2):
    """autograd's ``check_grads(fun, argnum, modes, order)(*args)``."""
    def unary(f, x):
        _check(f, (x,), order=order, modes=tuple(modes))
    return nary(unary, fun, argnum)


def combo_check(fun, *args, **kwargs):
    """Every combination of the given argument values and keyword values."""
    def run(*arg_lists, **kwarg_lists):
        keys = list(kwarg_lists)
        for a in itertools.product(*arg_lists):
            for kv in itertools.product(*(kwarg_lists[k] for k in keys)):
                check_grads(lambda *x, kv=kv: fun(*x, **dict(zip(keys, kv))), *args, **kwargs)(*a)
    return run
