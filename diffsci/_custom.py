"""User-defined reverse-mode rules over pytrees: :class:`custom_vjp`.

A call to a ``custom_vjp`` function with traced inputs records *one* record
for the whole call plus one small projection record per output leaf.  The
backward sweep gathers the output cotangents in a list at the call's record
and then calls the user's ``bwd`` once.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from . import _inplace
from ._core import Dual, ForwardTrace, Tracer, _add, getval, is_tracer, record, top_trace
from ._tree import _LEAF, _LEAF_TYPES, _NONE, _same, tree_flatten, tree_unflatten
from ._tree import _LEAF_DEF as _LEAF_TREE

__all__ = ["custom_vjp"]


def _project_back(grads, owned, g, rec):
    """Backward of "output j of a multi-output record": file g into slot j."""
    p = rec._parents[0]
    j, n = rec._args
    cur = grads[p]
    if cur is None:
        cur = grads[p] = [None] * n
    cur[j] = g if cur[j] is None else cur[j] + g


class custom_vjp:
    """Give a function its own reverse-mode rule.

    Usage (as in JAX)::

        @custom_vjp
        def f(x, y):
            return np.sin(x) * y

        def f_fwd(x, y):                      # -> (output, residuals)
            return f(x, y), (np.cos(x), np.sin(x), y)

        def f_bwd(res, g):                    # -> one cotangent per argument
            cos_x, sin_x, y = res
            return (cos_x * g * y, sin_x * g)

        f.defvjp(f_fwd, f_bwd)

    Arguments and outputs may be pytrees.  ``bwd`` returns a tuple with one
    entry per positional argument, each shaped like that argument (``None``
    for an argument with no cotangent, e.g. an integer; ``None`` may also stand
    for part of a pytree argument).  A real output's cotangent reaches ``bwd``
    real.  Without traced inputs the undecorated function runs.

    Misuse raises instead of giving wrong derivatives: ``fwd`` (and a ``defjvp`` rule) must
    return a pair (a tuple of two); ``bwd``'s tuple must have one entry per positional
    argument, each ``None`` or shaped exactly like that argument's leaves (no broadcasting),
    float or complex, and real for a real argument; a ``defjvp`` rule's tangents are checked
    the same way against the outputs.  The errors name the function, the rule, the argument
    (and pytree leaf), what was expected and what came.

    Higher order (``hessian``, ``grad`` of ``grad``, ``jvp`` of ``grad``):
    ``fwd`` and ``bwd`` then receive values traced by the outer levels, and
    what they compute from them is differentiated in turn.  So:

    * compute with NumPy calls or with custom_vjp functions (``f`` itself
      included), never a kernel on ``getval``'d values;
    * ``bwd`` must return a cotangent for every argument its result depends
      on: ``None`` means zero, and a custom_vjp called *inside* a ``bwd``
      whose own ``bwd`` drops an argument it depends on (say the angles of a
      VJP primitive) gives wrong second derivatives — ``check_grads(...,
      order=2)`` catches that;
    * residuals may be traced values (they are differentiated through
      ``bwd``); a value traced by the *running* level may reach the rules
      only as an argument — one captured by a closure or hidden in an opaque
      (non-pytree) argument raises instead of giving wrong derivatives.
    """

    def __init__(self, fun: Callable[..., Any]) -> None:
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.fwd: Callable[..., Any] | None = None
        self.bwd = None
        self.jvp = None

    def defvjp(self, fwd: Callable[..., Any], bwd: Callable[..., Any]) -> custom_vjp:
        """Set the forward (``-> (out, residuals)``) and backward (``(res, g) -> cts``) rules."""
        self.fwd = fwd
        self.bwd = bwd
        return self

    def defjvp(self, jvp: Callable[..., Any]) -> Callable[..., Any]:
        """Optionally set a forward-mode rule ``jvp(primals, tangents) -> (out, tangent_out)``.

        Without one, forward mode differentiates ``bwd`` with respect to its
        cotangent (exact, since bwd is linear in it), which needs ``bwd`` written
        with NumPy calls; a ``bwd`` built on a compiled kernel needs this rule.
        ``primals`` and ``tangents`` are tuples shaped like the arguments
        (tangent ``None`` for a leaf that is not being differentiated).
        """
        self.jvp = jvp
        return jvp

    def __get__(self, obj, objtype=None):  # allow use as a method
        return self if obj is None else functools.partial(self, obj)

    def __call__(self, *args):
        leaves, in_tree = tree_flatten(args)
        top = top_trace(leaves)
        if top is None:
            return self.fun(*args)
        if self.fwd is None:
            raise TypeError(
                f"custom_vjp function {self.__name__} has no rules: call "
                f"{self.__name__}.defvjp(fwd, bwd) before differentiating it"
            )
        if type(top) is ForwardTrace:
            return self._forward(top, leaves, in_tree)
        vals = []
        parents = []
        for x in leaves:
            if type(x) is Tracer and x._tape is top:
                vals.append(x._value)
                parents.append(x._idx)
            else:
                vals.append(x)
                parents.append(None)
        flat = len(vals) == len(args) and all(c.kind is _LEAF for c in in_tree.children)
        out, res = self._pair(self.fwd(*(vals if flat else tree_unflatten(in_tree, vals))),
                              "fwd", "(output, residuals)")
        out_leaves, out_tree = tree_flatten(out)
        self._check_fwd_traced(vals, out_leaves)
        self._check_not_captured(top, out_leaves, "fwd", "outputs")
        self._check_not_captured(top, _leaves(res), "fwd", "residuals")
        n = len(out_leaves)
        if n == 1 and out_tree.kind is _LEAF:  # one array out: one record, no projection
            o = out_leaves[0]
            dt = getattr(o, "dtype", None)  # arrays, NumPy scalars, traced values
            kind = dt.kind if dt is not None else (
                np.result_type(getval(o)).kind if _is_numeric(o) else "O")
            if kind in "fc":
                return record(top, o, self._back_one, tuple(parents), res, in_tree)
        call = record(top, out_leaves, self._back, tuple(parents), res, (in_tree, out_tree))
        new = []
        for j, o in enumerate(out_leaves):
            kind = np.result_type(getval(o)).kind if _is_numeric(o) else "O"
            if kind in "fc":
                new.append(record(top, o, _project_back, (call._idx,), (j, n)))
            else:
                new.append(o)
        return tree_unflatten(out_tree, new)

    def _forward(self, top, leaves, in_tree):
        """Forward mode from the VJP: J u = ∇_v Σ Re⟨u, bwd(res, v)⟩ (bwd is linear in v)."""
        from ._api import grad

        primals, tangents = [], []
        for x in leaves:
            if type(x) is Dual and x._tape is top:
                primals.append(x._value)
                tangents.append(_inplace.tangent(x))
            else:
                primals.append(x)
                tangents.append(None)
        if self.jvp is not None:
            out, tout = self._pair(self.jvp(tree_unflatten(in_tree, primals),
                                            tree_unflatten(in_tree, tangents)),
                                   "jvp", "(output, output tangent)")
            out_leaves, out_tree, t_leaves = check_jvp_output(
                f"custom_vjp {self.__name__}", out, tout)
            self._check_not_captured(top, out_leaves + t_leaves, "jvp", "outputs")
            return tree_unflatten(out_tree, [o if t is None else Dual(o, t, top)
                                             for o, t in zip(out_leaves, t_leaves)])
        out, res = self._pair(self.fwd(*tree_unflatten(in_tree, primals)), "fwd",
                              "(output, residuals)")
        out_leaves, out_tree = tree_flatten(out)
        self._check_fwd_traced(primals, out_leaves)
        self._check_not_captured(top, out_leaves, "fwd", "outputs")
        self._check_not_captured(top, _leaves(res), "fwd", "residuals")
        diff = [k for k, o in enumerate(out_leaves) if _is_numeric(o)
                and np.result_type(getval(o)).kind in "fc"]
        if not diff:
            return out

        def pairing(*vs):
            gs = [np.zeros_like(getval(o)) for o in out_leaves]
            for k, v in zip(diff, vs):
                gs[k] = v
            try:
                cts = self.bwd(res, tree_unflatten(out_tree, gs))
            except TypeError as e:
                raise TypeError(
                    self._no_forward(f"its bwd failed on a traced cotangent ({e})")
                ) from e
            total = 0.0
            in_vals = [None if u is None else p for u, p in zip(tangents, primals)]
            for u, c in zip(tangents, self._cotangent_leaves(cts, in_tree, in_vals)):
                if u is None or c is None:
                    continue
                if type(c) is not Tracer and np.any(getval(c) != 0):
                    # bwd is linear in g: a nonzero result that does not depend on g
                    # means bwd cut the trace (getval, float(), a kernel ...).
                    raise TypeError(self._no_forward("its bwd does not trace its cotangent"))
                total = total + np.sum(np.real(np.conj(u) * c))
            return total

        # Any point will do (bwd is linear in v); ones make a bwd that cuts the trace
        # return nonzero plain values, which pairing detects.
        v0 = [np.ones_like(getval(out_leaves[k])) for k in diff]
        tans = grad(pairing, argnums=tuple(range(len(v0))))(*v0)
        new = list(out_leaves)
        for k, t in zip(diff, tans):
            new[k] = Dual(out_leaves[k], t, top)
        return tree_unflatten(out_tree, new)

    def _check_fwd_traced(self, inputs, out_leaves):
        """Under nested differentiation fwd sees the outer levels' traced values; if none of
        its outputs is traced, fwd cut them (a kernel on getval/float values) and the outer
        derivatives would be silently zero."""
        if any(is_tracer(v) for v in inputs) and not any(is_tracer(o) for o in out_leaves):
            raise TypeError(
                f"custom_vjp {self.__name__}: its fwd received values traced by an outer "
                f"differentiation (grad of grad, jvp of grad, ...) and returned untraced "
                f"outputs, so higher-order derivatives would silently be zero. Make fwd call "
                f"{self.__name__} itself (or differentiable NumPy code) when its inputs are "
                f"traced, or raise a clear error for higher orders."
            )

    def _check_not_captured(self, top, leaves, rule, what):
        """The rules see this level's values unwrapped, so a value traced at this level (or a
        deeper one) in what they return came in some other way: a closure, or a static object
        (a non-pytree leaf) carrying it.  Its dependence cannot reach bwd's cotangents."""
        level = top.level
        for x in leaves:
            if (type(x) is Tracer or type(x) is Dual) and x._tape.level >= level:
                raise TypeError(
                    f"custom_vjp {self.__name__}: its {rule} returned {what} traced by the "
                    f"differentiation running this call, although it received that level's "
                    f"values untraced: they depend on a traced value it closes over or finds "
                    f"inside an opaque (non-pytree) argument. That dependence would be lost "
                    f"(wrong derivatives). Pass the value as a positional argument (a pytree "
                    f"leaf) and return its cotangent from bwd, or compute it inside the rule "
                    f"from the arguments."
                )

    def _no_forward(self, why):
        return (
            f"custom_vjp {self.__name__} was differentiated in forward mode, which it derives "
            f"from its VJP by differentiating bwd with respect to the cotangent; {why}. Give "
            f"it a forward rule with {self.__name__}.defjvp(jvp) (jvp(primals, tangents) -> "
            f"(out, tangent_out)), or write bwd with NumPy calls on the cotangent."
        )

    def _pair(self, r, rule, what):
        """``r`` unpacked as the pair a rule must return (a tuple or list of two)."""
        if type(r) not in (tuple, list) or len(r) != 2:
            got = (f"a {type(r).__name__} of length {len(r)}" if type(r) in (tuple, list)
                   else _describe(r))
            raise TypeError(
                f"custom_vjp {self.__name__}: its {rule} must return a pair {what} (a tuple of "
                f"two), got {got}"
            )
        return r

    def _cotangent_leaves(self, cts, in_tree, in_vals=None):
        """Flatten bwd's tuple of per-argument cotangents to one entry per input leaf.

        ``in_vals`` (one value per input leaf, None for a leaf not being differentiated) is
        what each cotangent is checked against: its shape and a float/complex dtype kind (a
        complex cotangent only for a complex argument)."""
        if not isinstance(cts, tuple):
            raise TypeError(
                f"custom_vjp {self.__name__}: bwd must return a tuple with one cotangent per "
                f"positional argument, got {_describe(cts)}"
            )
        nargs = len(in_tree.children)
        if len(cts) != nargs:
            raise TypeError(
                f"custom_vjp {self.__name__}: bwd returned {len(cts)} cotangent(s) for "
                f"{nargs} argument(s)"
            )
        ct_leaves = []
        for k, (sub, c) in enumerate(zip(in_tree.children, cts)):
            if c is None:
                ct_leaves.extend([None] * sub.num_leaves)
                continue
            if sub.kind is _LEAF and type(c) in _LEAF_TYPES:  # an array for an array
                part = [c]
            else:
                cl, ctree = tree_flatten(c)
                part = cl if ctree == sub else _match_with_nones(ctree, sub, iter(cl))
                if part is None:
                    raise TypeError(
                        f"custom_vjp {self.__name__}: bwd's cotangent for argument {k} has "
                        f"structure {ctree!r}, expected {sub!r} (the argument's structure; "
                        f"None may stand for any part with no cotangent)"
                    )
            if in_vals is not None:
                first = len(ct_leaves)
                for j, ct in enumerate(part):
                    v = in_vals[first + j]
                    if ct is None or v is None or _fits(ct, v):
                        continue
                    where = f"argument {k}" + (f" (leaf {j} of its pytree)"
                                               if sub.num_leaves > 1 else "")
                    _check_like(f"custom_vjp {self.__name__}: bwd's cotangent", where, ct, v,
                                "cotangent")
            ct_leaves.extend(part)
        return ct_leaves

    def _back_one(self, grads, owned, g, rec):
        """Backward of a call with a single array output (its record is the output)."""
        self._pull(grads, owned, (g,), (rec._value,), rec, rec._args, rec._kwargs, _LEAF_TREE)

    def _back(self, grads, owned, g, rec):
        in_tree, out_tree = rec._kwargs
        self._pull(grads, owned, g, rec._value, rec, rec._args, in_tree, out_tree)

    def _pull(self, grads, owned, g, out_leaves, rec, res, in_tree, out_tree):
        gs = []
        for c, o in zip(g, out_leaves):
            ov = getval(o)
            if c is None:
                c = np.zeros_like(ov)
            elif _is_complex(c) and not _is_complex(ov):
                # Cotangents of real values may carry an imaginary part that means
                # nothing (x̄ = ḡ·conj(y) for real x times complex y): NumPy rules ignore
                # it, a user's bwd need not.  Under nesting it does appear (the outer
                # sweep through bwd's complex arithmetic), so hand bwd the real part.
                c = np.real(c)
            gs.append(c)
        cts = self.bwd(res, gs[0] if out_tree is _LEAF_TREE else tree_unflatten(out_tree, gs))
        parents = rec._parents
        recs = rec._tape.records  # the arguments' records: what the cotangents must look like
        ct_leaves = self._cotangent_leaves(
            cts, in_tree, [None if p is None else recs[p]._value for p in parents])
        for p, c in zip(parents, ct_leaves):
            if p is not None and c is not None:
                _add(grads, owned, p, c)


def _leaves(tree):
    """The leaves of ``tree``: tuples, lists and dicts walked directly (a residual is
    usually a tuple of arrays; tree_flatten costs microseconds per call), others flattened."""
    t = type(tree)
    if t is tuple or t is list:
        return [y for x in tree for y in _leaves(x)]
    if t is dict:
        return [y for x in tree.values() for y in _leaves(x)]
    if t is np.ndarray or t is Tracer or t is Dual or t is float or tree is None:
        return [tree]
    return tree_flatten(tree)[0]


def _match_with_nones(ctree, sub, it):
    """Cotangent leaves for the argument structure ``sub`` where the cotangent's structure
    ``ctree`` has ``None`` in place of some parts (e.g. an integer leaf of a dict); None
    if the structures differ otherwise."""
    if ctree.kind == _NONE and sub.kind != _NONE:
        return [None] * sub.num_leaves
    if ctree.kind == _LEAF or sub.kind == _LEAF:
        return [next(it)] if ctree.kind == sub.kind == _LEAF else None
    if (ctree.kind != sub.kind or len(ctree.children) != len(sub.children)
            or not _same(ctree.aux, sub.aux)):
        return None
    out = []
    for c, s in zip(ctree.children, sub.children):
        part = _match_with_nones(c, s, it)
        if part is None:
            return None
        out.extend(part)
    return out


def _describe(x):
    """A short description of a value for error messages: its type, shape and dtype."""
    v = getval(x)
    dt = getattr(v, "dtype", None)
    if dt is not None:
        return f"a {type(v).__name__} of shape {np.shape(v)} and dtype {dt}"
    return f"a {type(v).__name__}"


def _kind(x):
    """The dtype kind of a numeric value ('f', 'c', 'i', 'b' ...), or None if not numeric."""
    v = getval(x)
    dt = getattr(v, "dtype", None)
    if dt is not None:
        return dt.kind
    if isinstance(v, (bool, int, float, complex)):
        return np.result_type(v).kind
    return None


_ARRAY = np.ndarray


def _fits(c, v):
    """The common case of :func:`_check_like`, fast: two arrays of one shape, c float, or
    complex for a complex v (anything else goes through the full check)."""
    if type(c) is not _ARRAY or type(v) is not _ARRAY or c.shape != v.shape:
        return False
    k = c.dtype.kind
    return k == "f" or (k == "c" and v.dtype.kind == "c")


def _check_like(who, where, c, v, what):
    """Check a cotangent (tangent) ``c`` against the value ``v`` it belongs to: numeric, of
    ``v``'s shape, float or complex, and real where ``v`` is real."""
    kind = _kind(c)
    if kind is None:
        raise TypeError(f"{who} for {where} is {_describe(c)}; expected an array shaped like "
                        f"the value ({np.shape(getval(v))}), or None for a zero {what}")
    cshape, vshape = np.shape(getval(c)), np.shape(getval(v))
    if cshape != vshape:
        raise ValueError(f"{who} for {where} has shape {cshape}; expected {vshape}, the "
                         f"shape of the value it belongs to (a {what} is not broadcast)")
    vkind = _kind(v)
    if kind not in "fc":
        raise TypeError(f"{who} for {where} has dtype {np.result_type(getval(c))}; expected "
                        f"a float{' or complex' if vkind == 'c' else ''} {what}")
    if kind == "c" and vkind != "c":
        raise TypeError(f"{who} for {where} is complex, but the value it belongs to is real "
                        f"(dtype {np.result_type(getval(v))}); return a real {what} (its real "
                        f"part, if the imaginary part means nothing)")


def check_jvp_output(who, out, tout):
    """Leaves of a forward rule's ``(out, tout)``: ``(out_leaves, out_tree, tangent_leaves)``,
    the tangents checked against the outputs (one per output leaf, None or shaped like it,
    real for a real output).  ``who`` names the rule in the errors ("custom_jvp f")."""
    out_leaves, out_tree = tree_flatten(out)
    if tout is None and len(out_leaves) == 1:
        return out_leaves, out_tree, [None]
    t_leaves, t_tree = tree_flatten(tout)
    if len(t_leaves) != len(out_leaves):
        raise TypeError(
            f"{who}: its jvp rule returned {len(t_leaves)} tangent leaves for "
            f"{len(out_leaves)} output leaves (the tangent must be shaped like the output: "
            f"structure {out_tree!r}, got {t_tree!r})"
        )
    for j, (o, t) in enumerate(zip(out_leaves, t_leaves)):
        if t is not None and _kind(o) in ("f", "c"):
            _check_like(f"{who}: its jvp rule's tangent", f"output leaf {j}", t, o, "tangent")
    return out_leaves, out_tree, t_leaves


def _is_numeric(x):
    v = getval(x)
    return isinstance(v, (np.ndarray, np.generic, int, float, complex))


def _is_complex(x):
    v = getval(x)
    dt = getattr(v, "dtype", None)
    return (dt.kind if dt is not None else np.result_type(v).kind) == "c"
