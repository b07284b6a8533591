"""Gradient specs of diffsci/numpy/_more.py (they join test_numpy_grads' table and coverage).

Piecewise functions (interp, median, quantile, nanmax ...) are sampled away from their
kinks: ``distinct`` values have no ties and interior query points avoid the knots.
"""

from __future__ import annotations

import numpy as np

import diffsci.numpy as dnp

from .test_numpy_grads import Spec as S
from .test_numpy_grads import away, const, distinct, normal, positive

x23, x3, d23 = normal(2, 3), normal(3), distinct(2, 3)
NAN3 = np.array([0.0, np.nan, 0.0])
KNOTS = const([0.0, 0.7, 1.5, 2.1, 3.0])


def _c(r):
    return r.standard_normal(3) + 1j * r.standard_normal(3)


SPECS = [
    # ---- autograd's list
    S("append", lambda x, y: dnp.append(x, y), (x23, x3)),
    S("append", lambda x, y: dnp.append(x, y, axis=0), (x23, normal(1, 3))),
    S("r_", lambda x, y: dnp.r_[x, 1.5, y, 0:2], (x3, normal(2))),
    S("r_", lambda x, y: dnp.r_["1,2,0", x, y], (x3, x3)),
    S("c_", lambda x, y: dnp.c_[x, y], (x3, normal(3, 2))),
    S("gradient", lambda f: dnp.gradient(f), (normal(5),)),
    S("gradient", lambda f: dnp.gradient(f, 0.5, edge_order=2), (normal(3, 4),)),
    S("gradient", lambda f, x: dnp.gradient(f, x), (normal(5),
                                                    const([0.0, 0.4, 1.1, 1.5, 2.6]))),
    S("gradient", lambda f, x: dnp.gradient(f, x, axis=1, edge_order=2),
      (normal(2, 4), const([0.0, 0.4, 1.1, 1.5]))),
    S("partition", lambda x: dnp.partition(x, 2), (distinct(6),)),
    S("partition", lambda x: dnp.partition(x, (0, 2), axis=0), (distinct(4, 2),)),
    S("rollaxis", lambda x: dnp.rollaxis(x, 2), (normal(2, 3, 4),)),
    S("rollaxis", lambda x: dnp.rollaxis(x, 0, 3), (normal(2, 3, 4),)),
    S("real_if_close", lambda z: dnp.real_if_close(z * 1 + 0j), (x3,)),
    S("real_if_close", lambda z: dnp.real_if_close(z), (_c,)),
    # ---- calculus and interpolation
    S("interp", lambda x, xp, fp: dnp.interp(x, xp, fp),
      (const([-0.5, 0.3, 1.1, 2.6, 3.5]), KNOTS, normal(5))),
    S("interp", lambda x, fp, lo: dnp.interp(x, [0.0, 1.0, 2.0], fp, left=lo),
      (const([[-1.0, 0.5], [1.7, 0.2]]), x3, const(0.3))),
    S("interp", lambda x, fp: dnp.interp(x, [0.2, 0.9, 1.7], fp, period=2.0),
      (const([-0.5, 0.5, 2.3, 4.1]), x3)),
    S("ediff1d", lambda x, e: dnp.ediff1d(x, to_end=e, to_begin=[1.0, 2.0]), (x23, x3)),
    S("cumulative_sum", lambda x: dnp.cumulative_sum(x, axis=1, include_initial=True), (x23,)),
    S("cumulative_prod", lambda x: dnp.cumulative_prod(x), (x3,)),
    S("convolve", lambda a, v: dnp.convolve(a, v), (normal(5), x3)),
    S("convolve", lambda a, v: dnp.convolve(a, v, "same"), (normal(2), normal(5))),
    S("convolve", lambda a, v: dnp.convolve(a, v, "valid"), (normal(5), _c)),
    S("correlate", lambda a, v: dnp.correlate(a, v), (normal(5), x3)),
    S("correlate", lambda a, v: dnp.correlate(a, v, "same"), (normal(2), _c)),
    S("correlate", lambda a, v: dnp.correlate(a, v, "full"), (_c, normal(4))),
    S("polyval", lambda p, x: dnp.polyval(p, x), (normal(4), x23)),
    S("polyfit", lambda x, y: dnp.polyfit(x, y, 2), (const([0.0, 0.5, 1.1, 1.9, 2.4]),
                                                     normal(5))),
    S("polyfit", lambda y, w: dnp.polyfit([0.0, 1.0, 2.0, 3.0], y, 1, w=w),
      (normal(4, 2), positive(4))),
    S("vander", lambda x: dnp.vander(x), (x3,)),
    S("vander", lambda x: dnp.vander(x, 4, increasing=True), (x3,)),
    S("polyadd", lambda a, b: dnp.polyadd(a, b), (x3, normal(5))),
    S("polysub", lambda a, b: dnp.polysub(a, b), (normal(4), normal(2))),
    S("polymul", lambda a, b: dnp.polymul(a, b), (x3, normal(2))),
    S("polyder", lambda p: dnp.polyder(p, 2), (normal(5),)),
    S("polyint", lambda p: dnp.polyint(p, 2, k=[1.0, 2.0]), (x3,)),
    S("poly", lambda z: dnp.poly(z), (normal(4),)),
    # ---- statistics
    S("cov", lambda m: dnp.cov(m), (normal(3, 5),)),
    S("cov", lambda m, y: dnp.cov(m, y, rowvar=False, bias=True), (normal(5, 2), normal(5))),
    S("cov", lambda m, w: dnp.cov(m, aweights=w, fweights=[1, 2, 1, 1]),
      (normal(2, 4), positive(4))),
    S("cov", lambda m: dnp.cov(m, ddof=0), (lambda r: _c(r)[None] * r.standard_normal((2, 1)),)),
    S("corrcoef", lambda m: dnp.corrcoef(m), (normal(3, 6),)),
    S("corrcoef", lambda x, y: dnp.corrcoef(x, y), (normal(5), normal(5))),
    S("median", lambda x: dnp.median(x), (d23,)),
    S("median", lambda x: dnp.median(x, axis=1, keepdims=True), (distinct(3, 4),)),
    S("quantile", lambda x: dnp.quantile(x, 0.3), (distinct(7),)),
    S("quantile", lambda x, q: dnp.quantile(x, q, axis=0), (distinct(5, 2), const([0.1, 0.6]))),
    S("quantile", lambda x: dnp.quantile(x, [0.2, 0.9], axis=1, method="hazen", keepdims=True),
      (distinct(2, 5),)),
    S("quantile", lambda x: dnp.quantile(x, 0.4, method="nearest"), (distinct(6),)),
    S("quantile", lambda x: dnp.quantile(x, 0.4, method="midpoint"), (distinct(6),)),
    S("percentile", lambda x, q: dnp.percentile(x, q, axis=(0, 2)),
      (distinct(2, 3, 2), const(35.0))),
    # ---- NaN-ignoring reductions
    S("nanprod", lambda x: dnp.nanprod(x + NAN3, axis=1), (x23,)),
    S("nancumsum", lambda x: dnp.nancumsum(x + NAN3, axis=1), (x23,)),
    S("nancumprod", lambda x: dnp.nancumprod(x + NAN3), (x23,)),
    S("nanmax", lambda x: dnp.nanmax(x + NAN3, axis=1), (d23,)),
    S("nanmin", lambda x: dnp.nanmin(x + NAN3), (d23,)),
    S("nanvar", lambda x: dnp.nanvar(x + NAN3, axis=1, ddof=1), (normal(2, 3),)),
    S("nanvar", lambda x: dnp.nanvar(x + NAN3, keepdims=True), (lambda r: _c(r)[None] * 1,)),
    S("nanstd", lambda x: dnp.nanstd(x + NAN3, axis=1), (normal(4, 3),)),
    S("nanmedian", lambda x: dnp.nanmedian(x + NAN3, axis=1), (distinct(2, 3),)),
    S("nanmedian", lambda x: dnp.nanmedian(x + np.array([0.0, np.nan, 0.0, 0.0])),
      (distinct(4),)),
    S("nanquantile", lambda x: dnp.nanquantile(x + NAN3, 0.7, axis=1), (distinct(2, 3),)),
    S("nanpercentile", lambda x, q: dnp.nanpercentile(x + NAN3, q), (d23, const([20.0, 75.0]))),
    # ---- shapes and constructors
    S("meshgrid", lambda x, y: dnp.meshgrid(x, y), (x3, normal(2))),
    S("meshgrid", lambda x, y, z: dnp.meshgrid(x, y, z, indexing="ij", sparse=True),
      (x3, normal(2), normal(2))),
    S("block", lambda a, b, c: dnp.block([[a, b], [c, 1.0]]),
      (normal(2, 2), normal(2, 1), normal(1, 2))),
    S("block", lambda a, b: dnp.block([a, b]), (x3, normal(2))),
    S("insert", lambda x, v: dnp.insert(x, 1, v, axis=1), (x23, normal(2))),
    S("insert", lambda x, v: dnp.insert(x, [0, 2, 2], v), (x23, x3)),
    S("delete", lambda x: dnp.delete(x, [0, 2], axis=1), (x23,)),
    S("delete", lambda x: dnp.delete(x, slice(1, 4)), (x23,)),
    S("resize", lambda x: dnp.resize(x, (3, 4)), (x23,)),
    S("trim_zeros", lambda x: dnp.trim_zeros(x * np.array([0.0, 1, 1, 0])), (normal(4),)),
    S("extract", lambda x: dnp.extract(np.array([[True, False, True], [False, True, True]]), x),
      (x23,)),
    S("sort_complex", lambda x: dnp.sort_complex(x), (distinct(4),)),
    S("unstack", lambda x: dnp.unstack(x, axis=1), (x23,)),
    S("apply_along_axis", lambda x: dnp.apply_along_axis(lambda v: dnp.sum(v ** 2), 1, x),
      (x23,)),
    S("apply_along_axis", lambda x: dnp.apply_along_axis(lambda v: v[:2] * v[2], 0, x),
      (normal(3, 2),)),
    S("piecewise", lambda x: dnp.piecewise(x, [x < 0, x > 1], [lambda v: v ** 2, dnp.sin, 0.5]),
      (const([-1.2, -0.3, 0.4, 1.7, 2.5]),)),
    S("geomspace", lambda a, b: dnp.geomspace(a, b, 5), (positive(3), positive(3))),
    S("geomspace", lambda a, b: dnp.geomspace(a, b, 4, endpoint=False, axis=1),
      (const([-2.0, -0.5]), const([-1.0, -3.0]))),
    S("logspace", lambda a, b: dnp.logspace(a, b, 4, base=2.0), (x3, const(1.5))),
    S("unwrap", lambda p: dnp.unwrap(p), (const([0.0, 3.0, 6.5, 1.0, -4.0]),)),
    S("unwrap", lambda p: dnp.unwrap(p, axis=0, period=4.0), (const([[0.0, 1.0], [3.5, -1.9]]),)),
    # ---- elementwise
    S("copysign", lambda x: dnp.copysign(x, np.array([1.0, -1.0, -0.0])), (away(3),)),
    S("ldexp", lambda x: dnp.ldexp(x, np.array([1, -2, 3])), (x3,)),
    S("frexp", lambda x: dnp.frexp(x)[0], (away(3),)),
    S("modf", lambda x: dnp.modf(x)[0], (const([0.3, -1.6, 2.2]),)),
    S("divmod", lambda x, y: dnp.divmod(x, y)[1], (const([0.5, 1.3, 2.9]), const([0.4, 0.6, 1.7]))),
    S("matvec", lambda a, v: dnp.matvec(a, v), (normal(2, 2, 3), x3)),
    S("vecmat", lambda v, a: dnp.vecmat(v, a), (_c, normal(3, 2))),
    S("polydiv", lambda u, v: dnp.polydiv(u, v), (normal(5), lambda r: r.uniform(1, 2, 2))),
    S("apply_over_axes", lambda x: dnp.apply_over_axes(dnp.sum, x, [0, 2]), (normal(2, 3, 2),)),
    S("i0", lambda x: dnp.i0(x), (x3,)),
    S("kaiser", lambda b: dnp.kaiser(6, b), (const(2.5),)),
    S("asanyarray", lambda x, y: dnp.asanyarray([x, y]), (x3, x3)),
    S("ascontiguousarray", lambda x: dnp.ascontiguousarray(x), (x23,)),
    S("asfortranarray", lambda x: dnp.asfortranarray(x), (x23,)),
    S("asarray_chkfinite", lambda x: dnp.asarray_chkfinite(x), (x23,)),
    # ---- lists of traced values (autograd's suite): every array_like argument
    S("mean", lambda x, y: dnp.mean([x, y, 2.0]), (const(0.3), const(1.2))),
    S("std", lambda x, y: dnp.std([[x, y], [y, 1.0]], axis=0), (const(0.3), const(1.2))),
    S("var", lambda x, y: dnp.var((x, y * x, 0.5)), (const(0.3), const(1.2))),
    S("sum", lambda x: dnp.sum([x, x * 2]), (x3,)),
    S("sin", lambda x: dnp.sin([x, 1.0]), (const(0.4),)),
    S("median", lambda x, y: dnp.median([x, y, 0.0]), (const(0.5), const(-1.5))),
    S("interp", lambda x, y: dnp.interp(0.5, [0.0, 1.0], [x, y]), (const(0.5), const(-1.5))),
]
