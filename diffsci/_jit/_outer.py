"""``diffsci.jit`` under outer transforms: ``grad(jit(f))``, ``jvp(jit(f))``, ``hessian(jit(f))``.

``grad(jit(f))`` and ``value_and_grad(jit(f))`` do not come here: they are
``jit(value_and_grad(f))``, one fused program (``JitFunction._value_and_grad``).  Everywhere
else, a jitted function called with values traced by an outer transform (``Tracer`` or
``Dual`` leaves: ``vjp``, ``jvp``, ``jacobian``, ``jit(f)`` inside a larger differentiated
function) does not run ``f`` eagerly under those tracers.  It runs as *one* record of the
outermost-but-innermost (highest-level) trace among its arguments, whose rules are
themselves jitted functions:

* **Reverse mode** (the arguments' top trace is a ``Tape``): the record's value is
  ``jit(f)`` called on the values one level down (compiled when those are plain arrays; the
  same rule again, one level lower, when they are traced too).  Its VJP is the *derived*
  jitted function ``jit(vjp_f)``, ``vjp_f(primals, cotangents) -> input cotangents``: the
  fused forward + reverse program that ``jit(value_and_grad(f))`` compiles (the forward pass
  is computed again there: no residuals are kept between the two programs).  Called with
  plain values it is compiled code; called with traced values (a cotangent traced by an
  outer level, or the primals of a ``grad`` of ``grad``) it is one record of that level in
  turn, so every order of differentiation runs compiled programs (``hessian(jit(f))``
  compiles f's VJP and the VJP of that VJP).
* **Forward mode** (a ``ForwardTrace``): the result is the derived ``jit(jvp_f)``,
  ``jvp_f(primals, tangents) -> (outputs, output tangents)``, the program ``jit(jvp(f))``
  compiles, wrapped as duals of that trace.

The derived functions are ordinary :class:`~diffsci._jit.JitFunction` objects keyed by a
:class:`Template` (a static argument: the call's pytree structure, static values and which
leaves are differentiated), so the guards, the re-specialization, the call-time checks of
closures and globals (those of ``f``) and ``check=True`` all apply to them unchanged.
Inside a running jit trace, a jitted function called on traced values runs ``f`` inline (the
enclosing trace records it).
"""

from __future__ import annotations

import numpy as np

from .._core import Dual, ForwardTrace, Tracer, _add, getval, record, top_trace
from .._custom import _project_back
from .._tree import _LEAF, tree_flatten, tree_unflatten
from . import _trace

_ndarray = np.ndarray


def is_dynamic(v):
    """Whether a plain leaf is an input of the compiled program (else it keys the cache)."""
    tv = type(v)
    return tv is _ndarray or tv is float or tv is complex or (
        isinstance(v, np.generic) and v.dtype.kind in "fciu")


def static_key(v, what):
    """``(type, v)`` for a value that keys the cache; TypeError naming it if unhashable."""
    try:
        hash(v)
    except TypeError:
        raise TypeError(
            f"diffsci.jit: {what} is a {type(v).__name__}, which is not hashable; static "
            f"values key the cache of compiled code. Pass arrays and numbers as ordinary "
            f"(traced) arguments, or make the value hashable (a tuple instead of a list)."
        ) from None
    return (type(v), v)


class Template:
    """How to call ``f`` from the dynamic leaves of one call: the pytree structure, the static
    arguments and leaves, and which dynamic leaves an outer transform differentiates.

    Hashable by those (the values of the dynamic leaves play no part): the static first
    argument of the derived jitted functions ``jit(vjp_f)`` and ``jit(jvp_f)``.
    """

    __slots__ = ("jf", "tree", "leaves", "dynmask", "static_args", "static_kw", "diff",
                 "key", "_hash")

    def __init__(self, jf, tree, leaves, dynmask, static_args, static_kw, diff, key):
        self.jf = jf
        self.tree = tree
        self.leaves = leaves  # static leaves by value, None where a leaf is dynamic
        self.dynmask = dynmask
        self.static_args = static_args  # {position: value} (static_argnums)
        self.static_kw = static_kw  # {name: value} (static_argnames)
        self.diff = diff  # positions (among the dynamic leaves) that are differentiated
        self.key = key
        self._hash = hash(key)

    def __hash__(self):
        return self._hash

    def __eq__(self, other):
        return other is self or (type(other) is Template and other.jf is self.jf
                                 and other.key == self.key)

    def __repr__(self):
        return f"<jit template of {self.jf!r}, differentiated leaves {self.diff}>"

    def call(self, dyn, compiled=False):
        """``f`` (or ``jit(f)`` when ``compiled``) on the arguments rebuilt from ``dyn``."""
        if self.tree is None:  # positional leaves only
            return (self.jf if compiled else self.jf.eager)(*dyn)
        it = iter(dyn)
        new = [next(it) if d else v for v, d in zip(self.leaves, self.dynmask)]
        dargs, dkw = tree_unflatten(self.tree, new)
        full = list(dargs)
        for k in sorted(self.static_args):
            full.insert(k, self.static_args[k])
        kw = dict(dkw)
        kw.update(self.static_kw)
        return (self.jf if compiled else self.jf.eager)(*full, **kw)


def _substituted(tmpl, dyn):
    """``g(*d)``: ``f`` with the differentiated leaves ``d`` put in place in ``dyn``."""
    diff = tmpl.diff

    def g(*d):
        full = list(dyn)
        for i, v in zip(diff, d):
            full[i] = v
        return tmpl.call(full)

    return g


def vjp_f(tmpl, dyn, cts):
    """The cotangents of the differentiated leaves of ``f`` at ``dyn`` for the output
    cotangents ``cts`` (one per output leaf of ``f``, None for none): what the derived
    ``jit(vjp_f)`` compiles."""
    from .._api import _Traced

    traced = _Traced(_substituted(tmpl, dyn), tuple(dyn[i] for i in tmpl.diff), {},
                     tuple(range(len(tmpl.diff))), "grad")
    out_leaves, _ = tree_flatten(traced.out)
    if len(out_leaves) != len(cts):
        raise AssertionError(f"internal error: {len(cts)} cotangents for {len(out_leaves)} "
                             f"outputs of {tmpl.jf!r}")
    seeds = {}
    for o, c in zip(out_leaves, cts):
        if c is not None and traced.owns(o):
            if not isinstance(c, (_ndarray, Tracer, Dual)):
                c = np.asarray(c)
            i = o._idx
            seeds[i] = c if i not in seeds else seeds[i] + c
    grads = traced.backward(seeds)
    traced.release()
    return grads


def jvp_f(tmpl, dyn, tans):
    """``(f(dyn), tangents of its output leaves)`` along ``tans`` (one per differentiated
    leaf): what the derived ``jit(jvp_f)`` compiles."""
    from .._forward import jvp

    g = _substituted(tmpl, dyn)
    trees = []

    def flat(*d):
        leaves, tree = tree_flatten(g(*d))
        trees.append(tree)
        return leaves

    ys, ts = jvp(flat, tuple(dyn[i] for i in tmpl.diff), tuple(tans))
    return tree_unflatten(trees[0], ys), ts


def derived(jf, kind):
    """The jitted ``vjp_f`` (kind "vjp") or ``jvp_f`` ("jvp") of ``jf`` (made once)."""
    d = jf._derived.get(kind)
    if d is None:
        d = type(jf)(vjp_f if kind == "vjp" else jvp_f, (0,), (), jf.max_specializations,
                     jf.check)
        d._ext = jf._ext  # the closures and globals to check are f's
        d._name = f"{kind} of {jf._name}"
        jf._derived[kind] = d
    return d


def _is_float(v):
    dt = getattr(v, "dtype", None)
    if dt is None:
        if not isinstance(v, (int, float, complex)):
            return False
        dt = np.result_type(v)
    return dt.kind in "fc"


_FLAT = (Tracer, Dual, _ndarray, float, complex)


def call(jf, args, kwargs):
    """``jf(*args, **kwargs)`` where leaves of the arguments are traced by outer transforms."""
    if _trace._active:  # inside a jit trace: run f inline, the trace records it
        return jf.eager(*args, **kwargs)
    nums = jf.static_argnums
    if not kwargs and not nums and not jf.static_argnames and \
            all(type(a) in _FLAT for a in args):
        tree = None  # positional leaves only: no pytree to flatten or rebuild
        leaves = args
        static_args = static_kw = {}
        statics = ()
    else:
        static_args = {k: args[k] for k in nums}
        static_kw = {n: kwargs[n] for n in jf.static_argnames if n in kwargs}
        statics = tuple(static_key(args[k], f"argument {k} (in static_argnums)")
                        for k in nums) + tuple(
            (n, static_key(v, f"argument {n!r} (in static_argnames)"))
            for n, v in static_kw.items())
        dyn_args = tuple(a for k, a in enumerate(args) if k not in nums)
        dyn_kw = {k: v for k, v in kwargs.items() if k not in jf.static_argnames}
        leaves, tree = tree_flatten((dyn_args, dyn_kw))
    top = top_trace(leaves)
    forward = type(top) is ForwardTrace
    dyn, tans, parents, diff, markers, kept = [], [], [], [], [], []
    for v in leaves:
        tv = type(v)
        if tv is Tracer or tv is Dual:
            if v._tape is top:
                inner = v._value
                if _is_float(getval(inner)):
                    diff.append(len(dyn))
                    if forward:
                        tans.append(_tangent(v))
                    else:
                        parents.append(v._idx)
                v = inner
            dyn.append(v)
            markers.append(None)
            kept.append(None)
        elif is_dynamic(v):
            dyn.append(v)
            markers.append(None)
            kept.append(None)
        else:
            markers.append(static_key(v, "a non-array leaf of the arguments"))
            kept.append(v)
    diff = tuple(diff)
    key = (tree, statics, tuple(markers), diff)
    tmpl = jf._templates.get(key)
    if tmpl is None:
        tmpl = jf._templates[key] = Template(
            jf, tree, kept, tuple(m is None for m in markers), static_args, static_kw, diff,
            key)
    if forward:
        d = derived(jf, "jvp")
        fk = _kinds(dyn, tans)
        ys, ts = (d(tmpl, dyn, tans) if fk is None else
                  d._call_keyed((tmpl, fk), dyn + tans, (tmpl, dyn, tans)))
        yl, ytree = tree_flatten(ys)
        out = []
        for o, t in zip(yl, ts):
            if t is not None and _is_float(getval(o)):
                d = Dual(o, t, top)
                if top.writes is not None:
                    d._ver = len(top.writes)
                out.append(d)
            else:
                out.append(o)
        return tree_unflatten(ytree, out)
    # reverse mode: one record of ``top``; its VJP is the derived jit(vjp_f)
    value = tmpl.call(dyn, compiled=True)
    if not diff:  # top traces no float leaf: nothing to differentiate
        return value
    if type(value) in _FLAT:
        yl, ytree = [value], None
    else:
        yl, ytree = tree_flatten(value)
    floats = [_is_float(getval(o)) for o in yl]
    state = (tmpl, dyn, floats)
    parents = tuple(parents)
    if ytree is None or (len(yl) == 1 and ytree.kind is _LEAF and floats[0]):
        if floats[0]:
            return record(top, yl[0], _back_one, parents, state, None)
        return value
    if not any(floats):
        return value
    rec = record(top, list(yl), _back, parents, state, None)
    n = len(yl)
    new = [record(top, o, _project_back, (rec._idx,), (j, n)) if fl else o
           for j, (o, fl) in enumerate(zip(yl, floats))]
    return tree_unflatten(ytree, new)


def _kinds(dyn, more):
    """The part of the derived function's signature that the values decide (as ``_split``
    computes it), or None where that needs the ordinary call (traced values)."""
    out = []
    for v in dyn:
        tv = type(v)
        if tv is _ndarray:
            out.append((v.shape, v.dtype))
        elif tv is float or tv is complex:
            out.append(tv)
        elif isinstance(v, np.generic) and v.dtype.kind in "fciu":
            out.append(("g", v.dtype))
        else:
            return None
    for v in more:
        tv = type(v)
        if v is None:
            out.append(None)
        elif tv is _ndarray:
            out.append((v.shape, v.dtype, 0))
        elif tv is float or tv is complex:
            out.append((tv, 0))
        elif isinstance(v, np.generic) and v.dtype.kind in "fciu":
            out.append(("g", v.dtype, 0))
        else:
            return None
    return tuple(out)


def _tangent(d):
    if d._tape.writes is None:
        return d._tangent
    from .._inplace import tangent

    return tangent(d)


def _back_one(grads, owned, g, rec):
    _pull(grads, owned, [g], rec)


def _back(grads, owned, g, rec):
    _pull(grads, owned, g, rec)


def _pull(grads, owned, gs, rec):
    tmpl, dyn, floats = rec._args
    values = rec._value if type(rec._value) is list else [rec._value]
    cts = []
    for c, fl, y in zip(gs, floats, values):
        if not fl or c is None:
            cts.append(None)
            continue
        if not _is_complex(y) and _is_complex(c):
            c = np.real(c)  # a real output's cotangent: its imaginary part means nothing
        cts.append(c)
    d = derived(tmpl.jf, "vjp")
    fk = _kinds(dyn, cts)
    if fk is None:
        in_cts = d(tmpl, dyn, cts)
    else:
        in_cts = d._call_keyed((tmpl, fk), dyn + [c for c in cts if c is not None],
                               (tmpl, dyn, cts))
    for p, c in zip(rec._parents, in_cts):
        _add(grads, owned, p, c)


def _is_complex(x):
    v = getval(x)
    dt = getattr(v, "dtype", None)
    if dt is None:
        return isinstance(v, complex)
    return dt.kind == "c"
