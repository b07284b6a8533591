"""Forward mode and what is built on it: jvp, jacfwd, hessian, hvp, forwarddiff, custom_jvp.

Forward mode uses dual values (:class:`~diffsci._core.Dual`): every primitive
applied to duals computes its output and, eagerly, its output tangent from its
JVP rules.  No tape is kept.  Forward and reverse mode share trace levels, so
they nest in any order: ``hessian`` is forward over reverse, ``jvp`` of
``grad`` and ``grad`` of ``jvp`` both work.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from . import _inplace
from ._api import _argnums_tuple, _conversion_context, _dtype, _leaf_value, grad, pullback
from ._core import Dual, ForwardTrace, Tracer, close, getval, top_trace
from ._custom import check_jvp_output, custom_vjp
from ._tree import tree_flatten, tree_unflatten

__all__ = ["jvp", "jacfwd", "hessian", "hvp", "forwarddiff", "custom_jvp"]


def _tangent_leaf(t, p, k):
    """Validate tangent leaf k against its primal and give it the primal's dtype."""
    pv = getval(p)
    pshape, pdt = np.shape(pv), _dtype(pv)
    tv = getval(t)
    if np.shape(tv) != pshape:
        raise ValueError(
            f"jvp: tangent {k} has shape {np.shape(tv)}, expected {pshape} (its primal's shape)"
        )
    if type(t) is Tracer or type(t) is Dual:
        return t
    t = np.asarray(t)
    if t.dtype.kind == "c" and pdt.kind != "c":
        raise TypeError(f"jvp: tangent {k} is complex but its primal is real ({pdt})")
    return t.astype(pdt, copy=False)


def _out_tangent(o, trace):
    """Split an output leaf into (primal, tangent) for the forward trace ``trace``."""
    if type(o) is Dual and o._tape is trace:
        y, t = o._value, _inplace.tangent(o)
        ydt, tdt = _dtype(getval(y)), _dtype(getval(t))
        if tdt.kind == "c" and ydt.kind != "c":
            t = np.real(t)
            tdt = _dtype(getval(t))
        if tdt != ydt:
            t = t.astype(ydt)
        if np.shape(getval(t)) != np.shape(getval(y)):
            t = np.broadcast_to(t, np.shape(getval(y)))
        if type(t) is np.ndarray and t.ndim == 0 and type(y) is not np.ndarray:
            t = t[()]  # a scalar output gets a scalar tangent, not a 0-d array
        return y, t
    v = getval(o)
    if isinstance(v, (np.ndarray, np.generic, int, float, complex)):
        return o, np.zeros(np.shape(v), _dtype(v))
    return o, None


def jvp(f: Callable[..., Any], primals: tuple[Any, ...] | list[Any],
        tangents: tuple[Any, ...] | list[Any], has_aux: bool = False) -> tuple[Any, ...]:
    """Forward mode: ``(f(*primals), J·tangents)``.

    Args:
        f: a function of the positional arguments ``primals``.
        primals: tuple of arguments (arrays, scalars or pytrees, float/complex).
        tangents: tuple with the same structure and shapes: the direction.
        has_aux: ``f`` returns ``(value, aux)``; the result is then
            ``(y, ẏ, aux)``.

    Returns:
        ``(y, ẏ)``: the output and its tangent, same structure.

    Example:
        >>> jvp(lambda x: x ** 3, (2.0,), (1.0,))
        (8.0, 12.0)
    """
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("jvp: primals and tangents must be tuples of positional arguments")
    pl, ptree = tree_flatten(tuple(primals))
    tl, ttree = tree_flatten(tuple(tangents))
    if ptree != ttree:
        raise ValueError(f"jvp: tangents have structure {ttree!r}, primals {ptree!r}")
    trace = ForwardTrace()
    duals = [
        Dual(_leaf_value(p, lambda k=k: f"primal leaf {k}"), _tangent_leaf(t, p, k), trace)
        for k, (p, t) in enumerate(zip(pl, tl))
    ]
    try:
        out = f(*tree_unflatten(ptree, duals))
    except ValueError as e:
        _conversion_context(e)
        raise
    if has_aux:
        out, aux = out
    ol, otree = tree_flatten(out)
    pairs = [_out_tangent(o, trace) for o in ol]
    close(trace)  # its duals can no longer be used: they would escape
    y = tree_unflatten(otree, [p for p, _ in pairs])
    t = tree_unflatten(otree, [t for _, t in pairs])
    if has_aux:
        aux = tree_unflatten(*_strip_trace(aux, trace))
        return y, t, aux
    return y, t


def _strip_trace(tree, trace):
    leaves, td = tree_flatten(tree)
    return td, [x._value if type(x) is Dual and x._tape is trace else x for x in leaves]


def _basis(leaves):
    """Unit tangents: for every leaf, every element, 1 (and 1j for complex leaves)."""
    for j, x in enumerate(leaves):
        v = getval(x)
        shape, dt = np.shape(v), _dtype(v)
        dirs = (1.0, 1j) if dt.kind == "c" else (1.0,)
        for k in range(int(np.prod(shape, dtype=int))):
            for d in dirs:
                ts = [np.zeros(np.shape(getval(y)), _dtype(getval(y))) for y in leaves]
                ts[j].flat[k] = d
                yield j, k, d, ts


def jacfwd(f: Callable[..., Any], argnums: int | tuple[int, ...] = 0,
           has_aux: bool = False) -> Callable[..., Any]:
    """Forward-mode Jacobian: one JVP per input element (cheap for few inputs).

    Same result layout as :func:`diffsci.jacobian`: an output of shape ``S``
    and an input of shape ``T`` give a Jacobian of shape ``S + T``.  For a
    complex input the columns are the derivatives along the real direction
    (f′(z) for holomorphic f, as in JAX).

    Example:
        >>> jacfwd(lambda x: x ** 2)(np.array([1.0, 2.0]))
        array([[2., 0.],
               [0., 4.]])
    """

    @functools.wraps(f)
    def jac(*args, **kwargs):
        nums = _argnums_tuple(argnums, len(args), "jacfwd")
        diff = tuple(args[i] for i in nums)
        leaves, in_tree = tree_flatten(diff)

        def g(*d):
            call = list(args)
            for i, di in zip(nums, d):
                call[i] = di
            return f(*call, **kwargs)

        cols = {}
        y = aux = None
        for j, k, d, ts in _basis(leaves):
            if d != 1.0:
                continue
            res = jvp(g, diff, tree_unflatten(in_tree, ts), has_aux=has_aux)
            y, t = res[0], res[1]
            if has_aux:
                aux = res[2]
            cols[(j, k)] = tree_flatten(t)[0]
        if y is None:  # no input elements at all
            res = jvp(g, diff, diff, has_aux=has_aux)
            y = res[0]
            aux = res[2] if has_aux else None
        out_leaves, out_tree = tree_flatten(y)
        per_out = []
        for o_idx, o in enumerate(out_leaves):
            oshape = np.shape(getval(o))
            ins = []
            for j, x in enumerate(leaves):
                xshape = np.shape(getval(x))
                n = int(np.prod(xshape, dtype=int))
                c = [cols[(j, k)][o_idx] for k in range(n)]
                if not c:
                    ins.append(np.zeros(oshape + xshape, _dtype(getval(o))))
                    continue
                # np.stack dispatches to diffsci when the columns are traced
                ins.append(np.reshape(np.stack(c, axis=-1), oshape + xshape))
            grads = tree_unflatten(in_tree, ins)
            per_out.append(grads[0] if isinstance(argnums, int) else tuple(grads))
        J = tree_unflatten(out_tree, per_out)
        return (J, aux) if has_aux else J

    return jac


def hessian(f: Callable[..., Any], argnums: int | tuple[int, ...] = 0,
            mode: str = "rev") -> Callable[..., Any]:
    """Hessian of scalar ``f``: the Jacobian of its gradient.

    Args:
        f: a function returning a real scalar.
        argnums: int or tuple of ints, as for :func:`diffsci.grad`.
        mode: how the gradient is differentiated.  ``"rev"`` (default):
            reverse over reverse — the gradient computation is recorded once
            and swept back once per input element.  ``"fwd"``: forward over
            reverse (the paper's Hessians) — one dual-number pass through the
            whole gradient computation per input element.  Both are exact;
            without vectorised tangents "fwd" re-runs ``f`` per column and
            measured 3.5–6× slower on Rosenbrock (``benchmarks/bench_forward.py``),
            so "rev" is the default.

    Example:
        >>> hessian(lambda x: np.sum(x ** 3))(np.array([1.0, 2.0]))
        array([[ 6.,  0.],
               [ 0., 12.]])
    """
    from ._api import jacrev

    if mode not in ("rev", "fwd"):
        raise ValueError(f"hessian: mode must be 'rev' or 'fwd', got {mode!r}")
    outer = jacrev if mode == "rev" else jacfwd
    return outer(grad(f, argnums=argnums), argnums=argnums)


def hvp(f: Callable[..., Any], x: Any, v: Any) -> Any:
    """Hessian-vector product H(x)·v of scalar ``f`` (one forward pass over the gradient).

    ``x`` and ``v`` may be pytrees of the same structure.
    """
    return jvp(grad(f), (x,), (v,))[1]


def forwarddiff(f: Callable[..., Any]) -> Callable[..., Any]:
    """Mixed mode (the paper's ``forwarddiff``): ``f`` runs normally; its pullback
    comes from a forward-mode Jacobian.

    Inside a reverse-mode computation, ``forwarddiff(f)(*args)`` evaluates
    ``f`` once per input direction with dual numbers instead of recording a
    tape; the backward pass is then a plain Jacobian-transpose product.  It wins
    when ``f`` has few inputs and many operations (an ODE right-hand side, a
    small physical model).  Complex inputs take two directions per element.

    Example:
        >>> g = grad(lambda x: np.sum(forwarddiff(lambda x: np.sin(x) ** 2)(x)))
    """

    @custom_vjp
    def fd(*args):
        return f(*args)

    def fwd(*args):
        leaves, in_tree = tree_flatten(args)
        cols = []
        y = None
        for _j, _k, _d, ts in _basis(leaves):
            y, t = jvp(f, args, tree_unflatten(in_tree, ts))
            cols.append(tree_flatten(t)[0])
        if y is None:
            y = f(*args)
        return y, (cols, args)

    def bwd(res, g):
        cols, args = res
        leaves, in_tree = tree_flatten(args)
        gl = tree_flatten(g)[0]
        flat = []
        for col in cols:
            s = 0.0
            for t, gi in zip(col, gl):
                if t is None:
                    continue
                s = s + np.sum(np.real(np.conj(t) * gi))
            flat.append(s)
        cts = []
        pos = 0
        for x in leaves:
            v = getval(x)
            n = int(np.prod(np.shape(v), dtype=int))
            if _dtype(v).kind == "c":
                re = np.stack(flat[pos:pos + 2 * n:2]) if n else np.zeros(0)
                im = np.stack(flat[pos + 1:pos + 2 * n:2]) if n else np.zeros(0)
                c = re + 1j * im
                pos += 2 * n
            else:
                c = np.stack(flat[pos:pos + n]) if n else np.zeros(0)
                pos += n
            cts.append(np.reshape(c, np.shape(v)).astype(_dtype(v)))
        return tuple(tree_unflatten(in_tree, cts))

    fd.defvjp(fwd, bwd)
    functools.update_wrapper(fd, f)
    return fd


class custom_jvp:
    """Give a function its own forward-mode rule (as in JAX).

    Usage::

        @custom_jvp
        def f(x):
            return np.log1p(np.exp(x))

        @f.defjvp
        def f_jvp(primals, tangents):
            (x,), (t,) = primals, tangents
            return f(x), t / (1 + np.exp(-x))

    The rule returns ``(output, output tangent)`` and must be linear in the
    tangents.  Reverse mode uses the same rule: the VJP is obtained by
    differentiating the rule's tangent map in reverse (exact, one extra pass),
    so ``grad`` of a ``custom_jvp`` function never looks inside ``f``.
    """

    def __init__(self, fun: Callable[..., Any]) -> None:
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.jvp: Callable[..., Any] | None = None
        self._rev: Any = None

    def defjvp(self, jvp_rule: Callable[..., Any]) -> Callable[..., Any]:
        """Set the rule ``jvp_rule(primals, tangents) -> (out, tangent_out)``."""
        self.jvp = jvp_rule

        @custom_vjp
        def rev(*args):
            return self.fun(*args)

        def rev_fwd(*args):
            return _pair(self.__name__, self.jvp(args, _zeros_like_tree(args)))[0], args

        def rev_bwd(args, g):
            _, back = pullback(lambda *ts: self.jvp(args, ts)[1], *_zeros_like_tree(args))
            return back(g)

        rev.defvjp(rev_fwd, rev_bwd)
        self._rev = rev
        return jvp_rule

    def __get__(self, obj, objtype=None):
        return self if obj is None else functools.partial(self, obj)

    def __call__(self, *args):
        leaves, in_tree = tree_flatten(args)
        top = top_trace(leaves)
        if top is None:
            return self.fun(*args)
        if self.jvp is None:
            raise TypeError(
                f"custom_jvp function {self.__name__} has no rule: decorate one with "
                f"@{self.__name__}.defjvp before differentiating it"
            )
        if type(top) is not ForwardTrace:
            return self._rev(*args)
        primals, tangents = [], []
        for x in leaves:
            if type(x) is Dual and x._tape is top:
                primals.append(x._value)
                tangents.append(_inplace.tangent(x))
            else:
                primals.append(x)
                v = getval(x)
                tangents.append(np.zeros(np.shape(v), _dtype(v)) if _numeric(v) else None)
        res = self.jvp(tree_unflatten(in_tree, primals), tree_unflatten(in_tree, tangents))
        out, tout = _pair(self.__name__, res)
        ol, otree, tl = check_jvp_output(f"custom_jvp {self.__name__}", out, tout)
        return tree_unflatten(otree, [Dual(o, t, top) for o, t in zip(ol, tl)])


def _pair(name, res):
    """A custom_jvp rule's ``(output, output tangent)``, refusing anything else (an array of
    length 2 would otherwise unpack into its rows)."""
    if not (type(res) in (tuple, list) and len(res) == 2):
        raise TypeError(
            f"custom_jvp {name}: its jvp rule must return a pair (output, output tangent), "
            f"got {type(res).__name__}"
            + (f" of length {len(res)}" if hasattr(res, "__len__") else ""))
    return res


def _numeric(v):
    return isinstance(v, (np.ndarray, np.generic, int, float, complex)) and not isinstance(v, bool)


def _zeros_like_tree(tree):
    leaves, td = tree_flatten(tree)
    out = []
    for x in leaves:
        v = getval(x)
        out.append(np.zeros(np.shape(v), _dtype(v)) if _numeric(v) else None)
    return tree_unflatten(td, out)
