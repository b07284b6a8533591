"""Brownian motion that returns the same increment for the same interval, every time.

Two sources, one interface (:class:`AbstractBrownian`, which users subclass to supply their own
increments): ``increment(s, t)`` (or ``bm(s, t)``) is ``W(t) − W(s)``, an array of the path's
``shape`` (typically ``(batch, m)``).

* :class:`BrownianPath` stores the path on a grid (fast, O(grid) memory), optionally with the
  space-time Lévy area of each grid step (needed by SRA1).
* :class:`BrownianInterval` stores nothing but a seed: a binary tree of Brownian bridges over
  dyadic points of ``[t0, t1]``, each node's normals a pure function of ``(seed, node)``
  (counter-based hashing, ``diffsci.random.normal``). Any ``W(s, t)`` can be queried in any
  order and is identical on every query; a query costs O(depth) = O(log(T/tol)) bridge samples,
  fewer when the node cache (bounded in bytes) holds the ancestors — as it does for the
  sequential queries of a solve. No step-size hint is needed.

Between dyadic points at the finest depth (width ``tol``) a query time is filled in by a Brownian
bridge whose normal is keyed by the time itself: exact marginals, and the exact joint law as long
as no two query times share one finest leaf. ``increment(s, t)`` refuses an ``s`` and ``t`` in
one leaf (a clear error, never a wrong law), and ``sdeint`` refuses steps below ``tol``.

The default resolution ``tol = (t1 − t0)·2⁻²⁴``: an off-grid query costs one bridge of the
whole ``shape`` per tree level between the query spacing and ``tol`` (a sequential sweep of 1000
steps: ≈ 14 levels), and the bridges' normals are most of the cost — hence the ziggurat of
``diffsci.random.normal`` (≈ 4.5 ns a normal, 3.4× faster than Box–Muller). A (256, 16) sweep of
1000 off-grid steps runs at ≈ 2.4× torchsde's BrownianInterval forward and ≈ 4× in reverse
(benchmarks/bench_sde.py); a coarser ``tol`` (say 2⁻¹⁶ of the span) doubles that again.
``sdeint`` sizes the ``tol`` of the intervals it makes from its own steps.

References:
    P. Lévy's construction of Brownian motion by bridges; the virtual Brownian tree of X. Li,
    T.-K. L. Wong, R. T. Q. Chen, D. Duvenaud, "Scalable Gradients for Stochastic Differential
    Equations", AISTATS 2020, §4; P. Kidger et al., "Efficient and Accurate Gradients for Neural
    SDEs", NeurIPS 2021, §4 (the Brownian Interval).
"""

from __future__ import annotations

import abc
import copy
import math
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from diffsci.random import check_seed

from . import _kernels

__all__ = ["AbstractBrownian", "BrownianIncrements", "BrownianInterval", "BrownianPath", "checked"]

_SALT_DYADIC = 1
_SALT_ROOT = 2
_SALT_TIME = 3
_SALT_LEVY = 4
_DEFAULT_DEPTH = 24  # see the module docstring for the measured cost
_DEFAULT_CACHE_BYTES = 8 << 20  # flat adjoint memory; reverse sweeps re-bridge ≈3 % of a solve
_TIME_RTOL = 1e-12
_POINT_CACHE = 4  # points W(t) kept by exact time: a sequential sweep computes each once


def _check_shape(shape, who):
    if isinstance(shape, int):
        shape = (shape,)
    shape = tuple(int(s) for s in shape)
    if not shape or any(s < 1 for s in shape):
        raise ValueError(f"{who}: shape must be a non-empty tuple of positive ints, got {shape}")
    return shape


def _check_span(t0, t1, who):
    t0, t1 = float(t0), float(t1)
    if not (math.isfinite(t0) and math.isfinite(t1)) or not t1 > t0:
        raise ValueError(f"{who}: need finite t0 < t1, got t0={t0}, t1={t1}")
    return t0, t1


def _key(seed, index, salt):
    """A node's 64-bit key, as ``np.uint64`` (a Python int above 2**63 would not pass to numba)."""
    # Typed arguments: numba's dispatcher, once it holds an int64 compilation, converts a Python
    # int seed to int64 and overflows at 2**63 (the shard seeds of diffsci.distributed are
    # 64-bit), whatever was compiled before.
    return np.uint64(_kernels.node_key(np.uint64(seed), np.int64(index), np.uint64(salt)))


def _time_key(seed, t):
    bits = int(np.float64(t).view(np.uint64))
    return _key(seed, bits & 0x7FFFFFFFFFFFFFFF, _SALT_TIME)


class AbstractBrownian(abc.ABC):
    """A Brownian motion on ``[t0, t1]`` of a fixed ``shape``, queried by interval — the protocol
    :func:`sde.sdeint` steps on; subclass it to supply your own increments.

    A subclass sets the attributes below (in ``__init__`` or as class attributes) and overrides
    :meth:`increment` or ``__call__`` (either one: each defaults to the other, so torchsde's
    ``BaseBrownian.__call__(ta, tb)`` style works as is). ``sdeint`` checks the attributes once
    and every increment it receives (shape and finiteness, naming ``brownian``). The gradient
    methods query the steps in their own order (reverse for the adjoints, repeatedly for
    checkpointing), so a query must return the same increment every time it is asked.

    Attributes:
        t0, t1: the time span (floats, ``t0 < t1``).
        shape: the shape of one increment, ``(batch, m)`` for ``sdeint``.
        dtype: the dtype of increments returned (default float64).
        has_levy_area: whether :meth:`levy_area` is available (default False; the SRA1 and
            SRI solvers need it).

    Example:
        >>> class Table(AbstractBrownian):  # increments stored per step of a fixed grid
        ...     def __init__(self, ts, dW):
        ...         self.ts, self.dW = np.asarray(ts), np.asarray(dW)
        ...         self.t0, self.t1, self.shape = self.ts[0], self.ts[-1], self.dW.shape[1:]
        ...     def __call__(self, s, t):
        ...         i, j = np.searchsorted(self.ts, [s, t])
        ...         return self.dW[i:j].sum(axis=0)
        >>> bm = Table(np.linspace(0, 1, 5), np.full((4, 2, 1), 0.1))
        >>> bm.increment(0.25, 1.0)
        array([[0.3],
               [0.3]])
    """

    t0: float
    t1: float
    shape: tuple[int, ...]
    dtype: np.dtype = np.dtype(np.float64)
    has_levy_area: bool = False

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.increment is AbstractBrownian.increment and \
                cls.__call__ is AbstractBrownian.__call__:
            raise TypeError(
                f"{cls.__name__}: a subclass of sde.AbstractBrownian must define "
                f"increment(self, s, t) or __call__(self, s, t), returning W(t) - W(s)"
            )

    def increment(self, s: float, t: float) -> np.ndarray:
        """``W(t) − W(s)``, an array of ``shape``, the same on every call (by default
        ``self(s, t)``).

        Raises:
            ValueError: s or t is outside ``[t0, t1]`` (the built-in sources).
        """
        return self(s, t)

    def __call__(self, s: float, t: float) -> np.ndarray:
        """Same as :meth:`increment` (by default ``self.increment(s, t)``)."""
        return self.increment(s, t)

    def levy_area(self, s: float, t: float) -> np.ndarray:
        """The space-time Lévy area ``H(s, t) = (1/h)∫_s^t (W_u − W_s − (u−s)/h W(s,t)) du``.

        Raises:
            ValueError: this source does not generate it.
        """
        raise ValueError(
            f"{type(self).__name__} does not generate space-time Lévy area (needed by the "
            f"SRA1 and SRI solvers); use BrownianPath(..., levy_area=True) on the solver's "
            f"grid, or let sdeint make one"
        )


class _PointBrownian(AbstractBrownian):
    """A built-in source that computes points ``W(t) − W(t0)``; increments are differences."""

    @abc.abstractmethod
    def _point(self, t: float) -> np.ndarray:
        """``W(t) − W(t0)`` in float64 (t already checked)."""

    def _check_time(self, t, who):
        t = float(t)
        slack = _TIME_RTOL * (self.t1 - self.t0)
        if not (self.t0 - slack <= t <= self.t1 + slack):
            raise ValueError(
                f"{type(self).__name__}.{who}: time {t!r} is outside the path's span "
                f"[{self.t0!r}, {self.t1!r}]"
            )
        return min(max(t, self.t0), self.t1)

    def increment(self, s: float, t: float) -> np.ndarray:
        """``W(t) − W(s)`` (negative of ``increment(t, s)``), the same on every call.

        Raises:
            ValueError: s or t is outside ``[t0, t1]``.
        """
        s = self._check_time(s, "increment")
        t = self._check_time(t, "increment")
        return (self._point(t) - self._point(s)).astype(self.dtype, copy=False)


class BrownianInterval(_PointBrownian):
    """A seeded Brownian tree: any increment, any order, same answer, O(log) cost, bounded memory.

    Args:
        t0, t1: the time span (t0 < t1).
        shape: the shape of an increment, e.g. ``(batch, m)``.
        seed: a non-negative int; the path is a pure function of it.
        tol: the resolution: the finest dyadic spacing (default ``(t1 − t0)·2⁻²⁴``; the
            attribute ``tol`` is the spacing actually used, ≤ the one asked for); the tree depth
            is ``ceil(log2((t1 − t0)/tol))`` (at most 60). Increments over intervals inside one
            finest leaf are refused.
        dtype: float dtype of returned increments (computed in float64).
        cache_bytes: the most memory the node cache may hold (default 8 MiB; at least 4·depth
            nodes are kept, enough for the ancestors of sequential queries); eviction only
            costs recomputation, never changes values.

    Example:
        >>> bm = BrownianInterval(0.0, 1.0, (2, 3), seed=7)
        >>> a = bm.increment(0.25, 0.6); _ = bm.increment(0.0, 0.1)
        >>> bool(np.array_equal(a, bm.increment(0.25, 0.6)))
        True
    """

    def __init__(self, t0: float, t1: float, shape: int | tuple[int, ...], seed: int = 0,
                 tol: float | None = None, dtype: npt.DTypeLike = np.float64,
                 cache_bytes: int = _DEFAULT_CACHE_BYTES) -> None:
        self.t0, self.t1 = _check_span(t0, t1, "BrownianInterval")
        self.shape = _check_shape(shape, "BrownianInterval")
        self.seed = check_seed(seed, "BrownianInterval")
        span = self.t1 - self.t0
        if tol is None:
            depth = _DEFAULT_DEPTH
        else:
            if not (float(tol) > 0.0):
                raise ValueError(f"BrownianInterval: tol must be > 0, got {tol!r}")
            depth = max(1, min(60, math.ceil(math.log2(span / float(tol)))))
        self.depth = depth
        self.dtype = np.dtype(dtype)
        self._n = 1 << depth
        self._leaf = span / self._n
        self.tol = self._leaf
        self._snap = min(0.5, _TIME_RTOL * self._n)  # the time tolerance, in leaves
        self._size = int(np.prod(self.shape))
        self._max_entries = max(4 * depth, int(cache_bytes) // (8 * self._size))
        self._cache: OrderedDict[int, np.ndarray] = OrderedDict()
        self._points: dict[float, np.ndarray] = {}  # the last few points (sequential queries)
        self._zero = np.zeros(self._size)
        key = _key(self.seed, 0, _SALT_ROOT)
        self._root = _kernels.bridge(self._zero, self._zero, 0.0, math.sqrt(span), key,
                                     np.empty(self._size))

    def _walk(self, j: int, exact: bool):
        """W at dyadic point ``j`` (``exact``), or at both ends ``(W_j, W_{j+1})`` of the finest
        leaf ``[j, j+1]``: down from the root through the cached nodes, then one kernel call
        bridges the uncached levels, whose nodes join the cache (least recently used out)."""
        if exact and j == 0:
            return self._zero
        if exact and j == self._n:
            return self._root
        cache = self._cache
        lo, hi, wlo, whi = 0, self._n, self._zero, self._root
        while hi - lo > 1:
            mid = (lo + hi) >> 1
            wmid = cache.get(mid)
            if wmid is None:
                break
            cache.move_to_end(mid)
            if exact and mid == j:
                return wmid
            if j < mid:
                hi, whi = mid, wmid
            else:
                lo, wlo = mid, wmid
        else:
            return wlo, whi
        levels = (hi - lo).bit_length() - 1
        if exact:  # j − lo = odd·2^z is reached z levels above the leaves
            levels -= ((j - lo) & -(j - lo)).bit_length() - 1
        mids = np.empty((levels, self._size))  # rows join the cache: allocate only those used
        idx = np.empty(levels, dtype=np.int64)
        k = _kernels.descend(np.uint64(self.seed), np.uint64(_SALT_DYADIC), lo, hi, wlo, whi, j,
                             exact, self._leaf, mids, idx)
        for r in range(k):
            mid = int(idx[r])
            if len(cache) >= self._max_entries:
                cache.popitem(last=False)
            cache[mid] = wmid = mids[r]
            if j < mid:
                hi, whi = mid, wmid
            else:
                lo, wlo = mid, wmid
        return wmid if exact else (wlo, whi)

    def _locate(self, t):
        """``(x, j, on_dyadic)``: t in leaves, its dyadic point or leaf, and which it is."""
        x = (t - self.t0) / self._leaf
        j = min(int(round(x)), self._n)
        if abs(x - j) <= self._snap:
            # On a dyadic point up to round-off (the times of a uniform grid rarely land exactly:
            # without the snap, each such query walks to the finest depth and bridges).
            return x, j, True
        return x, min(int(math.floor(x)), self._n - 1), False

    def _point(self, t):
        points = self._points
        hit = points.get(t)
        if hit is not None:
            return hit
        x, j, on_dyadic = self._locate(t)
        if on_dyadic:
            out = self._walk(j, True).reshape(self.shape)
        else:
            frac = x - j
            wa, wb = self._walk(j, False)
            std = math.sqrt(self._leaf * frac * (1.0 - frac))
            out = _kernels.bridge(wa, wb, frac, std, _time_key(self.seed, t),
                                  np.empty(self._size)).reshape(self.shape)
        if len(points) >= _POINT_CACHE:
            del points[next(iter(points))]
        points[t] = out
        return out

    def increment(self, s: float, t: float) -> np.ndarray:
        """``W(t) − W(s)`` (negative of ``increment(t, s)``), the same on every call.

        Raises:
            ValueError: s or t is outside ``[t0, t1]``, or s ≠ t lie in one finest leaf (closer
                than ``tol``, off the dyadic points), where the joint law would not be exact.
        """
        s = self._check_time(s, "increment")
        t = self._check_time(t, "increment")
        if s != t:
            _, js, ds = self._locate(s)
            _, jt, dt = self._locate(t)
            if js == jt and not (ds or dt):
                raise ValueError(
                    f"BrownianInterval.increment: s={s!r} and t={t!r} are closer than the "
                    f"interval's resolution tol={self._leaf:.3g} (both inside one finest leaf, "
                    f"where increments would not have the exact joint law); make the "
                    f"BrownianInterval with a smaller tol"
                )
        return (self._point(t) - self._point(s)).astype(self.dtype, copy=False)


@dataclass(eq=False)
class BrownianPath(_PointBrownian):
    """A Brownian path stored on a time grid (and bridged, consistently, between grid points).

    Args:
        ts: the grid, a strictly increasing 1-D array (its ends are the span).
        shape: the shape of an increment, e.g. ``(batch, m)``.
        seed: seed of ``numpy.random.default_rng``.
        levy_area: also draw the space-time Lévy area of each grid step, ``H_k ~ N(0, h_k/12)``
            independent of the increment (for SRA1).
        dtype: float dtype of returned increments.

    Example:
        >>> bm = BrownianPath(np.linspace(0, 1, 11), (4, 1), seed=0)
        >>> bm.increment(0.0, 1.0).shape
        (4, 1)
    """

    ts: np.ndarray
    shape: tuple[int, ...]
    seed: int = 0
    levy_area_: bool = False
    dtype: np.dtype = field(default=np.dtype(np.float64))

    def __init__(self, ts, shape, seed: int = 0, levy_area: bool = False, dtype=np.float64):
        ts = np.asarray(ts, dtype=np.float64)
        if ts.ndim != 1 or ts.size < 2 or not np.all(np.isfinite(ts)) or np.any(np.diff(ts) <= 0):
            raise ValueError(
                f"BrownianPath: ts must be a strictly increasing finite 1-D array of >= 2 times, "
                f"got shape {ts.shape}"
            )
        self.ts = ts
        self.t0, self.t1 = float(ts[0]), float(ts[-1])
        self.shape = _check_shape(shape, "BrownianPath")
        self.seed = int(seed)
        self.dtype = np.dtype(dtype)
        self.has_levy_area = bool(levy_area)
        rng = np.random.default_rng(self.seed)
        h = np.diff(ts).reshape((-1,) + (1,) * len(self.shape))
        dW = rng.standard_normal((ts.size - 1, *self.shape)) * np.sqrt(h)
        self._W = np.concatenate([np.zeros((1, *self.shape)), np.cumsum(dW, axis=0)])
        self._H = (rng.standard_normal(dW.shape) * np.sqrt(h / 12.0)) if levy_area else None
        self._tol = _TIME_RTOL * (self.t1 - self.t0)

    def _index(self, t):
        k = int(np.searchsorted(self.ts, t))
        if k < self.ts.size and abs(self.ts[k] - t) <= self._tol:
            return k, True
        if k > 0 and abs(self.ts[k - 1] - t) <= self._tol:
            return k - 1, True
        return k, False

    def _point(self, t):
        k, on_grid = self._index(t)
        if on_grid:
            return self._W[k]
        a, b = self.ts[k - 1], self.ts[k]
        frac = (t - a) / (b - a)
        std = math.sqrt((b - a) * frac * (1.0 - frac))
        out = _kernels.bridge(self._W[k - 1].ravel(), self._W[k].ravel(), frac, std,
                              _time_key(self.seed, t), np.empty(self._W[0].size))
        return out.reshape(self.shape)

    def coarsen(self, stride: int) -> BrownianPath:
        """The same path on every ``stride``-th grid point, with the merged steps' Lévy areas.

        The coarse step ``[a, b]`` (fine steps ``i`` with ``h_i``, ``ΔW_i``, ``H_i``) gets
        ``I₁₀ = Σᵢ ((W(aᵢ) − W(a)) hᵢ + hᵢ(ΔWᵢ/2 + Hᵢ))`` and ``H = I₁₀/(b − a) − ΔW/2`` — the
        exact space-time Lévy area of the stored path, so solvers run on several step sizes see
        one Brownian path (strong-order measurements of SRA1/SRI).

        Args:
            stride: a positive int dividing the number of grid steps.

        Raises:
            ValueError: stride not a positive divisor of ``len(ts) − 1``.

        Example:
            >>> bm = BrownianPath(np.linspace(0, 1, 9), (2, 1), seed=0, levy_area=True)
            >>> bm.coarsen(4).ts
            array([0. , 0.5, 1. ])
        """
        n = self.ts.size - 1
        if isinstance(stride, bool) or not isinstance(stride, int | np.integer) or stride < 1 \
                or n % stride:
            raise ValueError(f"BrownianPath.coarsen: stride must be a positive int dividing the "
                             f"{n} grid steps, got {stride!r}")
        out = copy.copy(self)
        out.ts = self.ts[::stride]
        out._W = self._W[::stride]
        if self._H is not None:
            h = np.diff(self.ts).reshape((-1,) + (1,) * len(self.shape))
            dW = np.diff(self._W, axis=0)
            start = np.repeat(self._W[:-1:stride], stride, axis=0)
            i10 = (self._W[:-1] - start) * h + h * (0.5 * dW + self._H)
            i10 = i10.reshape((n // stride, stride, *self.shape)).sum(axis=1)
            hc = np.diff(out.ts).reshape(h[::stride].shape)
            out._H = i10 / hc - 0.5 * np.diff(out._W, axis=0)
        return out

    def levy_area(self, s: float, t: float) -> np.ndarray:
        """The stored space-time Lévy area of the grid step ``[s, t]`` (see the base class).

        Raises:
            ValueError: no Lévy area was drawn, or ``[s, t]`` is not one grid step.
        """
        if self._H is None:
            return super().levy_area(s, t)
        i, ok_s = self._index(float(s))
        j, ok_t = self._index(float(t))
        if not (ok_s and ok_t and j == i + 1):
            raise ValueError(
                f"BrownianPath.levy_area: [{s!r}, {t!r}] is not one step of the stored grid"
            )
        return self._H[i].astype(self.dtype, copy=False)


class BrownianIncrements(AbstractBrownian):
    """A Brownian path given by its increments on a grid: ``dW[k] = W(ts[k+1]) − W(ts[k])``.

    The increments are an array the caller draws (for a standard Brownian motion,
    ``rng.standard_normal((len(ts) - 1, *shape)) * np.sqrt(np.diff(ts))[:, None, None]``), and
    may be traced values: differentiated (the gradient of a solve with respect to its noise,
    ``adjoint='backprop'``; the other gradient methods refuse a traced noise as they refuse a
    traced closed-over value), or inputs of a :func:`diffsci.jit` program, so that a compiled
    training step takes fresh noise at every call instead of one path fixed at trace time.
    Queries must fall on the grid (``sdeint`` steps on it when its step times are points of
    ``ts``: save times on a uniform ``ts`` of spacing ``dt``, solved with that ``dt``; an
    off-grid step is a ValueError naming the time); an increment over several grid steps is
    their sum.

    Args:
        ts: the grid, a strictly increasing finite 1-D array (plain: it is not differentiated).
        dW: the increments, shape ``(len(ts) - 1, *shape)``, float, finite (checked at every
            call of a compiled program, as a guard).
        levy_area: optionally the space-time Lévy area of each step (the shape of ``dW``),
            for the SRA1 and SRI solvers.

    Raises:
        ValueError/TypeError: a bad grid, increments of the wrong shape or dtype, non-finite
            increments (naming the argument).

    Example:
        >>> ts = np.linspace(0.0, 1.0, 5)
        >>> bm = BrownianIncrements(ts, np.full((4, 2, 1), 0.1))
        >>> bm.increment(0.25, 1.0)
        array([[0.3],
               [0.3]])
    """

    def __init__(self, ts: npt.ArrayLike, dW: Any, levy_area: Any = None) -> None:
        from diffsci.extend import getval, is_tracer, observed

        from ._validate import _all_finite

        who = "BrownianIncrements"
        if is_tracer(ts):
            raise TypeError(f"{who}: ts is not differentiable (the grid), got a traced value; "
                            f"pass a plain array")
        ts = np.asarray(ts, dtype=np.float64)
        if ts.ndim != 1 or ts.size < 2 or not np.all(np.isfinite(ts)) or np.any(np.diff(ts) <= 0):
            raise ValueError(f"{who}: ts must be a strictly increasing finite 1-D array of >= 2 "
                             f"times, got shape {ts.shape}")
        arrays = {"dW": dW} if levy_area is None else {"dW": dW, "levy_area": levy_area}
        for name, x in arrays.items():
            v = getval(x)
            if not isinstance(v, np.ndarray) or v.dtype.kind != "f":
                kind = f" of dtype {v.dtype}" if hasattr(v, "dtype") else ""
                raise TypeError(f"{who}: {name} must be a float array, got "
                                f"{type(v).__name__}{kind}")
            if v.ndim < 2 or v.shape[0] != ts.size - 1:
                raise ValueError(f"{who}: {name} must have shape (len(ts) - 1, *shape) = "
                                 f"({ts.size - 1}, ...) with shape (batch, m), got {v.shape}")
            if not observed(_all_finite, x):  # a guard under diffsci.jit: checked every call
                raise ValueError(f"{who}: {name} has non-finite entries (NaN or inf)")
        if levy_area is not None and np.shape(getval(levy_area)) != np.shape(getval(dW)):
            raise ValueError(f"{who}: levy_area must have dW's shape {np.shape(getval(dW))}, "
                             f"got {np.shape(getval(levy_area))}")
        self.ts, self.dW, self._H = ts, dW, levy_area
        self.t0, self.t1 = float(ts[0]), float(ts[-1])
        self.shape = tuple(np.shape(getval(dW))[1:])
        self.dtype = getval(dW).dtype
        self.has_levy_area = levy_area is not None
        self._tol = _TIME_RTOL * (self.t1 - self.t0)

    def _index(self, t, who):
        t = float(t)
        k = int(np.searchsorted(self.ts, t))
        for j in (k, k - 1):
            if 0 <= j < self.ts.size and abs(self.ts[j] - t) <= self._tol:
                return j
        raise ValueError(f"BrownianIncrements.{who}: time {t!r} is not a point of the grid "
                         f"ts (the increments are known on its steps only); make ts the "
                         f"solver's step times")

    def increment(self, s: float, t: float) -> Any:
        """``W(t) − W(s)`` for grid points ``s`` and ``t``: the sum of the steps between."""
        i, j = self._index(s, "increment"), self._index(t, "increment")
        if i == j:
            return np.zeros(self.shape, self.dtype)
        lo, hi = min(i, j), max(i, j)
        out = self.dW[lo] if hi == lo + 1 else np.sum(self.dW[lo:hi], axis=0)
        return out if j > i else -out

    def levy_area(self, s: float, t: float) -> Any:
        """The given space-time Lévy area of the grid step ``[s, t]``."""
        if self._H is None:
            return super().levy_area(s, t)
        i, j = self._index(s, "levy_area"), self._index(t, "levy_area")
        if j != i + 1:
            raise ValueError(f"BrownianIncrements.levy_area: [{s!r}, {t!r}] is not one step of "
                             f"the grid")
        return self._H[i]


class _Checked(AbstractBrownian):
    """A user's Brownian motion as sdeint steps on it: every increment (and Lévy area) is made
    an array, checked for shape and finiteness, and cast to the source's dtype."""

    def __init__(self, inner, shape):
        self.inner, self.shape = inner, shape
        self.t0, self.t1 = inner.t0, inner.t1
        self.dtype, self.has_levy_area = inner.dtype, inner.has_levy_area

    def _check(self, v, what, s, t):
        name = f"brownian.{what}({float(s)!r}, {float(t)!r}) ({type(self.inner).__name__})"
        try:
            arr = np.asarray(v, dtype=self.dtype)
        except (TypeError, ValueError) as e:
            raise TypeError(f"sdeint: {name} returned {type(v).__name__}, not an array of "
                            f"shape {self.shape} ({e})") from None
        if arr.shape != self.shape:
            raise ValueError(f"sdeint: {name} returned shape {arr.shape}, expected the "
                             f"brownian's shape {self.shape} (batch, m)")
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"sdeint: {name} returned non-finite values")
        return arr

    def increment(self, s, t):
        return self._check(self.inner.increment(s, t), "increment", s, t)

    def levy_area(self, s: float, t: float) -> np.ndarray:
        return self._check(self.inner.levy_area(s, t), "levy_area", s, t)


def checked(brownian, who="sdeint"):
    """Validate a Brownian motion's attributes (naming ``who`` and the type) and return what
    to step on: a built-in source as is, a user's subclass wrapped in checks of every
    increment. Raises TypeError (not an AbstractBrownian, attributes missing or of the wrong
    kind) or ValueError (a bad span)."""
    kind = type(brownian).__name__
    if not isinstance(brownian, AbstractBrownian):
        raise TypeError(f"{who}: brownian must be an sde.AbstractBrownian (BrownianInterval, "
                        f"BrownianPath, or a subclass of your own), got {kind}")
    for attr in ("t0", "t1", "shape"):
        if not hasattr(brownian, attr):
            raise TypeError(f"{who}: brownian ({kind}) has no attribute {attr!r}; a subclass "
                            f"of sde.AbstractBrownian sets t0, t1 and shape")
    try:
        t0, t1 = float(brownian.t0), float(brownian.t1)
        shape = tuple(int(n) for n in brownian.shape)
    except (TypeError, ValueError):
        raise TypeError(f"{who}: brownian ({kind}) needs numbers t0, t1 and a tuple of ints "
                        f"shape, got t0={brownian.t0!r}, t1={brownian.t1!r}, "
                        f"shape={brownian.shape!r}") from None
    if not (math.isfinite(t0) and math.isfinite(t1) and t0 < t1):
        raise ValueError(f"{who}: brownian ({kind}) needs finite t0 < t1, got t0={t0}, t1={t1}")
    if isinstance(brownian, _PointBrownian | BrownianIncrements):
        return brownian  # checked where made (BrownianIncrements: may hold traced increments)
    return _Checked(brownian, shape)
