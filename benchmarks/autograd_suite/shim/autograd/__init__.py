"""A module named ``autograd`` whose functions are diffsci's: API name mapping only.

It lets autograd's own test suite run against diffsci (``benchmarks/autograd_suite/run.py``).
Every differential operator is one of diffsci's, called with autograd's argument conventions
(``argnum``, curried ``make_vjp``/``make_jvp``); ``autograd.numpy`` is ``diffsci.numpy`` and
``autograd.scipy.*`` is ``diffsci.scipy.*``.  Nothing here computes a derivative itself.
"""

import builtins as _builtins

import numpy as _np

import diffsci as _ds
import diffsci.numpy as _dnp

from . import numpy  # noqa: F401
from ._nary import nary as _nary
from ._primitive import primitive  # noqa: F401

dict = _builtins.dict
list = _builtins.list
tuple = _builtins.tuple


def isinstance(x, types):  # noqa: A001  autograd's: the type of the value under a trace
    return _builtins.isinstance(_ds.stop_gradient(x), types)


def type(x):  # noqa: A001
    return _builtins.type(_ds.stop_gradient(x))


def _ones_like(y):
    return _ds.tree_map(lambda v: _np.ones(_np.shape(v), _np.result_type(_ds.stop_gradient(v))),
                        _ds.stop_gradient(y))


def _zeros_like(y):
    return _ds.tree_map(lambda v: _np.zeros(_np.shape(v), _np.result_type(_ds.stop_gradient(v))),
                        _ds.stop_gradient(y))


def make_vjp(fun, x=None, *, argnum=0):
    """autograd.core.make_vjp(fun, x) -> (vjp, ans); as a differential operator
    make_vjp(fun, argnum)(*args) -> (vjp, ans)."""
    if x is not None and not _builtins.isinstance(x, int):
        ans, back = _ds.pullback(fun, x)
        return (lambda g: back(g)[0]), ans
    argnum = argnum if x is None else x
    return _nary(lambda f, x: make_vjp(f, x), fun, argnum)


@_nary.op
def grad(f, x):
    """
    Returns a function which computes the gradient of ``fun`` with respect to positional
    argument number ``argnum``: :func:`diffsci.grad`."""
    return _ds.grad(f)(x)


@_nary.op
def elementwise_grad(f, x):
    ans, back = _ds.pullback(f, x)
    return back(_ones_like(ans))[0]


@_nary.op
def value_and_grad(f, x):
    return _ds.value_and_grad(f)(x)


@_nary.op
def grad_and_aux(f, x):
    return _ds.grad(f, has_aux=True)(x)


@_nary.op
def jacobian(f, x):
    return _ds.jacobian(f)(x)


@_nary.op
def hessian(f, x):
    return _ds.jacobian(_ds.jacobian(f))(x)


@_nary.op
def deriv(f, x):
    return _ds.jvp(f, (x,), (_ones_like(x),))[1]


@_nary.op
def holomorphic_grad(f, x):
    return _ds.jvp(f, (x,), (_ones_like(x),))[1]


@_nary.op
def make_jvp(f, x):
    return lambda v: _ds.jvp(f, (x,), (v,))


@_nary.op
def make_hvp(f, x):
    return make_vjp(_ds.grad(f), x)


def hessian_tensor_product(fun, argnum=0):
    def h(*args, **kwargs):
        args, v = args[:-1], args[-1]
        g = grad(fun, argnum)
        return grad(lambda *a, **k: _dnp.tensordot(g(*a, **k), v, _np.ndim(v)), argnum)(
            *args, **kwargs)
    return h


hessian_vector_product = hessian_tensor_product


def tensor_jacobian_product(fun, argnum=0):
    def tj(*args, **kwargs):
        args, v = args[:-1], args[-1]
        return jacobian(lambda *a, **k: _dnp.tensordot(v, fun(*a, **k), axes=_np.ndim(v)),
                        argnum)(*args, **kwargs)
    return tj


vector_jacobian_product = tensor_jacobian_product


def make_ggnvp(f, g=lambda x: 0.5 * _dnp.sum(x ** 2, axis=-1), f_argnum=0):
    """Generalised Gauss-Newton products J_f^T H_g J_f v, from diffsci's vjp and jvp."""
    def at(*args):
        x = args[f_argnum]

        def f1(x):
            return f(*args[:f_argnum], x, *args[f_argnum + 1:])
        fx, back = _ds.pullback(f1, x)

        def ggnvp(v):
            jv = _ds.jvp(f1, (x,), (v,))[1]
            hjv = _ds.jvp(_ds.grad(g), (fx,), (jv,))[1]
            return back(hjv)[0]
        return ggnvp
    return at


checkpoint = _ds.checkpoint
