"""Gradients of diffsci.numpy and diffsci.numpy.linalg, checked against finite differences.

The tests are tables.  ``SPECS`` holds one spec per function (several for functions with
several modes): the name of the diffsci function it covers, a function using it, one
domain-appropriate sampler per argument, and the derivative order to check (2 unless a spec
says otherwise; piecewise functions are sampled away from their kinks).  ``KINKS`` pins the
documented conventions at points where the derivative is not defined.
``test_every_function_has_a_spec`` fails when a differentiable function is exported without a
spec.  The rest checks that plain ``import numpy as np`` code differentiates unchanged through
``__array_ufunc__`` / ``__array_function__``.
"""

from __future__ import annotations

import dataclasses
import importlib
import os
import pkgutil
import warnings
import zlib
from collections.abc import Callable

import numpy as np
import pytest

import diffsci as ds
import diffsci.numpy as dnp
import diffsci.numpy.linalg as dla
from diffsci.testing import check_grads


# ---------------------------------------------------------------- samplers
def normal(*shape):
    return lambda r: r.standard_normal(shape)


def positive(*shape):
    return lambda r: r.uniform(0.5, 2.0, shape)


def unit(*shape):  # inside (-1, 1), for arcsin/arccos/arctanh
    return lambda r: r.uniform(-0.9, 0.9, shape)


def above1(*shape):  # for arccosh
    return lambda r: r.uniform(1.2, 3.0, shape)


def away(*shape):  # |x| in (0.3, 2), random sign: away from kinks at 0
    return lambda r: r.uniform(0.3, 2.0, shape) * r.choice([-1.0, 1.0], shape)


def distinct(*shape):  # well-separated values: no ties for max/min/sort
    n = int(np.prod(shape))
    return lambda r: (r.permutation(n) * 0.7 + r.uniform(-0.1, 0.1, n)).reshape(shape)


def cnormal(*shape):
    return lambda r: r.standard_normal(shape) + 1j * r.standard_normal(shape)


def const(value):
    return lambda r: np.array(value, dtype=complex if np.iscomplexobj(value) else float)


def wellcond(*shape, dtype=float):  # (..., n, n) matrices near 3·I
    def sample(r):
        n = shape[-1]
        a = 3 * np.eye(n) + 0.5 * r.standard_normal(shape)
        if dtype is complex:
            a = a + 0.5j * r.standard_normal(shape)
        return a
    return sample


def spd(n, dtype=float):  # Hermitian positive definite
    def sample(r):
        b = r.standard_normal((n, n)) + (1j * r.standard_normal((n, n)) if dtype is complex else 0)
        return b @ b.conj().T + n * np.eye(n)
    return sample


def separated_sym(n):  # symmetric with well-separated eigenvalues
    def sample(r):
        q, _ = np.linalg.qr(r.standard_normal((n, n)))
        return (q * (np.arange(n) * 1.5 + 1.0)) @ q.T
    return sample


def herm(a):
    """The Hermitian matrix built from a's lower triangle (what eigh/cholesky read)."""
    return np.tril(a) + np.swapaxes(np.tril(a, -1), -1, -2).conj()


def _quiet(f):
    """``f`` with NumPy's warnings silenced (for calls that warn on plain arrays too)."""
    def quiet(*args):
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            return f(*args)
    return quiet


# ---------------------------------------------------------------- the table
@dataclasses.dataclass(frozen=True)
class Spec:
    name: str  # the diffsci.numpy (or "linalg.<name>") function this spec covers
    fun: Callable
    args: tuple  # one sampler per positional argument
    order: int = 2  # every spec so far is checked to second order (reverse over reverse)


S = Spec
x23, p23, u23, a23, d23, c23 = normal(2, 3), positive(2, 3), unit(2, 3), away(2, 3), \
    distinct(2, 3), cnormal(2, 3)
x3, p3, c3 = normal(3), positive(3), cnormal(3)

SPECS = [
    # ---- arithmetic (broadcasting shapes)
    S("add", lambda x, y: dnp.add(x, y), (x23, x3)),
    S("add", lambda x, y: x + y, (c23, c3)),
    S("subtract", lambda x, y: dnp.subtract(x, y), (x23, normal(2, 1))),
    S("subtract", lambda x, y: x - y, (c3, c23)),
    S("multiply", lambda x, y: dnp.multiply(x, y), (x23, x3)),
    S("multiply", lambda x, y: x * y, (c23, c3)),
    S("true_divide", lambda x, y: dnp.true_divide(x, y), (x23, away(3))),
    S("true_divide", lambda x, y: x / y, (c23, c3)),
    S("divide", lambda x: dnp.divide(2.0, x), (away(3),)),
    S("power", lambda x, y: dnp.power(x, y), (p23, x3)),
    S("power", lambda x: x ** 3, (x23,)),
    S("power", lambda x, y: x ** y, (cnormal(3), cnormal(3))),
    S("pow", lambda x: dnp.pow(x, 2.5), (p3,)),
    S("float_power", lambda x, y: dnp.float_power(x, y), (p23, x3)),
    S("negative", lambda x: -x, (c23,)),
    S("positive", lambda x: dnp.positive(x), (x23,)),
    S("remainder", lambda x, y: dnp.remainder(x, y), (positive(4), const([0.3, 0.7, 1.1, 1.3]))),
    S("mod", lambda x, y: x % y, (const([0.5, 1.3, 2.9]), const([0.4, 0.6, 1.7]))),
    S("fmod", lambda x, y: dnp.fmod(x, y), (const([-0.5, 1.3, 2.9]), const([0.4, 0.6, -1.7]))),
    # ---- elementwise math
    S("absolute", lambda x: dnp.absolute(x), (a23,)),
    S("absolute", lambda x: dnp.abs(x), (c23,)),
    S("fabs", lambda x: dnp.fabs(x), (a23,)),
    S("sqrt", lambda x: dnp.sqrt(x), (p23,)),
    S("sqrt", lambda x: dnp.sqrt(x), (c23,)),
    S("cbrt", lambda x: dnp.cbrt(x), (a23,)),
    S("square", lambda x: dnp.square(x), (c23,)),
    S("reciprocal", lambda x: dnp.reciprocal(x), (away(3),)),
    S("reciprocal", lambda x: dnp.reciprocal(x), (c3,)),
    S("exp", lambda x: dnp.exp(x), (x23,)),
    S("exp", lambda x: dnp.exp(x), (c23,)),
    S("exp2", lambda x: dnp.exp2(x), (x23,)),
    S("expm1", lambda x: dnp.expm1(x), (x23,)),
    S("log", lambda x: dnp.log(x), (p23,)),
    S("log", lambda x: dnp.log(x), (c23,)),
    S("log2", lambda x: dnp.log2(x), (p23,)),
    S("log10", lambda x: dnp.log10(x), (p23,)),
    S("log1p", lambda x: dnp.log1p(x), (p23,)),
    S("logaddexp", lambda x, y: dnp.logaddexp(x, y), (x23, x3)),
    S("logaddexp2", lambda x, y: dnp.logaddexp2(x, y), (x23, x3)),
    S("sin", lambda x: dnp.sin(x), (x23,)),
    S("sin", lambda x: dnp.sin(x), (c23,)),
    S("cos", lambda x: dnp.cos(x), (x23,)),
    S("cos", lambda x: dnp.cos(x), (c3,)),
    S("tan", lambda x: dnp.tan(x), (u23,)),
    S("arcsin", lambda x: dnp.arcsin(x), (u23,)),
    S("arccos", lambda x: dnp.arccos(x), (u23,)),
    S("arctan", lambda x: dnp.arctan(x), (x23,)),
    S("arctan2", lambda y, x: dnp.arctan2(y, x), (x23, away(3))),
    S("hypot", lambda x, y: dnp.hypot(x, y), (x23, away(3))),
    S("sinh", lambda x: dnp.sinh(x), (x23,)),
    S("sinh", lambda x: dnp.sinh(x), (c3,)),
    S("cosh", lambda x: dnp.cosh(x), (x23,)),
    S("tanh", lambda x: dnp.tanh(x), (x23,)),
    S("tanh", lambda x: dnp.tanh(x), (c3,)),
    S("arcsinh", lambda x: dnp.arcsinh(x), (x23,)),
    S("arccosh", lambda x: dnp.arccosh(x), (above1(2, 3),)),
    S("arctanh", lambda x: dnp.arctanh(x), (u23,)),
    S("arcsin", lambda x: dnp.arcsin(x), (cnormal(3),)),
    S("deg2rad", lambda x: dnp.deg2rad(x), (x23,)),
    S("radians", lambda x: dnp.radians(x), (x23,)),
    S("rad2deg", lambda x: dnp.rad2deg(x), (x23,)),
    S("degrees", lambda x: dnp.degrees(x), (x23,)),
    S("sinc", lambda x: dnp.sinc(x), (a23,)),
    S("maximum", lambda x, y: dnp.maximum(x, y), (x23, x3)),
    S("minimum", lambda x, y: dnp.minimum(x, y), (x23, x3)),
    S("fmax", lambda x, y: dnp.fmax(x, y), (x23, x3)),
    S("fmin", lambda x, y: dnp.fmin(x, y), (x23, x3)),
    S("clip", lambda x: dnp.clip(x, -0.5, 0.5), (const([-1.0, -0.2, 0.3, 0.9]),)),
    S("clip", lambda x, lo, hi: dnp.clip(x, lo, hi),
      (const([-1.0, -0.2, 0.3, 0.9]), const([-0.5, -0.5, 0.0, 0.0]), const(0.6))),
    S("clip", lambda x, hi: dnp.clip(x, max=hi), (const([-1.0, 0.9]), const(0.2))),
    S("where", lambda x, y: dnp.where(np.array([True, False, True]), x, y), (x23, x3)),
    S("real", lambda z: dnp.real(z), (c23,)),
    S("real", lambda x: dnp.real(x) * 2, (x3,)),
    S("imag", lambda z: dnp.imag(z), (c23,)),
    S("conjugate", lambda z: dnp.conjugate(z) * z[0], (c3,)),
    S("conj", lambda z: dnp.conj(z), (c23,)),
    S("angle", lambda z: dnp.angle(z), (c23,)),
    S("angle", lambda z: dnp.angle(z, deg=True), (c3,)),
    S("nan_to_num", lambda x: dnp.nan_to_num(x + np.array([0.0, np.inf, 0.0])), (p3,)),
    # ---- reductions
    S("sum", lambda x: dnp.sum(x), (x23,)),
    S("sum", lambda x: dnp.sum(x, axis=1), (c23,)),
    S("sum", lambda x: dnp.sum(x, axis=(0, 2), keepdims=True), (normal(2, 3, 2),)),
    S("sum", lambda x: dnp.sum(x, 0, where=np.array([True, False, True])), (x23,)),
    S("mean", lambda x: dnp.mean(x, axis=0), (x23,)),
    S("mean", lambda x: dnp.mean(x, keepdims=True), (c23,)),
    S("mean", lambda x: dnp.mean(x, 1, where=np.array([True, False, True])), (x23,)),
    S("prod", lambda x: dnp.prod(x, axis=1), (x23,)),
    S("prod", lambda x: dnp.prod(x), (const([[2.0, 0.0, 3.0], [0.5, 1.5, -1.0]]),)),
    S("prod", lambda x: dnp.prod(x, axis=0), (const([[0.0, 0.0, 3.0], [0.5, 0.0, 0.0]]),)),
    S("prod", lambda x: dnp.prod(x, axis=1, keepdims=True), (c23,)),
    S("amax", lambda x: dnp.amax(x, axis=1), (d23,)),
    S("amin", lambda x: dnp.amin(x, axis=0, keepdims=True), (d23,)),
    S("max", lambda x: dnp.max(x), (d23,)),
    S("min", lambda x: dnp.min(x, 1), (d23,)),
    S("std", lambda x: dnp.std(x, axis=1), (x23,)),
    S("std", lambda x: dnp.std(x, ddof=1), (c23,)),
    S("var", lambda x: dnp.var(x, axis=0, ddof=1, keepdims=True), (x23,)),
    S("var", lambda x: dnp.var(x), (c23,)),
    S("cumsum", lambda x: dnp.cumsum(x, axis=1), (x23,)),
    S("cumsum", lambda x: dnp.cumsum(x), (c23,)),
    S("cumprod", lambda x: dnp.cumprod(x, axis=1), (x23,)),
    S("cumprod", lambda x: dnp.cumprod(x), (const([[2.0, 0.0, 3.0], [0.5, 0.0, -1.0]]),)),
    S("cumprod", lambda x: dnp.cumprod(x, 0), (c23,)),
    S("cumprod", lambda x: dnp.cumprod(x, -1), (normal(2, 7),)),  # three scan steps
    S("cumprod", lambda x: dnp.cumprod(x), (const([0.0, 0.0, 2.0, 0.5, 0.0]),)),
    S("average", lambda x: dnp.average(x, axis=1), (x23,)),
    S("average", lambda x, w: dnp.average(x, axis=1, weights=w), (x23, p3)),
    S("average", lambda x, w: dnp.average(x, weights=w, returned=True), (x23, p23)),
    S("ptp", lambda x: dnp.ptp(x, axis=1), (d23,)),
    S("nansum", lambda x: dnp.nansum(x + np.array([0.0, np.nan, 0.0])), (x23,)),
    S("nanmean", lambda x: dnp.nanmean(x + np.array([0.0, np.nan, 0.0]), axis=1), (x23,)),
    S("diff", lambda x: dnp.diff(x), (x23,)),
    S("diff", lambda x: dnp.diff(x, 2, axis=0, prepend=0.5, append=x[:1]), (x23,)),
    S("trapezoid", lambda y: dnp.trapezoid(y, dx=0.5), (x23,)),
    S("trapezoid", lambda y, x: dnp.trapezoid(y, x, axis=0), (normal(3, 2), x3)),
    S("trapezoid", lambda y, x: dnp.trapezoid(y, x), (x23, x23)),
    # ---- shapes
    S("reshape", lambda x: dnp.reshape(x, (3, 2)), (c23,)),
    S("reshape", lambda x: dnp.reshape(x, (3, 2), order="F"), (x23,)),
    S("ravel", lambda x: dnp.ravel(x), (x23,)),
    S("transpose", lambda x: dnp.transpose(x, (2, 0, 1)), (normal(2, 3, 4),)),
    S("transpose", lambda x: dnp.transpose(x), (c23,)),
    S("permute_dims", lambda x: dnp.permute_dims(x, (1, -1, 0)), (normal(2, 3, 4),)),
    S("matrix_transpose", lambda x: dnp.matrix_transpose(x), (normal(2, 3, 4),)),
    S("moveaxis", lambda x: dnp.moveaxis(x, 0, -1), (normal(2, 3, 4),)),
    S("swapaxes", lambda x: dnp.swapaxes(x, 0, 2), (normal(2, 3, 4),)),
    S("expand_dims", lambda x: dnp.expand_dims(x, (0, 2)), (x23,)),
    S("squeeze", lambda x: dnp.squeeze(x, 1), (normal(2, 1, 3),)),
    S("concatenate", lambda x, y: dnp.concatenate([x, y], axis=1), (x23, normal(2, 2))),
    S("concatenate", lambda x, y: dnp.concatenate((x, y), axis=None), (c23, x3)),
    S("concat", lambda x, y: dnp.concat([y, x, y]), (x23, normal(1, 3))),
    S("stack", lambda x, y: dnp.stack([x, y, x], axis=1), (x23, x23)),
    S("hstack", lambda x, y: dnp.hstack([x, y]), (x3, normal(2))),
    S("hstack", lambda x, y: dnp.hstack((x, y)), (x23, normal(2, 1))),
    S("vstack", lambda x, y: dnp.vstack([x, y]), (x23, x3)),
    S("dstack", lambda x, y: dnp.dstack([x, y]), (x23, x23)),
    S("column_stack", lambda x, y: dnp.column_stack([x, y]), (normal(2), normal(2, 2))),
    S("split", lambda x: dnp.split(x, 3, axis=1), (x23,)),
    S("split", lambda x: dnp.split(x, [1, 2]), (normal(4, 2),)),
    S("array_split", lambda x: dnp.array_split(x, 2, axis=1), (x23,)),
    S("hsplit", lambda x: dnp.hsplit(x, 3), (x23,)),
    S("vsplit", lambda x: dnp.vsplit(x, 2), (x23,)),
    S("dsplit", lambda x: dnp.dsplit(x, [1]), (normal(2, 2, 3),)),
    S("tile", lambda x: dnp.tile(x, (2, 1, 2)), (x23,)),
    S("tile", lambda x: dnp.tile(x, 2), (x3,)),
    S("repeat", lambda x: dnp.repeat(x, 2, axis=1), (x23,)),
    S("repeat", lambda x: dnp.repeat(x, [1, 0, 3], axis=1), (x23,)),
    S("repeat", lambda x: dnp.repeat(x, 2), (c23,)),
    S("broadcast_to", lambda x: dnp.broadcast_to(x, (2, 4, 3)), (normal(4, 1),)),
    S("broadcast_arrays", lambda x, y: dnp.broadcast_arrays(x, y), (normal(2, 1), x3)),
    S("flip", lambda x: dnp.flip(x, 1), (x23,)),
    S("flip", lambda x: dnp.flip(x), (c23,)),
    S("fliplr", lambda x: dnp.fliplr(x), (x23,)),
    S("flipud", lambda x: dnp.flipud(x), (x23,)),
    S("rot90", lambda x: dnp.rot90(x), (x23,)),
    S("rot90", lambda x: dnp.rot90(x, 3, axes=(1, 0)), (x23,)),
    S("rot90", lambda x: dnp.rot90(x, 2), (x23,)),
    S("roll", lambda x: dnp.roll(x, 1, axis=1), (x23,)),
    S("roll", lambda x: dnp.roll(x, (1, -2), axis=(0, 1)), (x23,)),
    S("roll", lambda x: dnp.roll(x, 4), (x23,)),
    S("pad", lambda x: dnp.pad(x, ((1, 0), (2, 1))), (x23,)),
    S("pad", lambda x: dnp.pad(x, 1, constant_values=3.0), (c23,)),
    S("pad", lambda x: dnp.pad(x, 2, mode="edge"), (x23,)),
    S("pad", lambda x: dnp.pad(x, (1, 2), mode="reflect"), (x23,)),
    S("pad", lambda x: dnp.pad(x, 2, mode="symmetric"), (x3,)),
    S("pad", lambda x: dnp.pad(x, ((0, 1), (3, 3)), mode="wrap"), (x23,)),
    S("diag", lambda x: dnp.diag(x), (x3,)),
    S("diag", lambda x: dnp.diag(x, -1), (x3,)),
    S("diag", lambda x: dnp.diag(x, 1), (normal(3, 4),)),
    S("diagflat", lambda x: dnp.diagflat(x, 1), (normal(2, 2),)),
    S("diagonal", lambda x: dnp.diagonal(x, 1, 0, 2), (normal(3, 2, 4),)),
    S("diagonal", lambda x: dnp.diagonal(x, -1), (normal(3, 3),)),
    S("trace", lambda x: dnp.trace(x), (normal(3, 3),)),
    S("trace", lambda x: dnp.trace(x, 1, 1, 2), (normal(2, 3, 3),)),
    S("triu", lambda x: dnp.triu(x, 1), (normal(3, 3),)),
    S("tril", lambda x: dnp.tril(x), (normal(2, 3, 3),)),
    S("tril", lambda x: dnp.tril(x, -1), (x3,)),
    S("atleast_1d", lambda x: dnp.atleast_1d(x), (const(2.0),)),
    S("atleast_2d", lambda x, y: dnp.atleast_2d(x, y), (x3, x23)),
    S("atleast_3d", lambda x: dnp.atleast_3d(x), (x23,)),
    S("copy", lambda x: dnp.copy(x), (x23,)),
    S("astype", lambda x: dnp.astype(x, np.float64) * 2, (lambda r: x23(r).astype(np.float32),)),
    S("astype", lambda x: dnp.astype(x, np.complex128), (x23,)),
    S("astype", _quiet(lambda x: dnp.astype(x, np.float64) * 2), (c23,)),  # drops imag
    S("astype", lambda x: x.astype(np.float64), (x3,)),
    # ---- products
    S("matmul", lambda x, y: dnp.matmul(x, y), (x23, normal(3, 2))),
    S("matmul", lambda x, y: x @ y, (normal(2, 2, 3), x3)),
    S("matmul", lambda x, y: x @ y, (x3, normal(2, 3, 2))),
    S("matmul", lambda x, y: x @ y, (c23, cnormal(4, 3, 2))),
    S("matmul", lambda x, y: x @ y, (c3, c3)),
    S("dot", lambda x, y: dnp.dot(x, y), (x23, normal(3, 2))),
    S("dot", lambda x, y: dnp.dot(x, y), (normal(2, 2, 3), normal(4, 3, 2))),
    S("dot", lambda x, y: dnp.dot(x, y), (c23, c3)),
    S("dot", lambda x, y: dnp.dot(x, y), (const(1.5), x3)),
    S("vdot", lambda x, y: dnp.vdot(x, y), (c23, c23)),
    S("vecdot", lambda x, y: dnp.vecdot(x, y, axis=0), (c23, c23)),
    S("tensordot", lambda x, y: dnp.tensordot(x, y, axes=([0, 2], [1, 0])),
      (normal(2, 3, 4), normal(4, 2, 3))),
    S("tensordot", lambda x, y: dnp.tensordot(x, y, 1), (c23, cnormal(3, 2))),
    S("tensordot", lambda x, y: dnp.tensordot(x, y, axes=0), (x3, normal(2))),
    S("einsum", lambda x, y: dnp.einsum("ij,jk->ik", x, y), (x23, normal(3, 2))),
    S("einsum", lambda x, y: dnp.einsum("ij,kj", x, y), (c23, cnormal(2, 3))),
    S("einsum", lambda x: dnp.einsum("ii", x), (normal(3, 3),)),
    S("einsum", lambda x: dnp.einsum("iij->ji", x), (normal(2, 2, 3),)),
    S("einsum", lambda x, y: dnp.einsum("...ij,j->...i", x, y), (normal(2, 2, 3), x3)),
    S("einsum", lambda x, y: dnp.einsum("...j,...j", x, y), (normal(1, 3), normal(2, 3))),
    S("einsum", lambda x, y, z: dnp.einsum("ab,bc,c->a", x, y, z), (x23, normal(3, 2), normal(2))),
    S("einsum", lambda x: dnp.einsum("ijk->", x), (normal(2, 3, 2),)),
    S("einsum", lambda x, y: dnp.einsum(x, [0, 1], y, [1], [0]), (x23, x3)),
    S("einsum", lambda x, y: dnp.einsum("i,i->i", x, y), (normal(1), x3)),
    S("outer", lambda x, y: dnp.outer(x, y), (x3, x23)),
    S("inner", lambda x, y: dnp.inner(x, y), (x23, normal(4, 3))),
    S("inner", lambda x, y: dnp.inner(x, y), (const(2.0), x3)),
    S("kron", lambda x, y: dnp.kron(x, y), (x23, normal(2, 2))),
    S("kron", lambda x, y: dnp.kron(x, y), (x3, x23)),
    S("cross", lambda x, y: dnp.cross(x, y), (normal(2, 3), normal(3))),
    S("cross", lambda x, y: dnp.cross(x, y, axisa=0, axisc=0), (normal(3, 2), normal(2, 3))),
    S("cross", _quiet(lambda x, y: dnp.cross(x, y)), (normal(2, 3), normal(2, 2))),  # 2-vectors
    # ---- indexing
    S("getitem", lambda x: x[1:, ::2], (normal(3, 4),)),
    S("getitem", lambda x: x[[0, 2, 0, 0]], (normal(3, 2),)),
    S("getitem", lambda x: x[x > 0.3], (const([[0.1, 0.5], [0.9, -0.4]]),)),
    S("getitem", lambda x: x[:, [1, 1], None], (c23,)),
    S("getitem", lambda x: x[np.array([0, 1, 1]), np.array([2, 2, 0])], (x23,)),
    S("getitem", lambda x: x[..., 0], (x23,)),
    S("scatter_add", lambda b, v: dnp.scatter_add(b, v, idx=np.array([0, 2, 0])), (x3, x3)),
    S("take", lambda x: dnp.take(x, [0, 2, 2], axis=1), (x23,)),
    S("take", lambda x: dnp.take(x, np.array([[5, 0], [-1, 1]])), (x23,)),
    S("take", lambda x: dnp.take(x, [4, -4], axis=1, mode="wrap"), (x23,)),
    S("take_along_axis", lambda x: dnp.take_along_axis(x, np.array([[2, 0, 2], [1, 1, 0]]), 1),
      (x23,)),
    S("take_along_axis", lambda x: dnp.take_along_axis(x, np.array([5, 0]), None), (x23,)),
    S("select", lambda x, y: dnp.select([np.array([True, False, False]), np.array([True, True,
                                         False])], [x, y], 7.0), (x23, x3)),
    S("choose", lambda x, y: dnp.choose(np.array([[0, 1, 1], [1, 0, 1]]), [x, y]), (x23, x3)),
    S("compress", lambda x: dnp.compress([True, False, True], x, axis=1), (x23,)),
    S("sort", lambda x: dnp.sort(x), (d23,)),
    S("sort", lambda x: dnp.sort(x, axis=0), (d23,)),
    S("sort", lambda x: dnp.sort(x, axis=None), (d23,)),
    # ---- constructors that carry values
    S("linspace", lambda a, b: dnp.linspace(a, b, 5), (x3, x3)),
    S("linspace", lambda a, b: dnp.linspace(a, b, 4, endpoint=False, axis=1), (x3, const(1.0))),
    S("linspace", lambda a: dnp.linspace(a, 2.0, 3, retstep=True), (const(0.5),)),
    S("logspace", lambda a, b: dnp.logspace(a, b, 4), (x3, x3)),
    S("arange", lambda a: dnp.arange(a, 3.0, 0.5), (const(0.2),)),
    S("arange", lambda a, s: dnp.arange(a, 2.0, s), (const(0.2), const(0.4))),
    S("full", lambda v: dnp.full((2, 3), v), (const(1.5),)),
    S("full", lambda v: dnp.full((2, 3), v), (x3,)),
    S("full_like", lambda v: dnp.full_like(np.zeros((2, 2)), v), (const(0.5),)),
    S("zeros_like", lambda x: dnp.zeros_like(x) * x + x, (x23,)),  # a traced constant buffer
    S("ones_like", lambda x: dnp.ones_like(x) * x, (x23,)),
    S("asarray", lambda x: dnp.asarray(x), (x23,)),
    S("asarray", lambda x, y: dnp.asarray([x, y]), (x3, x3)),
    S("array", lambda x, y: dnp.array([[x, y], [y, 1.0]]), (const(0.5), const(1.5))),
    S("array", lambda x: dnp.array(x, ndmin=3), (x3,)),
    # ---- linalg
    S("linalg.norm", lambda x: dla.norm(x), (x23,)),
    S("linalg.norm", lambda x: dla.norm(x), (c23,)),
    S("linalg.norm", lambda x: dla.norm(x, axis=1, keepdims=True), (x23,)),
    S("linalg.norm", lambda x: dla.norm(x, 1, axis=0), (a23,)),
    S("linalg.norm", lambda x: dla.norm(x, np.inf, axis=1), (d23,)),
    S("linalg.norm", lambda x: dla.norm(x, -np.inf), (distinct(4),)),
    S("linalg.norm", lambda x: dla.norm(x, 3), (away(4),)),
    S("linalg.norm", lambda x: dla.norm(x, 0.5), (away(4),)),
    S("linalg.norm", lambda x: dla.norm(x, "fro"), (c23,)),
    S("linalg.norm", lambda x: dla.norm(x, "nuc"), (normal(3, 3),)),
    S("linalg.norm", lambda x: dla.norm(x, 2), (x23,)),
    S("linalg.norm", lambda x: dla.norm(x, -2, axis=(2, 0)), (normal(2, 2, 3),)),
    S("linalg.norm", lambda x: dla.norm(x, 1), (a23,)),
    S("linalg.norm", lambda x: dla.norm(x, -np.inf, keepdims=True), (a23,)),
    S("linalg.vector_norm", lambda x: dla.vector_norm(x, axis=(0, 2), ord=3), (away(2, 2, 2),)),
    S("linalg.matrix_norm", lambda x: dla.matrix_norm(x), (normal(2, 3, 3),)),
    S("linalg.det", lambda a: dla.det(a), (wellcond(3),)),
    S("linalg.det", lambda a: dla.det(a), (wellcond(2, 3, 3, dtype=complex),)),
    S("linalg.slogdet", lambda a: dla.slogdet(a).logabsdet, (wellcond(2, 3, 3),)),
    S("linalg.slogdet", lambda a: dla.slogdet(-a), (wellcond(3, 3),)),
    S("linalg.slogdet", lambda a: dla.slogdet(a), (wellcond(3, 3, dtype=complex),)),
    S("linalg.inv", lambda a: dla.inv(a), (wellcond(3),)),
    S("linalg.inv", lambda a: dla.inv(a), (wellcond(2, 3, 3, dtype=complex),)),
    S("linalg.solve", lambda a, b: dla.solve(a, b), (wellcond(3, 3), x3)),
    S("linalg.solve", lambda a, b: dla.solve(a, b), (wellcond(2, 3, 3), normal(2, 3, 2))),
    S("linalg.solve", lambda a, b: dla.solve(a, b), (wellcond(2, 3, 3), x3)),
    S("linalg.solve", lambda a, b: dla.solve(a, b), (wellcond(3, 3, dtype=complex), cnormal(3, 2))),
    S("linalg.cholesky", lambda a: dla.cholesky(a), (spd(3),)),
    S("linalg.cholesky", lambda a: dla.cholesky(a, upper=True), (spd(3),)),
    S("linalg.cholesky", lambda b: dla.cholesky(b @ b.T + 3 * np.eye(3)), (normal(3, 3),)),
    S("linalg.cholesky", lambda a: dla.cholesky(a), (spd(3, complex),)),
    S("linalg.eigh", lambda a: dla.eigh(a).eigenvalues, (separated_sym(3),)),
    S("linalg.eigh", lambda a: dla.eigh(a, "U")[1] ** 2, (separated_sym(3),)),
    S("linalg.eigh", lambda b: dla.eigh(b + b.T)[1] * dla.eigh(b + b.T)[1][0],
      (separated_sym(3),)),
    S("linalg.eigh", lambda a: dnp.abs(dla.eigh(herm(a))[1]) ** 2 + dla.eigh(herm(a))[0],
      (lambda r: separated_sym(3)(r) + 0.1j * r.standard_normal((3, 3)),)),
    S("linalg.eigvalsh", lambda a: dla.eigvalsh(a), (separated_sym(3),)),
    S("linalg.svd", lambda a: dla.svd(a, compute_uv=False), (x23,)),
    S("linalg.svd", lambda a: dla.svd(a, compute_uv=False), (cnormal(3, 2),)),
    S("linalg.svd", lambda a: _gauge_free(dla.svd(a, full_matrices=False)), (normal(3, 2),)),
    S("linalg.svd", lambda a: _gauge_free(dla.svd(a, full_matrices=False)), (x23,)),
    S("linalg.svd", lambda a: _gauge_free(dla.svd(a)), (normal(3, 3),)),
    S("linalg.svd", lambda a: _gauge_free(dla.svd(a, full_matrices=False)), (cnormal(3, 2),)),
    S("linalg.svd", lambda a: _gauge_free(dla.svd(a, full_matrices=False)), (cnormal(2, 3),)),
    S("linalg.svdvals", lambda a: dla.svdvals(a), (normal(2, 3, 2),)),
    S("linalg.qr", lambda a: dla.qr(a), (normal(4, 3),)),
    S("linalg.qr", lambda a: dla.qr(a), (normal(3, 3),)),
    S("linalg.qr", lambda a: dla.qr(a, "complete"), (normal(2, 2, 3),)),
    S("linalg.qr", lambda a: dla.qr(a), (cnormal(3, 2),)),
    S("linalg.qr", lambda a: dla.qr(a, "r"), (cnormal(2, 3),)),
    S("linalg.matrix_power", lambda a: dla.matrix_power(a, 3), (normal(3, 3),)),
    S("linalg.matrix_power", lambda a: dla.matrix_power(a, -2), (wellcond(3, 3),)),
    S("linalg.multi_dot", lambda a, b, c: dla.multi_dot([a, b, c]), (x3, normal(3, 2), x23)),
    S("linalg.trace", lambda a: dla.trace(a, offset=1), (normal(2, 3, 3),)),
    S("linalg.diagonal", lambda a: dla.diagonal(a), (normal(2, 3, 3),)),
    S("linalg.outer", lambda a, b: dla.outer(a, b), (x3, normal(2))),
    S("linalg.cross", lambda a, b: dla.cross(a, b), (normal(2, 3), x3)),
    S("linalg.matmul", lambda a, b: dla.matmul(a, b), (x23, x3)),
    S("linalg.tensordot", lambda a, b: dla.tensordot(a, b, 1), (x23, x3)),
    S("linalg.vecdot", lambda a, b: dla.vecdot(a, b), (c23, c3)),
    S("linalg.matrix_transpose", lambda a: dla.matrix_transpose(a), (x23,)),
]

# More specs live in sibling modules named ``specs_<area>.py``, each defining ``SPECS`` with the
# samplers and ``Spec`` above (imported from this module); they join the table and the coverage
# test.
for _info in pkgutil.iter_modules([os.path.dirname(__file__)]):
    if _info.name.startswith("specs_"):
        SPECS += importlib.import_module(f"{__package__}.{_info.name}").SPECS


def _gauge_free(usv):
    """A loss of (U, S, Vh) invariant under the sign/phase freedom of singular vectors."""
    u, s, vh = usv
    k = s.shape[-1]
    w = np.arange(1.0, k + 1)
    return dnp.real(dnp.einsum("ik,k,kj->ij", u[..., :k], w, vh[..., :k, :])), s


# Twice-differentiable aliases share their target's specs.
ALIASES = {"abs": "absolute", "divide": "true_divide", "mod": "remainder", "acos": "arccos",
           "asin": "arcsin", "atan": "arctan", "atan2": "arctan2", "acosh": "arccosh",
           "asinh": "arcsinh", "atanh": "arctanh", "pow": "power"}


def _spec_id(spec, _seen={}):  # noqa: B006 - counter for readable ids
    k = _seen[spec.name] = _seen.get(spec.name, 0) + 1
    return f"{spec.name}-{k}"


@pytest.mark.parametrize("spec", SPECS, ids=[_spec_id(s) for s in SPECS])
def test_grad(spec):
    rng = np.random.default_rng(zlib.crc32(spec.name.encode()))
    args = tuple(sample(rng) for sample in spec.args)
    check_grads(spec.fun, args, order=spec.order, modes=("rev",))


# ---------------------------------------------------------------- conventions at kinks
def _g(f, *args, argnums=0):
    return ds.grad(f, argnums=argnums)(*args)


KINKS = [
    ("abs'(0) = 0", lambda: _g(lambda x: dnp.sum(dnp.abs(x)), np.array([0.0, 2.0, -1.0])),
     [0.0, 1.0, -1.0]),
    ("abs of complex 0", lambda: _g(lambda z: dnp.sum(dnp.abs(z)), np.array([0j, 3 + 4j])),
     [0.0, 0.6 + 0.8j]),
    ("maximum tie 0.5/0.5", lambda: _g(lambda x, y: dnp.sum(dnp.maximum(x, y)),
                                       np.array([1.0, 2.0]), np.array([1.0, 0.0]),
                                       argnums=(0, 1)), ([0.5, 1.0], [0.5, 0.0])),
    ("fmin tie 0.5/0.5", lambda: _g(lambda x, y: dnp.fmin(x, y), 1.0, 1.0, argnums=(0, 1)),
     (0.5, 0.5)),
    ("max shares ties", lambda: _g(lambda x: dnp.max(x), np.array([1.0, 3.0, 3.0])),
     [0.0, 0.5, 0.5]),
    ("min shares ties along axis", lambda: _g(lambda x: dnp.sum(dnp.min(x, axis=1)),
                                              np.array([[1.0, 1.0], [2.0, 0.0]])),
     [[0.5, 0.5], [0.0, 1.0]]),
    ("clip at a bound goes to a", lambda: _g(lambda x, lo: dnp.sum(dnp.clip(x, lo, 1.0)),
                                             np.array([0.0, -1.0]), 0.0, argnums=(0, 1)),
     ([1.0, 0.0], 1.0)),
    ("norm of zero vector is 0", lambda: _g(lambda x: dla.norm(x), np.zeros(3)), [0.0] * 3),
    ("norm of zero, axis", lambda: _g(lambda x: dnp.sum(dla.norm(x, axis=1)),
                                      np.array([[0.0, 0.0], [3.0, 4.0]])),
     [[0.0, 0.0], [0.6, 0.8]]),
    ("prod with one zero", lambda: _g(lambda x: dnp.prod(x), np.array([2.0, 0.0, 3.0])),
     [0.0, 6.0, 0.0]),
    ("prod with two zeros", lambda: _g(lambda x: dnp.prod(x), np.array([0.0, 0.0, 3.0])),
     [0.0, 0.0, 0.0]),
    ("cumprod with a zero", lambda: _g(lambda x: dnp.sum(dnp.cumprod(x)),
                                       np.array([2.0, 0.0, 3.0])), [1.0, 2 + 6.0, 0.0]),
    ("prod does not divide (underflow)", lambda: _g(lambda x: dnp.prod(x),
                                                    np.array([1e-200, 1e-200, 5.0])),
     [5e-200, 5e-200, 0.0]),
    ("cumprod does not divide (underflow)", lambda: _g(lambda x: dnp.sum(dnp.cumprod(x)),
                                                       np.array([1e-200, 1e-200, 5.0])),
     [1.0, 6e-200, 0.0]),
    ("std of a constant is 0", lambda: _g(lambda x: dnp.std(x), np.ones(3)), [0.0] * 3),
    ("sinc'(0) = 0", lambda: _g(lambda x: dnp.sinc(x), 0.0), 0.0),
    ("hypot at the origin", lambda: _g(lambda x, y: dnp.hypot(x, y), 0.0, 0.0, argnums=(0, 1)),
     (0.0, 0.0)),
    ("angle at 0", lambda: _g(lambda z: dnp.angle(z), 0j), 0j),
    ("sqrt of 0 is inf", _quiet(lambda: _g(lambda x: dnp.sqrt(x), 0.0)), np.inf),
    ("power y at x = 0", lambda: _g(lambda y: dnp.power(0.0, y), 2.0), 0.0),
    ("sort ties follow the stable order", lambda: _g(lambda x: dnp.sort(x)[0] * 2 + dnp.sort(x)[1],
                                                     np.array([1.0, 1.0])), [2.0, 1.0]),
    ("getitem duplicates accumulate", lambda: _g(lambda x: dnp.sum(x[[0, 0, 1, 0]]),
                                                 np.zeros(3)), [3.0, 1.0, 0.0]),
    ("astype to int cuts the gradient", lambda: _g(lambda x: dnp.sum(dnp.astype(x, int) * x),
                                                   np.array([1.5, 2.5])), [1.0, 2.0]),
]


@pytest.mark.parametrize("what,compute,expected", KINKS, ids=[k[0] for k in KINKS])
def test_convention_at_kink(what, compute, expected):
    got = compute()
    for g, e in zip(got, expected) if isinstance(expected, tuple) else [(got, expected)]:
        np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-300)


# ---------------------------------------------------------------- coverage
# register_numpy_function is API, empty_like's values are undefined (diffsci._inplace owns it).
NOT_FUNCTIONS_OF_VALUES = {"register_numpy_function", "empty_like"}


def _differentiable_exports():
    """Every exported differentiable callable of diffsci.numpy and its linalg, by name."""
    out = {}
    for name in dir(dnp):
        obj = getattr(dnp, name)
        if (name.startswith("_") or isinstance(obj, type) or not callable(obj)
                or getattr(obj, "is_nondifferentiable", False)
                or name in NOT_FUNCTIONS_OF_VALUES):
            continue
        out[name] = obj
    for name in dla.__all__:
        out["linalg." + name] = getattr(dla, name)
    return out


def test_every_function_has_a_spec():
    covered = {ALIASES.get(s.name, s.name) for s in SPECS}
    covered_objs = {id(_resolve(n)) for n in covered}
    missing = sorted(n for n, f in _differentiable_exports().items()
                     if ALIASES.get(n, n) not in covered and id(f) not in covered_objs)
    assert not missing, f"differentiable functions without a gradient spec: {missing}"


def _resolve(name):
    if name.startswith("linalg."):
        return getattr(dla, name[len("linalg."):])
    return getattr(dnp, name)


def test_every_primitive_has_a_rule():
    for name, f in _differentiable_exports().items():
        if getattr(f, "is_primitive", False):
            assert len(f.vjps) > 0 or name in ("concatenate", "stack", "einsum"), name


REQUIRED = """
add subtract multiply divide true_divide floor_divide power float_power negative positive abs
absolute fabs sign sqrt cbrt square reciprocal exp exp2 expm1 log log2 log10 log1p logaddexp
logaddexp2 sin cos tan arcsin arccos arctan sinh cosh tanh arcsinh arccosh arctanh arctan2 hypot
deg2rad rad2deg degrees radians sinc maximum minimum fmax fmin clip where real imag conj conjugate
angle mod remainder fmod heaviside nan_to_num
sum mean prod max min amax amin std var cumsum cumprod average ptp
reshape ravel transpose moveaxis swapaxes expand_dims squeeze concatenate stack hstack vstack
dstack column_stack split array_split tile repeat broadcast_to broadcast_arrays flip fliplr flipud
rot90 roll pad diag diagonal triu tril trace atleast_1d atleast_2d atleast_3d copy astype
dot vdot matmul einsum tensordot outer inner kron cross
getitem take take_along_axis select choose sort
linspace arange zeros ones eye identity full empty zeros_like ones_like full_like empty_like tri
floor ceil round around rint trunc fix argmax argmin argsort argwhere nonzero flatnonzero
searchsorted signbit equal not_equal less less_equal greater greater_equal isfinite isinf isnan
isclose allclose array_equal logical_and logical_or logical_not logical_xor all any shape ndim
size result_type count_nonzero digitize histogram unique bincount
""".split()
REQUIRED_LINALG = "norm det inv solve slogdet cholesky eigh svd".split()


def test_required_names_exist():
    missing = [n for n in REQUIRED if not hasattr(dnp, n)]
    missing += ["linalg." + n for n in REQUIRED_LINALG if n not in dla.__all__]
    assert not missing, missing


@pytest.mark.parametrize("name", ["floor", "sign", "argmax", "argsort", "floor_divide",
                                  "heaviside", "less", "isfinite", "fix", "round"])
def test_nondifferentiable_functions_return_plain_values(name):
    f = getattr(dnp, name)
    args = (np.array([0.5, -1.5]), np.array([1.0, 1.0]))[: 2 if name in (
        "floor_divide", "heaviside", "less") else 1]

    def loss(x):
        r = f(x, *args[1:])
        assert not ds.extend.is_tracer(r)
        np.testing.assert_array_equal(r, getattr(np, name)(*args))
        return dnp.sum(x)

    ds.grad(loss)(args[0])


# ---------------------------------------------------------------- plain NumPy code
X23 = np.array([[0.3, -1.2, 0.5], [2.0, 0.7, -0.4]])
V3 = np.array([0.6, -0.8, 1.1])

# (description, function written with plain numpy, the same with dnp, analytic gradient)
PLAIN = [
    ("np.sin", lambda x: np.sum(np.sin(x)), lambda x: dnp.sum(dnp.sin(x)), np.cos(X23)),
    ("np.sum axis", lambda x: np.sum(np.sum(x, axis=0) ** 2),
     lambda x: dnp.sum(dnp.sum(x, axis=0) ** 2), 2 * np.broadcast_to(X23.sum(0), X23.shape)),
    ("np.concatenate", lambda x: np.sum(np.concatenate([x, 2 * x]) ** 2),
     lambda x: dnp.sum(dnp.concatenate([x, 2 * x]) ** 2), 10 * X23),
    ("np.einsum", lambda x: np.sum(np.einsum("ij,j->i", x, V3)),
     lambda x: dnp.sum(dnp.einsum("ij,j->i", x, V3)), np.broadcast_to(V3, X23.shape)),
    ("np.linalg.norm", lambda x: np.linalg.norm(x), lambda x: dla.norm(x),
     X23 / np.linalg.norm(X23)),
    ("x.T @ x", lambda x: np.trace(x.T @ x), lambda x: dnp.trace(dnp.transpose(x) @ x), 2 * X23),
    ("x.reshape().sum()", lambda x: np.prod(x.reshape(3, 2).sum(1)),
     lambda x: dnp.prod(dnp.sum(dnp.reshape(x, (3, 2)), 1)), None),
    ("np.max / np.mean", lambda x: np.max(x) + np.mean(x), lambda x: dnp.max(x) + dnp.mean(x),
     (X23 == X23.max()) + 1 / 6),
    ("np.where", lambda x: np.sum(np.where(x > 0, x, 0.0) ** 2),
     lambda x: dnp.sum(dnp.where(x > 0, x, 0.0) ** 2), 2 * np.maximum(X23, 0)),
    ("np.add.reduce axis 0", lambda x: np.sum(np.add.reduce(x) ** 2),
     lambda x: dnp.sum(dnp.sum(x, 0) ** 2), 2 * np.broadcast_to(X23.sum(0), X23.shape)),
    ("np.multiply.accumulate", lambda x: np.sum(np.multiply.accumulate(x)),
     lambda x: dnp.sum(dnp.cumprod(x, 0)), None),
    ("methods", lambda x: x.std() + x.prod() + x.cumsum().max() + x.clip(0, 1).sum() + x.var(0)[0],
     lambda x: (dnp.std(x) + dnp.prod(x) + dnp.max(dnp.cumsum(x)) + dnp.sum(dnp.clip(x, 0, 1))
                + dnp.var(x, 0)[0]), None),
    ("np.linalg.solve / det",
     lambda x: np.sum(np.linalg.solve(x[:, :2] + 3 * np.eye(2), x[:, 2]))
     + np.linalg.det(x[:, 1:] + np.eye(2)),
     lambda x: dnp.sum(dla.solve(x[:, :2] + 3 * np.eye(2), x[:, 2]))
     + dla.det(x[:, 1:] + np.eye(2)), None),
    ("np.stack / np.sort / np.split", lambda x: np.sum(np.sort(np.stack(np.split(x, 3, 1)), 1)[0]),
     lambda x: dnp.sum(dnp.sort(dnp.stack(dnp.split(x, 3, 1)), 1)[0]), None),
    ("x.flatten / astype", lambda x: np.sum(x.flatten() * x.astype(np.float32).ravel()),
     lambda x: dnp.sum(dnp.ravel(x) * dnp.ravel(dnp.astype(x, np.float32))), 2 * X23),
]


@pytest.mark.parametrize("what,plain,ours,expected", PLAIN, ids=[p[0] for p in PLAIN])
def test_plain_numpy_code_differentiates(what, plain, ours, expected):
    g_plain = ds.grad(plain)(X23)
    g_ours = ds.grad(ours)(X23)
    np.testing.assert_allclose(g_plain, g_ours, rtol=1e-6, atol=1e-12)
    np.testing.assert_allclose(plain(X23), ours(X23), rtol=1e-6)
    if expected is not None:
        np.testing.assert_allclose(g_plain, expected, rtol=1e-6, atol=1e-12)


def test_np_asarray_of_a_traced_value_raises():
    with pytest.raises(TypeError, match="plain NumPy array"):
        ds.grad(lambda x: np.sum(np.asarray(x)))(X23)


@pytest.mark.parametrize("call,name", [
    (lambda x: np.lib.stride_tricks.sliding_window_view(x, 2), "sliding_window_view"),
    (lambda x: np.lib.scimath.sqrt(x), "sqrt"),
])
def test_numpy_function_without_a_rule_raises_naming_it(call, name):
    with pytest.raises(TypeError, match=name):
        ds.grad(lambda x: np.sum(call(x)))(V3)


@pytest.mark.parametrize("f", [
    lambda x: dnp.sum(dnp.sin(x) * dnp.exp(x)),
    lambda x: dla.norm(x) + dnp.prod(x) + dnp.max(x),
    lambda x: dnp.sum(dnp.einsum("i,j->ij", x, x) @ x),
    lambda x: dnp.sum(dnp.cumprod(dnp.concatenate([x, x])) ** 2),
    lambda x: dnp.std(x) + dnp.sum(dnp.sort(x) * np.arange(3)),
    lambda x: dnp.sum(dla.solve(dnp.diag(x) + 3 * np.eye(3), x)),
])
def test_float32_in_float32_gradient_out(f):
    x = V3.astype(np.float32)
    g = ds.grad(f)(x)
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, ds.grad(f)(V3), rtol=2e-3, atol=1e-4)


def test_unused_input_gets_zeros():
    gx, gy = ds.grad(lambda x, y: dnp.sum(dnp.sin(x)), argnums=(0, 1))(V3, X23)
    np.testing.assert_array_equal(gy, np.zeros_like(X23))
    np.testing.assert_allclose(gx, np.cos(V3))


def test_split_pieces_are_traced_separately():
    def f(x):
        a, b, c = dnp.split(x, 3)
        return dnp.sum(a * 1.0 + b * 2.0 + c * 3.0)
    np.testing.assert_array_equal(ds.grad(f)(np.ones(6)), [1, 1, 2, 2, 3, 3])


def test_functions_match_numpy_on_plain_arrays():
    a = np.arange(6.0).reshape(2, 3)
    for ours, theirs in [(dnp.sum(a, 1, keepdims=True), np.sum(a, 1, keepdims=True)),
                         (dnp.sort(a[::-1], None), np.sort(a[::-1], None)),
                         (dnp.einsum("ij->j", a), np.einsum("ij->j", a)),
                         (dla.norm(a, "nuc"), np.linalg.norm(a, "nuc")),
                         (dnp.pad(a, 1, mode="reflect"), np.pad(a, 1, mode="reflect"))]:
        np.testing.assert_array_equal(ours, theirs)
