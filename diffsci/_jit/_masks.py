"""Rules ``diffsci.jit`` substitutes while it traces: masks recomputed from traced values.

The derivative rules of ``maximum``/``minimum``/``fmax``/``fmin`` (diffsci/numpy/_vjps.py,
_jvps.py) compute *which argument wins* on ``getval``'d values, with plain NumPy (so do those
of ``abs``/``fabs`` (a sign) and ``clip`` (two masks): they call the zero-derivative
primitives of :data:`PLAIN` instead): in eager mode
that is right and cheap, but under a jit trace the mask is a constant of the trace, so
``jit(grad(relu))`` kept the sign pattern of the first input (a silent wrong gradient at any
input with another pattern).  While a jit trace runs, :func:`substituted` swaps those rules for
rules that call a *selection primitive* ``select(g, x, y)`` (g where x wins, half of g on ties,
0 elsewhere; the same comparisons): a record of the trace whose inputs are the traced x and y,
so the compiled program recomputes the mask on every call (a fused elementwise statement, see
``_codegen``), no guard and no re-specialization when the pattern changes.

A selection primitive is linear in g (its VJP and JVP in g are the same selection) and
piecewise constant in x and y (zero derivatives there), so higher orders through it are exact
almost everywhere, as the rules they stand for.
"""

from __future__ import annotations

import types

import numpy as np

from .._core import Dual, Tracer, defjvp, defvjp, getval, primitive

#: kind -> (source of "x wins", source of "tie") as scalar expressions of x and y
_WINS = {
    "max": ("({x} > {y})", "({x} == {y})"),
    "min": ("({x} < {y})", "({x} == {y})"),
    "fmax": ("(({x} > {y}) or ({y} != {y}))", "({x} == {y})"),
    "fmin": ("(({x} < {y}) or ({y} != {y}))", "({x} == {y})"),
}


def _masks(kind, x, y):
    if kind == "max":
        return x > y, x == y
    if kind == "min":
        return x < y, x == y
    if kind == "fmax":
        return (x > y) | np.isnan(y), x == y
    return (x < y) | np.isnan(y), x == y


def _zeros_like(v):
    v = getval(v)
    return np.zeros(np.shape(v), np.result_type(v, 1.0))


def _selection(kind, side):
    """The primitive ``(g, x, y) -> the part of g that argument ``side`` (0: x) receives``."""

    def fun(g, x, y):
        wins, ties = _masks(kind, x, y)
        if side == 0:
            return np.where(wins, g, np.where(ties, 0.5 * g, 0))
        return np.where(wins | ties, np.where(ties, 0.5 * g, 0), g)

    fun.__name__ = fun.__qualname__ = f"jit_select_{kind}_{'xy'[side]}"
    p = primitive(fun)
    defvjp(p, lambda h, ans, g, x, y: p(h, x, y),
           lambda h, ans, g, x, y: _zeros_like(x), lambda h, ans, g, x, y: _zeros_like(y))
    defjvp(p, lambda t, ans, g, x, y: p(t, x, y),
           lambda t, ans, g, x, y: _zeros_like(ans), lambda t, ans, g, x, y: _zeros_like(ans))
    p.kind, p.side = kind, side
    return p


SELECT = {(k, s): _selection(k, s) for k in _WINS for s in (0, 1)}


def scalar_source(fun, ops, zero):
    """The fused-loop statement of a selection ``fun`` on operand sources ``(g, x, y)``."""
    for (kind, side), p in SELECT.items():  # noqa: B007 - used after the loop
        if p.fun is fun:
            break
    else:  # pragma: no cover
        raise KeyError(fun)
    g, x, y = ops
    wins, ties = (s.format(x=x, y=y) for s in _WINS[kind])
    half = f"(0.5 * {g})"
    if side == 0:
        return f"({g} if {wins} else ({half} if {ties} else {zero}))"
    return f"({g} if not ({wins} or {ties}) else ({half} if {ties} else {zero}))"


def _plain(ufunc, nin=None):
    """``ufunc`` (or a NumPy function of ``nin`` arrays, ``np.real``) as a primitive with zero
    derivatives: a mask or a step (sign, floor) computed from traced values, recorded by the
    trace instead of folded into a constant."""
    nin = ufunc.nin if nin is None else nin
    p = primitive(ufunc, name=f"jit_plain_{ufunc.__name__}")
    defvjp(p, *[(lambda g, ans, *a, k=k, **kw: _zeros_like(a[k])) for k in range(nin)])
    defjvp(p, *[(lambda t, ans, *a, **kw: _zeros_like(ans))] * nin)
    return p


PLAIN = {u: _plain(u) for u in (np.sign, np.floor_divide, np.trunc, np.less, np.greater,
                                np.maximum, np.logical_or, np.equal, np.isnan)}


def _clip_masks(a, lo, hi):
    """Those of diffsci.numpy's clip rules (``a_max`` wins where ``a_min > a_max``), traced."""
    less, greater = PLAIN[np.less], PLAIN[np.greater]
    none = np.zeros(np.shape(getval(a)), bool)
    low = less(a, lo) if lo is not None else none
    if hi is None:
        high = none
    else:
        high = greater(PLAIN[np.maximum](a, lo) if lo is not None else a, hi)
    return greater(low, high), high  # low & ~high (booleans): a_max wins over a_min


def _rules():
    """``(Rules dict, argnum, jit rule)`` for every rule the trace substitutes."""
    from ..numpy import _wrap as W
    from ..numpy._jvps import _bc
    from ..numpy._util import unbroadcast

    sign, either = PLAIN[np.sign], PLAIN[np.logical_or]
    out = []
    for prim in (W.absolute, W.fabs):
        vjp0, jvp0 = prim.vjps.get(0), prim.jvps.get(0)

        def vjp(g, ans, x, vjp0=vjp0, **kw):  # complex |z|: the rule has no plain mask
            return vjp0(g, ans, x, **kw) if np.iscomplexobj(getval(x)) else g * sign(x)

        def jvp(t, ans, x, jvp0=jvp0, **kw):
            return jvp0(t, ans, x, **kw) if np.iscomplexobj(getval(x)) else t * sign(x)

        out += [(prim.vjps, 0, vjp), (prim.jvps, 0, jvp)]

    def clip_rule(k, tangent):
        """Argument k's (0: a, 1: lo, 2: hi) VJP or JVP of clip: a passes where neither
        bound is hit, a bound where it is."""
        def rule(g, ans, a, lo, hi):
            low, high = _clip_masks(a, lo, hi)
            r = np.where(either(low, high), 0, g) if k == 0 else \
                np.where((low, high)[k - 1], g, 0)
            return _bc(r, ans) if tangent else unbroadcast(r, (a, lo, hi)[k])
        return rule

    for k in range(3):
        out += [(W._clip_p.vjps, k, clip_rule(k, False)), (W._clip_p.jvps, k, clip_rule(k, True))]
    from ..numpy import _util

    out.append((vars(_util), "jit_hooks", HOOKS))  # value_mask, observed, where's condition
    for kind, prim in (("max", W.maximum), ("min", W.minimum), ("fmax", W.fmax),
                       ("fmin", W.fmin)):
        for side in (0, 1):
            sel = SELECT[(kind, side)]

            def vjp(g, ans, x, y, sel=sel, side=side, **kw):
                return unbroadcast(sel(g, x, y), (x, y)[side])

            def jvp(t, ans, x, y, sel=sel, **kw):
                return _bc(sel(t, x, y), ans)

            out.append((prim.vjps, side, vjp))
            out.append((prim.jvps, side, jvp))
    return out


def plain_of(ufunc, nin=None):
    """The zero-derivative primitive of ``ufunc`` (made once; ``nin`` for a function that is
    not a ufunc: the number of its array arguments)."""
    p = PLAIN.get(ufunc)
    if p is None:
        p = PLAIN[ufunc] = _plain(ufunc, nin)
    return p


def _jit_value_mask(ufunc, *args):
    """``diffsci.numpy._util.value_mask`` while jit traces: the mask recorded at the jit level
    only (its derivatives are zero: the levels of eager transforms above it are taken off,
    so an index computed by it, a sorting permutation, is not an argument they
    differentiate)."""
    args = [_jit_condition(a) for a in args]
    return plain_of(ufunc, None if isinstance(ufunc, np.ufunc) else len(args))(*args)


def _jit_observed(fn, *args):
    """``diffsci.numpy._util.observed`` while jit traces: a guard on ``fn``'s outcome."""
    from ._trace import _active

    res = fn(*[getval(a) for a in args])
    for tr in _active:
        tr.observe(fn, args, None, res, depth=3)
    return res


def _jit_condition(c):
    """``where``'s condition with the levels of eager transforms taken off, but kept where
    it is a value of a running jit trace (a mask from :data:`PLAIN` primitives): ``where``
    is then a record with the mask as an input (not differentiated), and a cotangent built
    from it alone (``where(mask, 0, g)`` of a constant seed) is not folded into a constant."""
    from ._trace import _active

    while type(c) is Tracer or type(c) is Dual:
        if any(c._tape is tr.tape for tr in _active):
            return c
        c = c._value
    return c


#: ``diffsci.numpy._util.jit_hooks`` while a jit trace runs
HOOKS = types.SimpleNamespace(value_mask=_jit_value_mask, observed=_jit_observed,
                              condition=_jit_condition)


_MISSING = object()


class substituted:
    """While active, the rules of ``_rules()`` are the jit versions (restored on exit)."""

    table = None

    def __enter__(self):
        if substituted.table is None:
            substituted.table = _rules()
        self.saved = []
        for rules, k, rule in substituted.table:
            self.saved.append((rules, k, rules.get(k, _MISSING)))
            rules[k] = rule

    def __exit__(self, *exc):
        for rules, k, old in self.saved:
            if old is _MISSING:
                rules.pop(k, None)
            else:
                rules[k] = old
