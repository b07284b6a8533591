"""diffsci ⇄ JAX: :func:`to_jax` and :func:`from_jax`.

Imported only when one of them is first used (``diffsci.interop`` is lazy).

Conventions: JAX's complex cotangent is the conjugate of diffsci's.  For a real loss L of
z = x + iy, ``jax.grad`` gives ∂L/∂x − i·∂L/∂y and diffsci ∂L/∂x + i·∂L/∂y; both are the
same linear functional, paired with a tangent as Re(c·ż) in JAX and Re(conj(c)·ż) in
diffsci.  So every complex cotangent is conjugated when it crosses (output cotangents on the
way in, input cotangents on the way out); real ones and all tangents (JVPs carry no
conjugate on either side) cross unchanged.  The README's "Gradients: conventions and
validity" states the same difference.

``jax.custom_vjp`` and ``jax.custom_jvp`` cannot be combined on one function, and JAX cannot
transpose a ``pure_callback``; so ``mode="rev"`` (the default: ``jax.grad``, ``jax.vjp``,
``jax.jacrev``) and ``mode="fwd"`` (``jax.jvp``, ``jax.jacfwd``) each give one mode, to any
order, through the same construction: the rule of a bridged function is the bridged
function of diffsci's pullback (or JVP).  ``mode="both"`` binds one JAX primitive instead,
whose JVP rule is a bridged diffsci JVP and whose transpose rule (of that JVP, linear in
the tangents) is the bridged diffsci pullback, so every mix of the two works:
``jax.hessian`` (jacfwd of jacrev), ``jvp`` of ``grad``, ``jacrev`` of ``jacfwd``.
"""

from __future__ import annotations

import collections
import functools
import itertools

import jax
import jax.extend as jex
import jax.numpy as jnp
import numpy as np
from jax.interpreters import ad, batching, mlir

from .._api import _Traced
from .._core import Dual, Tracer, getval
from .._forward import jvp as ds_jvp
from .._tree import tree_flatten as ds_flatten
from .._tree import tree_unflatten as ds_unflatten
from ._prim import BridgedPrim

__all__ = ["to_jax", "from_jax"]

_VMAP_METHODS = ("sequential", "sequential_unrolled", "expand_dims", "broadcast_all")


def _diff(dtype):
    return np.dtype(dtype).kind in "fc"


def _conj_if_complex(a):
    return np.conj(a) if np.result_type(getval(a)).kind == "c" else a


def _describe(x):
    dt = getattr(x, "dtype", None)
    if dt is not None:
        return f"a {type(x).__name__} of shape {np.shape(x)} and dtype {dt}"
    return f"a {type(x).__name__}"


# ---------------------------------------------------------------------------
# diffsci -> JAX
# ---------------------------------------------------------------------------
def _jvp_fn(fn, din, dout, n):
    """``(*xs, *ṫ) -> ẏ``: diffsci's JVP of ``fn`` in its float inputs ``din`` (the other
    inputs held), restricted to its float outputs ``dout``."""
    def jvp_fn(*args):
        xs, ts = list(args[:n]), args[n:]

        def part(*d):
            full = list(xs)
            for k, v in zip(din, d):
                full[k] = v
            return fn(*full)

        _, touts = ds_jvp(part, tuple(xs[k] for k in din), tuple(ts))
        return tuple(touts[j] for j in dout)
    return jvp_fn


class _Node:
    """A diffsci function of flat arrays ``fn(*xs) -> tuple of arrays`` as one JAX function.

    ``in_sds`` / ``out_sds``: the ``jax.ShapeDtypeStruct`` of every input / output.  The
    JAX rule of the node is another node (``_vjp_node`` / ``_jvp_node``), built on first
    use, so higher orders recurse."""

    def __init__(self, fn, name, in_sds, out_sds, mode, vmap_method, order=1):
        self.fn, self.name, self.mode, self.vmap_method = fn, name, mode, vmap_method
        self.in_sds, self.out_sds, self.order = tuple(in_sds), tuple(out_sds), order
        self.din = [k for k, s in enumerate(self.in_sds) if _diff(s.dtype)]
        self.dout = [j for j, s in enumerate(self.out_sds) if _diff(s.dtype)]
        self._rule = self._keep = None
        if mode == "rev":
            call = jax.custom_vjp(self._callback)
            call.defvjp(self._vjp_fwd, self._vjp_bwd)
        else:
            call = jax.custom_jvp(self._callback)
            call.defjvp(self._jvp_rule)
        self.call = call

    # -- the host side -----------------------------------------------------
    def _host(self, *xs):
        outs = self.fn(*(np.asarray(x) for x in xs))
        return tuple(_fit(o, s, self, j) for j, (o, s) in enumerate(zip(outs, self.out_sds)))

    def _callback(self, *xs):
        return jax.pure_callback(self._host, self.out_sds, *xs, vmap_method=self.vmap_method)

    # -- reverse mode --------------------------------------------------------
    # The forward callback of a differentiated call keeps diffsci's pullback on the host,
    # with a copy of its inputs, and the backward callback (the VJP node's host function)
    # uses it when it receives the same inputs: f runs once per jax.grad.  The store is a
    # small LRU (``_KEEP`` pullbacks, the newest); inputs not found there (evicted, or an
    # unusual schedule) mean recomputing the pullback, so results never depend on it.
    def _vjp_fwd(self, *xs):
        if self._keep is None:
            # differentiable itself (grad of grad differentiates this fwd): its derivative
            # is the node's; its own fwd calls it again, which reaches the callback once no
            # outer differentiation is left
            keep = jax.custom_vjp(lambda *xs: jax.pure_callback(
                self._host_keep, self.out_sds, *xs, vmap_method=self.vmap_method))
            keep.defvjp(lambda *xs: (keep(*xs), xs), self._vjp_bwd)
            self._keep = keep
        try:
            return self._keep(*xs), xs
        except TypeError as e:
            if "forward-mode" not in str(e):
                raise
            raise TypeError(_FWD_OVER_REV.format(name=self.name)) from e

    def _host_keep(self, *xs):
        xs = [np.array(x) for x in xs]  # copies: JAX may reuse the buffers afterwards
        back = _Pull(self.fn, self.din, xs)
        _STORE[id(self), next(_SERIAL)] = (xs, back)
        while len(_STORE) > _KEEP:
            _STORE.popitem(last=False)
        return tuple(_fit(o, s, self, j) for j, (o, s) in enumerate(zip(back.outputs(),
                                                                        self.out_sds)))

    def _vjp_bwd(self, xs, gs):
        if self._rule is None:
            self._rule = self._make_vjp()
        gd = [gs[j] for j in self.dout]
        cts = iter(self._rule.call(*xs, *gd))
        return tuple(next(cts) if _diff(s.dtype) else np.zeros(s.shape, jax.dtypes.float0)
                     for s in self.in_sds)

    def _make_vjp(self):
        fn, din, dout, in_sds, out_sds = self.fn, self.din, self.dout, self.in_sds, self.out_sds
        n = len(in_sds)

        owner = id(self)

        def vjp_fn(*args):
            xs = args[:n]
            back = _kept(owner, xs)
            if back is None:  # not kept (or traced by an outer diffsci level): recompute
                back = _Pull(fn, din, xs)
            return back(args[n:], dout)

        ins = in_sds + tuple(out_sds[j] for j in dout)
        return _Node(vjp_fn, self.name, ins, tuple(in_sds[k] for k in din), "rev",
                     self.vmap_method, self.order + 1)

    # -- forward mode --------------------------------------------------------
    def _jvp_rule(self, primals, tangents):
        # The primal by its own call: under jax.jacfwd (vmap over tangents only) it must
        # stay unbatched, so it cannot come out of the tangents' callback.
        if self._rule is None:
            self._rule = self._make_jvp()
        td = [tangents[k] for k in self.din]
        tout = iter(self._rule.call(*primals, *td))
        touts = tuple(next(tout) if _diff(s.dtype) else np.zeros(s.shape, jax.dtypes.float0)
                      for s in self.out_sds)
        return tuple(self.call(*primals)), touts

    def _make_jvp(self):
        fn, din, dout, in_sds, out_sds = self.fn, self.din, self.dout, self.in_sds, self.out_sds
        n = len(in_sds)

        jvp_fn = _jvp_fn(fn, din, dout, n)
        ins = in_sds + tuple(in_sds[k] for k in din)
        return _Node(jvp_fn, self.name, ins, tuple(out_sds[j] for j in dout), "fwd",
                     self.vmap_method, self.order + 1)


_FWD_OVER_REV = (
    "to_jax({name}) was made with mode='rev' (a jax.custom_vjp), and JAX cannot take a "
    "forward-mode derivative (jvp, jacfwd, jax.hessian = jacfwd of jacrev) of a custom_vjp "
    "function. Use jax.jacrev(jax.jacrev(f)) for the Hessian, or make the function with "
    "to_jax(..., mode='both'), which supports every combination of forward and reverse mode")

_STORE = collections.OrderedDict()  # (node id, serial) -> (inputs, diffsci back), newest last
_SERIAL = itertools.count()
_KEEP = 4


def _kept(owner, xs):
    """The kept pullback of node ``owner`` at inputs bitwise equal to ``xs`` (plain
    arrays), or None."""
    if not _STORE or any(type(x) is not np.ndarray for x in xs):
        return None
    for (oid, _), (kx, back) in reversed(_STORE.items()):
        if oid == owner and all(a.shape == b.shape and a.dtype == b.dtype and
                                a.tobytes() == b.tobytes() for a, b in zip(kx, xs)):
            return back
    return None


class _Pull:
    """diffsci's pullback of ``fn`` with respect to its float/complex inputs ``din`` only,
    on the internal traced call (the public ``pullback``'s pytree and shape checks are not
    needed for these flat, declared-shape calls).  The tape is freed with the object."""

    __slots__ = ("traced",)

    def __init__(self, fn, din, xs):
        self.traced = _Traced(fn, list(xs), {}, tuple(din), "to_jax")

    def __del__(self):
        self.traced.release()

    def outputs(self):
        t = self.traced
        return [o._value if t.owns(o) else o for o in t.out]

    def __call__(self, gs, dout):
        """Input cotangents of ``din`` (JAX's convention) from the cotangents ``gs`` (JAX's)
        of the float/complex outputs ``dout``."""
        t, seeds = self.traced, {}
        for j, g in zip(dout, gs):
            o = t.out[j]
            if t.owns(o):
                if not isinstance(g, (np.ndarray, Tracer, Dual)):
                    g = np.asarray(g)
                b = _conj_if_complex(g)  # JAX's cotangent -> diffsci's
                i = o._idx
                seeds[i] = b if i not in seeds else seeds[i] + b
        return tuple(_conj_if_complex(c) for c in t.backward(seeds))


def _fit(o, s, node, j):
    """An output leaf of the host function as the declared shape and (canonical) dtype."""
    v = getval(o)
    if not isinstance(v, (np.ndarray, np.generic, int, float, complex, bool)):
        raise TypeError(f"to_jax({node.name}): output leaf {j} is {_describe(v)}; a bridged "
                        f"function must return arrays or numbers (or pytrees of them)")
    a = np.asarray(v)
    shape = tuple(s.shape)
    batched = node.vmap_method in ("expand_dims", "broadcast_all") and a.ndim > len(shape)
    if a.shape != shape and not (batched and a.shape[a.ndim - len(shape):] == shape):
        raise ValueError(
            f"to_jax({node.name}): output leaf {j}"
            f"{'' if node.order == 1 else f' of the order-{node.order} rule'} has shape "
            f"{a.shape}, but {tuple(s.shape)} was declared (out_shape=) or inferred; declare "
            f"the right out_shape, or use vmap_method='sequential' if f has no batch axis")
    if a.dtype.kind == "c" and np.dtype(s.dtype).kind != "c":
        raise TypeError(f"to_jax({node.name}): output leaf {j} is complex ({a.dtype}), but "
                        f"{s.dtype} was declared (out_shape=)")
    return a.astype(s.dtype, copy=False)


def _sds(x):
    return jax.ShapeDtypeStruct(np.shape(x), jax.dtypes.canonicalize_dtype(np.result_type(x)))


def to_jax(f, *, out_shape=None, mode="rev", vmap_method="sequential", name=None):
    """``f`` as a JAX function: differentiable, and usable under ``jax.jit`` and ``jax.vmap``.

    The call is a ``jax.pure_callback`` running ``f`` on NumPy arrays; with ``mode="rev"``
    it carries a ``jax.custom_vjp`` whose backward is a second callback running diffsci's
    pullback (itself bridged the same way, so ``jax.grad`` of ``jax.grad`` works where
    diffsci has second derivatives); with ``mode="fwd"`` a ``jax.custom_jvp`` whose rule
    runs ``diffsci.jvp``.  Complex cotangents are conjugated across (JAX's convention is the
    conjugate of diffsci's); tangents cross unchanged.

    Args:
        f: a diffsci-differentiable function of arrays / pytrees of arrays (JAX pytrees:
            tuples, lists, dicts and registered nodes).  Integer leaves are passed through
            and get no cotangent (``float0``, as JAX gives integer inputs).
        out_shape: the output pytree with ``jax.ShapeDtypeStruct`` (or anything with
            ``shape`` and ``dtype``) at its leaves.  Default: inferred by calling ``f``
            once per input signature (shapes, dtypes, structure), on the call's values
            when they are concrete, else on zeros of the input shapes; call it once outside
            ``jax.jit``/``jax.grad`` (or declare ``out_shape``) when ``f`` cannot run on
            zeros.  Float64 results become float32 unless ``jax_enable_x64`` is set, as
            JAX's own arrays do.
        mode: ``"rev"`` (default) or ``"fwd"``: which derivative JAX can take; ``"both"``:
            forward and reverse mode in any combination (``jax.hessian``).  Under
            ``jax.grad``, ``"rev"`` runs ``f`` once (its forward keeps diffsci's pullback for
            the backward) and ``"both"`` twice (the value, then the pullback in the
            transpose); under ``jax.vmap``, ``"both"`` with ``vmap_method="sequential"``
            maps with ``jax.lax.map``.
        vmap_method: how ``jax.vmap`` calls ``f`` (``jax.pure_callback``'s argument):
            ``"sequential"`` (default: one call per batch element); ``"broadcast_all"``
            or ``"expand_dims"`` when ``f`` and its derivatives take a leading batch axis.
        name: the name errors use (default ``f.__name__``).

    Returns:
        A JAX-traceable function with ``f``'s signature.

    Raises:
        ValueError: an unknown ``mode`` or ``vmap_method``; an output whose shape differs
            from the declared one; inference failing on zeros.
        TypeError: an output leaf that is not an array or a number; a complex output
            declared real; an input leaf that is not an array; ``jax.hessian`` (or any
            forward mode over reverse mode) of a ``mode="rev"`` function, naming
            ``jax.jacrev(jax.jacrev(f))`` and ``mode="both"``.

    Example:
        >>> import jax, jax.numpy as jnp
        >>> s = to_jax(lambda x: np.sum(np.sin(x) ** 2))
        >>> bool(abs(jax.grad(s)(jnp.array([0.5]))[0] - np.sin(1.0)) < 1e-6)  # float32 or 64
        True
        >>> h = jax.hessian(to_jax(lambda x: np.sum(np.sin(x) ** 2), mode="both"))
        >>> bool(abs(h(jnp.array([0.5]))[0, 0] - 2 * np.cos(1.0)) < 1e-5)
        True
    """
    fname = name or getattr(f, "__name__", type(f).__name__)
    who = f"to_jax({fname})"
    if mode not in ("rev", "fwd", "both"):
        raise ValueError(f"{who}: mode must be 'rev', 'fwd' or 'both', got {mode!r}")
    if vmap_method not in _VMAP_METHODS:
        raise ValueError(f"{who}: vmap_method must be one of {_VMAP_METHODS}, got "
                         f"{vmap_method!r}")
    declared = None
    if out_shape is not None:
        leaves, dtree = jax.tree_util.tree_flatten(out_shape)
        for k, s in enumerate(leaves):
            if not (hasattr(s, "shape") and hasattr(s, "dtype")):
                raise TypeError(f"{who}: out_shape leaf {k} is {_describe(s)}; expected a "
                                f"jax.ShapeDtypeStruct (or anything with shape and dtype)")
        declared = (dtree, tuple(jax.ShapeDtypeStruct(tuple(s.shape),
                                                      jax.dtypes.canonicalize_dtype(s.dtype))
                                 for s in leaves))
    cache = {}

    @functools.wraps(f)
    def wrapped(*args):
        leaves, tree = jax.tree_util.tree_flatten(args)
        for k, x in enumerate(leaves):
            if not hasattr(x, "shape") and not isinstance(x, (int, float, complex, bool)):
                raise TypeError(f"{who}: argument leaf {k} is {_describe(x)}; to_jax passes "
                                f"arrays and numbers (close over other values)")
        leaves = [jnp.asarray(x) for x in leaves]
        key = (tree, tuple((x.shape, x.dtype) for x in leaves))
        hit = cache.get(key)
        if hit is None:
            in_sds = tuple(jax.ShapeDtypeStruct(x.shape, x.dtype) for x in leaves)

            def fn(*xs):
                out = f(*jax.tree_util.tree_unflatten(tree, list(xs)))
                return tuple(jax.tree_util.tree_leaves(out))  # JAX's leaf order (sorted keys)

            if declared is not None:
                otree, out_sds = declared
            else:
                otree, out_sds = _infer(f, tree, leaves, who)
            node = (_PNode(fn, fname, in_sds, out_sds, vmap_method) if mode == "both" else
                    _Node(fn, fname, in_sds, out_sds, mode, vmap_method))
            hit = cache[key] = (node, otree)
        node, otree = hit
        return jax.tree_util.tree_unflatten(otree, list(node.call(*leaves)))

    return wrapped


def _infer(f, tree, leaves, who):
    concrete = not any(isinstance(x, jax.core.Tracer) for x in leaves)
    vals = ([np.asarray(x) for x in leaves] if concrete
            else [np.zeros(x.shape, x.dtype) for x in leaves])
    try:
        out = f(*jax.tree_util.tree_unflatten(tree, vals))
    except Exception as e:
        if concrete:
            raise
        raise ValueError(
            f"{who}: inferring the output shapes called f on zeros of the input shapes (the "
            f"call is traced by JAX) and it failed ({type(e).__name__}: {e}); declare "
            f"out_shape=, or call the function once on concrete arrays first") from e
    ol, otree = jax.tree_util.tree_flatten(out)
    for j, o in enumerate(ol):
        if not isinstance(o, (np.ndarray, np.generic, int, float, complex, bool)):
            raise TypeError(f"{who}: output leaf {j} is {_describe(o)}; a bridged function "
                            f"must return arrays or numbers (or pytrees of them)")
    return otree, tuple(_sds(o) for o in ol)


# ---------------------------------------------------------------------------
# mode="both": one JAX primitive for every bridged function and its derivatives
# ---------------------------------------------------------------------------
# JAX cannot put a custom_jvp and a custom_vjp on one function, so neither gives
# jax.hessian (jacfwd over jacrev): the forward level would have to differentiate the
# reverse level's custom_vjp.  A primitive can carry both rules.  Every bridged function g
# (``fn(*a) -> outputs``) is bound as ``_bridge_p`` with its _PNode as parameter:
#   JVP rule:        g(a), J_g(a, ȧ)            J_g = g.jvp_node(): (a, ȧ) -> ẏ
#   transpose rule:  for J_g, in ȧ:  T_g(a, ȳ)  T_g = g.vjp_node(): (a, ȳ) -> ā
#                    for T_g, in ȳ:  J_g(a, c)
# J_g is linear in ȧ and T_g in ȳ, and T_g is J_g's transpose (JAX's cotangents are plain
# transposes: the complex ones are diffsci's conjugated, as in mode="rev").  J_g and T_g are
# _PNodes themselves, so every composition of jvp, linearize and transpose — grad, jacfwd,
# jacrev, hessian, any order — is a chain of bridged diffsci calls.
class _PNode:
    """A diffsci function of flat arrays as one binding of ``_bridge_p``.

    ``linear``: ``None``, or ``(n, transpose)`` when the function is linear in its
    arguments from position ``n`` on, ``transpose()`` giving the node of its transpose in
    those arguments (the other arguments first)."""

    def __init__(self, fn, name, in_sds, out_sds, vmap_method, order=1, linear=None):
        self.fn, self.name, self.vmap_method, self.order = fn, name, vmap_method, order
        self.in_sds, self.out_sds, self.linear = tuple(in_sds), tuple(out_sds), linear
        self.din = [k for k, s in enumerate(self.in_sds) if _diff(s.dtype)]
        self.dout = [j for j, s in enumerate(self.out_sds) if _diff(s.dtype)]
        self.avals = tuple(jax.core.ShapedArray(s.shape, s.dtype) for s in self.out_sds)
        self._jvp = self._vjp = None
        self._batched = {}

    def call(self, *xs):
        return _bridge_p.bind(*xs, node=self)

    def host(self, *xs):
        outs = self.fn(*(np.asarray(x) for x in xs))
        return tuple(_fit(o, s, self, j) for j, (o, s) in enumerate(zip(outs, self.out_sds)))

    def jvp_node(self):
        """J(a, ȧ of the float inputs) -> ẏ of the float outputs, by diffsci.jvp."""
        if self._jvp is None:
            fn, din, dout, n = self.fn, self.din, self.dout, len(self.in_sds)

            self._jvp = _PNode(_jvp_fn(fn, din, dout, n), self.name,
                               self.in_sds + tuple(self.in_sds[k] for k in din),
                               tuple(self.out_sds[j] for j in dout), self.vmap_method,
                               self.order + 1, linear=(n, self.vjp_node))
        return self._jvp

    def vjp_node(self):
        """T(a, ȳ of the float outputs) -> ā of the float inputs, by diffsci.pullback."""
        if self._vjp is None:
            fn, din, dout, n = self.fn, self.din, self.dout, len(self.in_sds)

            def vjp_fn(*args):
                return _Pull(fn, din, args[:n])(args[n:], dout)

            self._vjp = _PNode(vjp_fn, self.name,
                               self.in_sds + tuple(self.out_sds[j] for j in dout),
                               tuple(self.in_sds[k] for k in din), self.vmap_method,
                               self.order + 1, linear=(n, self.jvp_node))
        return self._vjp

    def batched(self, size):
        """The node on arguments with a leading batch axis of ``size`` (all of them):
        ``vmap_method="broadcast_all"`` / ``"expand_dims"``, where ``fn`` takes it."""
        b = self._batched.get(size)
        if b is None:
            lin = self.linear
            b = self._batched[size] = _PNode(
                self.fn, self.name,
                [jax.ShapeDtypeStruct((size, *s.shape), s.dtype) for s in self.in_sds],
                [jax.ShapeDtypeStruct((size, *s.shape), s.dtype) for s in self.out_sds],
                self.vmap_method, self.order,
                None if lin is None else (lin[0], lambda: lin[1]().batched(size)))
        return b


def _tangent_zero(s):
    dt = s.dtype if _diff(s.dtype) else jax.dtypes.float0
    return ad.Zero(jax.core.ShapedArray(s.shape, dt))


def _bridge_impl(*xs, node):
    return [jnp.asarray(o) for o in node.host(*xs)]


def _bridge_lower(*xs, node):
    return jax.pure_callback(node.host, node.out_sds, *xs, vmap_method="sequential")


def _bridge_jvp(primals, tangents, *, node):
    outs = node.call(*primals)
    td = [tangents[k] for k in node.din]
    if not node.dout or all(type(t) is ad.Zero for t in td):
        return outs, [_tangent_zero(s) for s in node.out_sds]
    td = [ad.instantiate_zeros(t) for t in td]
    tout = iter(node.jvp_node().call(*primals, *td))
    return outs, [next(tout) if j in node.dout else _tangent_zero(s)
                  for j, s in enumerate(node.out_sds)]


def _bridge_transpose(cts, *args, node):
    if node.linear is None:
        raise NotImplementedError(f"to_jax({node.name}): JAX asked to transpose a nonlinear "
                                  f"bridged call")
    n, transpose = node.linear
    if any(ad.is_undefined_primal(a) for a in args[:n]):
        raise NotImplementedError(f"to_jax({node.name}): JAX asked to transpose a bridged "
                                  f"rule in an argument it is not linear in")
    lin = args[n:]
    if all(type(c) is ad.Zero for c in cts) or not any(ad.is_undefined_primal(a)
                                                        for a in lin):
        return [None] * len(args)
    cs = [jnp.zeros(s.shape, s.dtype) if type(c) is ad.Zero else c
          for c, s in zip(cts, node.out_sds)]
    res = transpose().call(*args[:n], *cs)
    return [None] * n + [r if ad.is_undefined_primal(a) else None for a, r in zip(lin, res)]


def _bridge_batch(args, dims, *, node):
    size = next(a.shape[d] for a, d in zip(args, dims) if d is not None)
    moved = [a if d is None else jnp.moveaxis(a, d, 0) for a, d in zip(args, dims)]
    if node.vmap_method == "sequential":  # one call per batch element, by lax.map
        bk = [k for k, d in enumerate(dims) if d is not None]

        def one(b):
            full = list(moved)
            for k, v in zip(bk, b):
                full[k] = v
            return tuple(node.call(*full))

        outs = jax.lax.map(one, tuple(moved[k] for k in bk))
    else:  # f takes the leading batch axis: the whole batch in one call
        full = [a if d is not None else jnp.broadcast_to(a, (size, *np.shape(a)))
                for a, d in zip(moved, dims)]
        outs = node.batched(size).call(*full)
    return list(outs), [0] * len(node.out_sds)


_bridge_p = jex.core.Primitive("diffsci_bridge")
_bridge_p.multiple_results = True
_bridge_p.def_impl(_bridge_impl)
_bridge_p.def_abstract_eval(lambda *avals, node: node.avals)
ad.primitive_jvps[_bridge_p] = _bridge_jvp
ad.primitive_transposes[_bridge_p] = _bridge_transpose
batching.primitive_batchers[_bridge_p] = _bridge_batch
mlir.register_lowering(_bridge_p, mlir.lower_fun(_bridge_lower, multiple_results=True))


# ---------------------------------------------------------------------------
# JAX -> diffsci
# ---------------------------------------------------------------------------
class _JaxPrim(BridgedPrim):
    """A flat JAX function ``jfn(*arrays) -> tuple of arrays`` as a diffsci primitive whose
    VJP and JVP are the _JaxPrims of ``jax.vjp`` and ``jax.jvp``."""

    def __init__(self, jfn, name, jit):
        self.jfn = jax.jit(jfn) if jit else jfn
        self.raw = jfn
        self.jit = jit
        super().__init__(name)

    def _run(self, *xs):
        who = f"from_jax({self.name})"
        for k, x in enumerate(xs):
            if np.asarray(x).dtype == np.float64 and not jax.config.jax_enable_x64:
                raise TypeError(
                    f"{who}: input {k} is float64 but JAX computes in float32 unless "
                    f"jax_enable_x64 is set (the derivatives would be float32-accurate); "
                    f"call jax.config.update('jax_enable_x64', True) at startup, or pass "
                    f"float32 arrays")
        outs = self.jfn(*xs)
        arrs = []
        for j, o in enumerate(outs):
            if not isinstance(o, jax.Array):
                raise TypeError(f"{who}: output leaf {j} is {_describe(o)}; a JAX function "
                                f"bridged into diffsci must return arrays (or pytrees of "
                                f"them)")
            arrs.append(np.array(o))  # a writable host copy (JAX's buffers are read-only)
        return self._outputs(arrs)

    def _vjp_prim(self, n):
        raw, dout = self.raw, self.diff_out

        def vjp(*args):
            ys, cs = args[:n], args[n:]
            din = [k for k, y in enumerate(ys) if _diff(jnp.result_type(y))]

            def part(*d):
                full = list(ys)
                for k, v in zip(din, d):
                    full[k] = v
                outs = raw(*full)
                return tuple(o for o, f in zip(outs, dout) if f)

            _, back = jax.vjp(part, *(ys[k] for k in din))
            # diffsci's cotangents -> JAX's and back: conjugate the complex ones
            cts = back(tuple(jnp.conj(c) if jnp.iscomplexobj(c) else c for c in cs))
            res = [jnp.zeros_like(y) for y in ys]
            for k, c in zip(din, cts):
                res[k] = jnp.conj(c) if jnp.iscomplexobj(c) else c
            return tuple(res)

        return _JaxPrim(vjp, f"vjp of {self.name}", self.jit)

    def _jvp_prim(self, n):
        raw = self.raw

        def jvp(*args):
            out, tout = jax.jvp(raw, tuple(args[:n]), tuple(args[n:]))
            return (*out, *tout)

        return _JaxPrim(jvp, f"jvp of {self.name}", self.jit)


def from_jax(fn, *, jit=True, name=None):
    """A JAX function as a diffsci-differentiable function.

    The result is a diffsci primitive (a :class:`diffsci.custom_vjp`): its forward runs
    ``fn`` (jitted by default), its VJP ``jax.vjp`` and its JVP ``jax.jvp``, each bridged
    the same way, so ``grad`` of ``grad``, ``hessian`` and ``jvp`` of ``grad`` work.
    Complex cotangents are conjugated across.  Outputs come back as writable NumPy copies.

    Args:
        fn: a JAX function of arrays (or pytrees of them) returning an array or a pytree
            of arrays.
        jit: run ``fn`` and its derivatives through ``jax.jit`` (compiled once per input
            signature).
        name: the name errors use.

    Returns:
        A function of NumPy arrays (or diffsci traced values) with ``fn``'s output
        structure, NumPy arrays at its leaves.

    Raises:
        TypeError: a float64 input while ``jax_enable_x64`` is off (JAX would silently
            compute in float32); an output that is not an array.

    Example:
        >>> import jax.numpy as jnp, diffsci as ds
        >>> f = from_jax(lambda x: jnp.sum(jnp.sin(x)))
        >>> float(ds.grad(f)(np.zeros(1, np.float32))[0])
        1.0
    """
    if not callable(fn):
        raise TypeError(f"from_jax: expected a function of JAX arrays, got "
                        f"{type(fn).__name__}")
    fname = name or getattr(fn, "__name__", "fn")
    cache = {}

    @functools.wraps(fn)
    def g(*args):
        leaves, tree = ds_flatten(args)
        for k, x in enumerate(leaves):
            v = getval(x)
            if not isinstance(v, (np.ndarray, np.generic, int, float, complex, bool)):
                raise TypeError(f"from_jax({fname}): argument leaf {k} is {_describe(v)}; "
                                f"the bridged function takes NumPy arrays or numbers")
        prim = cache.get(tree)
        if prim is None:  # one primitive per input structure: its VJP/JVP levels are kept
            box = []

            def jfn(*xs):
                out = fn(*ds_unflatten(tree, list(xs)))
                ol, otree = jax.tree_util.tree_flatten(out)
                if not box:
                    box.append(otree)
                return tuple(ol)

            prim = cache[tree] = _JaxPrim(jfn, fname, jit)
            prim.box = box
        xs = [x if type(x) in (Tracer, Dual) else np.asarray(x) for x in leaves]
        outs = prim.prim(*xs)
        return jax.tree_util.tree_unflatten(prim.box[0], list(outs))

    return g
