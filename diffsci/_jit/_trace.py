"""Tracing for ``diffsci.jit``: one run of the function on a tape of its own, with guards.

The tape of :mod:`diffsci._core` already records every primitive with its plain arguments.
What it does not record are the places where the traced program looked at a *value* and
carried on with a plain Python object: comparisons (``if x > 0``), ``int()``/``bool()``/
``.item()``/``.tolist()`` and the non-differentiable functions (``np.floor``, ``np.argmax``,
...).  While a jit trace runs, those entry points are wrapped (the ``Tracer``/``Dual`` methods
for the duration of the trace, the non-differentiable functions through ``_core.observe``)
and each observation of a jit-level value becomes a :class:`Guard`: what was computed, from
which records, and what came out.  A compiled call recomputes every guard where it occurred
and stops at the first one that comes out differently (see ``_codegen``/``_driver``).

A second, silent route from values to plain objects is ``getval``/``stop_gradient``: the
plain array of a record, reused as a constant of a later record.  Such a constant is found by
identity (it *is* a record's value) and becomes a reference to that record.

Arrays and Python numbers the function reads from its closure, its globals or its defaults
(``_externals``) are checked at call time: the object a name points to must be the one traced
(arrays are passed to the compiled code by reference, so in-place changes are seen); an
external array never used directly as an argument of a record (only through plain NumPy
computations inside the function) is compared by content with its snapshot.
"""

from __future__ import annotations

import dataclasses
import sys
import threading
import types

import numpy as np

from .. import _api, _core, _custom
from .._core import Dual, Rules, Tape, Tracer, close, getval
from .._tree import tree_flatten, tree_unflatten
from . import _masks

_TREE_MAP = _api.tree_map
_CUSTOM_CALL = _custom.custom_vjp.__call__

_lock = threading.RLock()
_active = []  # the jit traces running now (innermost last)


class CannotCompile(Exception):
    """Raised while building a program that ``diffsci.jit`` cannot compile (it runs eagerly)."""


class Ref:
    """A reference to the value of record ``idx`` inside a traced program."""

    __slots__ = ("idx",)

    def __init__(self, idx):
        self.idx = idx

    def __repr__(self):
        return f"v{self.idx}"


class Guard:
    """A value-dependent decision taken while tracing, to be re-checked on every call."""

    __slots__ = ("pos", "fun", "args", "kwargs", "observed", "label")

    def __init__(self, pos, fun, args, kwargs, observed, label):
        self.pos = pos  # number of records when it was taken (its inputs all come before)
        self.fun = fun  # plain function of the argument values (np.greater, bool, ...)
        self.args = args  # Ref or constant, per argument
        self.kwargs = kwargs
        self.observed = observed
        self.label = label


class Node:
    """One primitive call of the traced program, in plain terms."""

    __slots__ = ("idx", "prim", "fun", "args", "kwargs", "value", "in_kinds")

    def __init__(self, idx, prim, fun, args, kwargs, value, values=None):
        self.idx = idx
        self.prim = prim
        self.fun = fun
        self.args = args  # Ref or constant, per positional argument
        self.kwargs = kwargs or {}
        self.value = value  # the value seen while tracing (shape, dtype, type)
        self.in_kinds = tuple(_kind(values[a.idx] if isinstance(a, Ref) else a) for a in args) \
            if values is not None else ()


@dataclasses.dataclass
class Program:
    """A traced function: inputs, nodes, guards and outputs."""

    n_inputs: int
    input_values: list
    nodes: list
    guards: list
    out_tree: object
    outputs: list  # Ref or constant, per output leaf
    values: dict  # record index -> value seen while tracing (inputs and nodes)


class _Trace:
    """The state of one jit trace while the function runs."""

    def __init__(self):
        self.tape = Tape("jit")
        self.guards = []
        self.problems = []  # why this trace cannot be compiled (it then runs eagerly)
        self.customs = {}  # record index -> (custom_vjp, argument leaves, their tree)

    # -- observations -----------------------------------------------------------------
    def ref(self, x):
        """A Ref if ``x`` holds (at some level) a value of this trace, else None."""
        while type(x) is Tracer or type(x) is Dual:
            if x._tape is self.tape:
                return Ref(x._idx)
            x = x._value
        return None

    def observe(self, fun, args, kwargs, result, depth=2):
        refs = [self.ref(a) for a in args]
        kw = {}
        for k, v in (kwargs or {}).items():
            if self.ref(v) is not None or _holds_tracer(v):
                self.problems.append(f"{_name(fun)} took a traced keyword argument {k!r}")
                return
            kw[k] = v
        if all(r is None for r in refs):
            if any(_holds_tracer(a) for a in args):
                self.problems.append(
                    f"{_name(fun)} looked at the value of a sequence holding traced values")
            return  # nothing this trace computes was looked at: no guard
        gargs = []
        for a, r in zip(args, refs):
            if r is not None:
                gargs.append(r)
            elif _holds_tracer(a):
                self.problems.append(
                    f"{_name(fun)} looked at the value of a sequence holding traced values")
                return
            else:
                gargs.append(getval(a))
        obs = result.copy() if isinstance(result, np.ndarray) else result
        self.guards.append(Guard(len(self.tape.records), fun, tuple(gargs), kw, obs,
                                 f"{_name(fun)}(...) -> {_short(result)} at {_where(depth)}"))


def _kind(v):
    dt = getattr(v, "dtype", None)
    if dt is None:
        try:
            dt = np.result_type(v)
        except (TypeError, ValueError):
            return "O"
    return np.dtype(dt).kind


_PRIMITIVES = {}  # id(Rules) -> the primitive owning them (vjps, cvjps or cvjps1)


def primitive_of(rules):
    """The primitive a record's rules belong to (cached; found first among the functions of
    the loaded modules of diffsci and its domain packages and their closures, which takes
    milliseconds, then among all live functions, a scan of the heap for user primitives)."""
    p = _PRIMITIVES.get(id(rules))
    if p is None:
        for scan in (_module_primitives, all_primitives):
            for p in scan():
                for r in (p.vjps, p.cvjps, p.cvjps1):
                    _PRIMITIVES[id(r)] = p
            p = _PRIMITIVES.get(id(rules))
            if p is not None:
                break
    return p


_PACKAGES = ("diffsci", "raytrace", "quantum", "sde", "finance")
_scanned = set()  # modules already scanned by _module_primitives


def _is_primitive(o):
    return type(o) is types.FunctionType and getattr(o, "is_primitive", False) is True \
        and isinstance(getattr(o, "vjps", None), Rules)


def _module_primitives():
    """The primitives that are functions of the (not yet scanned) loaded modules of the
    packages, or sit in the closures of those functions (public wrappers)."""
    out = []
    for name, mod in list(sys.modules.items()):
        if mod is None or name in _scanned or name.split(".")[0] not in _PACKAGES:
            continue
        _scanned.add(name)
        for o in list(vars(mod).values()):
            if type(o) is not types.FunctionType:
                continue
            if _is_primitive(o):
                out.append(o)
            for cell in o.__closure__ or ():
                try:
                    c = cell.cell_contents
                except ValueError:
                    continue
                if _is_primitive(c):
                    out.append(c)
    return out


def all_primitives():
    """Every primitive alive in the process (diffsci's and the user's)."""
    import gc

    return [o for o in gc.get_objects() if _is_primitive(o)]


def _holds_tracer(v):
    tv = type(v)
    if tv is Tracer or tv is Dual:
        return True
    if tv is list or tv is tuple:
        return any(_holds_tracer(a) for a in v)
    if tv is dict:
        return any(_holds_tracer(a) for a in v.values())
    return False


def _name(fun):
    return getattr(fun, "__name__", None) or type(fun).__name__


def _short(v):
    s = repr(v)
    return s if len(s) <= 40 else s[:37] + "..."


def _where(depth):
    """``file:line`` of the first frame outside diffsci's own package (the user's code)."""
    f = sys._getframe(depth)
    pkg = _core.__file__.rsplit("/", 1)[0]
    while f is not None and f.f_code.co_filename.startswith(pkg):
        f = f.f_back
    if f is None:
        return "?"
    return f"{f.f_code.co_filename.rsplit('/', 1)[-1]}:{f.f_lineno}"


def _observing(fun):
    """``fun(*args)`` of plain values, recorded as a guard when a jit value was looked at."""

    def observe(*args, **kwargs):
        res = fun(*[getval(a) for a in args], **{k: getval(v) for k, v in kwargs.items()})
        for tr in _active:
            tr.observe(fun, args, kwargs, res, depth=3)
        return res

    return observe


#: Non-differentiable functions of shapes and dtypes only: looking at them decides nothing.
_STATIC = {getattr(np, n) for n in (
    "shape", "ndim", "size", "result_type", "can_cast", "common_type", "broadcast_shapes",
    "may_share_memory", "shares_memory", "iscomplexobj", "isrealobj", "isscalar", "zeros",
    "ones", "empty", "eye", "identity", "tri", "zeros_like", "ones_like", "empty_like",
    "indices", "diag_indices", "tril_indices", "triu_indices", "tril_indices_from",
    "triu_indices_from", "diag_indices_from") if hasattr(np, n)}


def _observe_nondiff(fun, args, kwargs):
    res = fun(*[getval(a) for a in args], **{k: getval(v) for k, v in kwargs.items()})
    if fun in _STATIC:
        return res
    for tr in _active:
        tr.observe(fun, args, kwargs, res, depth=3)
    return res


def _cmp(ufunc):
    def m(self, other):
        res = ufunc(getval(self), getval(other))
        for tr in _active:
            tr.observe(ufunc, (self, other), None, res, depth=3)
        return res

    return m


def _item(x, *a):
    return np.asarray(x).item(*a)


def _tolist(x):
    return np.asarray(x).tolist()


def _index(x):
    return x.__index__()


_METHODS = {
    "__eq__": _cmp(np.equal), "__ne__": _cmp(np.not_equal), "__lt__": _cmp(np.less),
    "__le__": _cmp(np.less_equal), "__gt__": _cmp(np.greater),
    "__ge__": _cmp(np.greater_equal),
    "__bool__": lambda self: _observing(bool)(self),
    "__int__": lambda self: _observing(int)(self),
    "__index__": lambda self: _observing(_index)(self),
    "item": lambda self, *a: _observing(_item)(self, *a),
    "tolist": lambda self: _observing(_tolist)(self),
    "__format__": lambda self, spec: _observing(format)(self, spec),
}


def _tree_map_keeping_jit(f, tree, *rest):
    """``diffsci._api.tree_map`` while tracing: ``stop_gradient`` (``tree_map(getval, x)``)
    keeps the jit level, which stages the computation rather than differentiating it."""
    return _TREE_MAP(_stop if f is getval else f, tree, *rest)


def _stop(x):
    """``stop_gradient`` while tracing: strip the levels above a jit level, keep that one."""
    while type(x) is Tracer or type(x) is Dual:
        for tr in _active:
            if x._tape is tr.tape:
                return x
        x = x._value
    return x


def _custom_call(self, *args):
    """``custom_vjp.__call__`` while tracing: remember the arguments of the calls recorded at
    a jit level (the record keeps only the traced ones; the driver re-runs ``fwd``)."""
    marks = [(tr, len(tr.tape.records)) for tr in _active]
    out = _CUSTOM_CALL(self, *args)
    for tr, n0 in marks:
        recs = tr.tape.records
        for r in recs[n0:]:
            owner = getattr(r._rules, "__self__", None)
            if owner is self and r._idx not in tr.customs:
                leaves, tree = tree_flatten(args)
                tr.customs[r._idx] = (self, leaves, tree)
    return out


class _Observing:
    """While active: the value-reading methods of traced values record guards."""

    def __enter__(self):
        self.saved = []
        for T in (Tracer, Dual):
            for name, m in _METHODS.items():
                self.saved.append((T, name, T.__dict__.get(name)))
                setattr(T, name, m)
        self.saved_observe = _core.observe, _api.tree_map
        _core.observe = _observe_nondiff
        _api.tree_map = _tree_map_keeping_jit
        _custom.custom_vjp.__call__ = _custom_call
        self.masks = _masks.substituted()  # rules whose masks would be constants (_masks.py)
        self.masks.__enter__()

    def __exit__(self, *exc):
        for T, name, m in self.saved:
            if m is None:
                delattr(T, name)
            else:
                setattr(T, name, m)
        _core.observe, _api.tree_map = self.saved_observe
        _custom.custom_vjp.__call__ = _CUSTOM_CALL
        self.masks.__exit__(*exc)


# ---------------------------------------------------------------------------
# Running the function on the jit tape
# ---------------------------------------------------------------------------
def trace(call, values):
    """Run ``call(*tracers)`` with one jit-level tracer per value; returns (trace, outputs)."""
    with _lock:
        tr = _Trace()
        tracers = [tr.tape.leaf(_private(v)) for v in values]
        tr.n_inputs = len(tracers)
        outer = not _active
        _active.append(tr)
        try:
            if outer:
                with _Observing():
                    out = call(tracers)
            else:
                out = call(tracers)
        finally:
            _active.pop()
            close(tr.tape)
        return tr, out


def _private(v):
    if isinstance(v, np.ndarray):
        return np.array(v, copy=True)
    return v


def build(tr, out_leaves, out_tree, externals_ids):
    """The :class:`Program` of a finished trace (raises CannotCompile with the reason)."""
    if tr.problems:
        raise CannotCompile(tr.problems[0])
    recs = tr.tape.records
    by_id = {}
    values = {}
    n_in = 0
    nodes = []
    for r in recs:
        v = r._value
        if isinstance(v, (np.ndarray, np.generic)):
            by_id[id(v)] = r._idx
        values[r._idx] = v
        rules = r._rules
        if rules is None:
            if r._parents is None and r._idx < tr.n_inputs:
                n_in += 1
                continue
            raise CannotCompile("an in-place write into a buffer created inside the function")
        if type(rules) is not Rules:
            node = _special_node(tr, r, by_id, values)
            if node is None:
                owner = getattr(rules, "__self__", None)
                what = (f"the custom rule {type(owner).__name__}" if owner is not None
                        else "an in-place write (x[i] = v) or a custom rule")
                raise CannotCompile(f"{what} is recorded as a special record")
            nodes.append(node)
            continue
        prim = primitive_of(rules)
        if prim is None:
            raise CannotCompile(f"record of unknown primitive {rules.name!r}")
        parents = r._parents

        def const(a):
            if isinstance(a, (np.ndarray, np.generic)):
                k = by_id.get(id(a))
                if k is not None:
                    return Ref(k)  # a record's plain value reused (getval/stop_gradient)
            if _holds_tracer(a):
                raise CannotCompile(f"{rules.name} got a traced value inside a container")
            return a

        if type(parents) is int:
            if rules is prim.vjps:
                args = [Ref(parents)]
            elif rules is prim.cvjps:
                args = [Ref(parents), const(r._args[1])]
            else:
                args = [const(r._args[0]), Ref(parents)]
        else:
            args = [Ref(p) if p is not None else const(a) for p, a in zip(parents, r._args)]
        kw = r._kwargs
        if kw and _holds_tracer(list(kw.values())):
            raise CannotCompile(f"{rules.name} got a traced keyword argument")
        nodes.append(Node(r._idx, prim, prim.fun, args, kw, v, values))
    outputs = []
    for o in out_leaves:
        if type(o) is Tracer and o._tape is tr.tape:
            outputs.append(Ref(o._idx))
        elif type(o) is Tracer or type(o) is Dual:
            raise CannotCompile("an output holds a value traced by another transform")
        elif isinstance(o, (np.ndarray, np.generic)) and id(o) in by_id:
            outputs.append(Ref(by_id[id(o)]))
        else:
            outputs.append(o)
    return Program(n_in, [values[i] for i in range(n_in)], nodes, tr.guards, out_tree,
                   outputs, values)


class _Opaque:
    """Stands for a primitive in a node computed by a plain Python call (custom rules)."""

    def __init__(self, name, fun):
        self.__name__ = name
        self.fun = fun


def _special_node(tr, r, by_id, values):
    """A custom_vjp record as a node that re-runs its ``fwd`` (None: not one of those)."""
    if r._rules is _custom._project_back:
        j = r._args[0]
        fun = _Pick(j)
        return Node(r._idx, _Opaque("custom_vjp output", fun), fun, [Ref(r._parents[0])], None,
                    r._value, values)
    info = tr.customs.get(r._idx)
    if info is None:
        return None
    owner, leaves, tree = info
    args = []
    for x in leaves:
        ref = tr.ref(x) if type(x) is Tracer and x._tape is tr.tape else None
        if ref is not None:
            args.append(ref)
        elif type(x) is Tracer or type(x) is Dual:
            return None
        elif isinstance(x, (np.ndarray, np.generic)) and id(x) in by_id:
            args.append(Ref(by_id[id(x)]))
        else:
            args.append(x)
    fun = _CustomForward(owner, tree, multi=isinstance(r._value, list))
    name = getattr(owner, "__name__", "custom_vjp")
    return Node(r._idx, _Opaque(f"custom_vjp {name}", fun), fun, args, None, r._value, values)


class _CustomForward:
    """``fwd(*args)[0]`` of a custom_vjp function, from its argument leaves."""

    def __init__(self, owner, tree, multi):
        self.owner, self.tree, self.multi = owner, tree, multi

    def __call__(self, *leaves):
        out, _ = self.owner.fwd(*tree_unflatten(self.tree, list(leaves)))
        return tree_flatten(out)[0] if self.multi else out


class _Pick:
    def __init__(self, j):
        self.j = j

    def __call__(self, outs):
        return outs[self.j]


# ---------------------------------------------------------------------------
# What the function reads from outside: closures, globals, defaults
# ---------------------------------------------------------------------------
_SCALARS = (bool, int, float, complex, str, np.generic)


def externals(f, depth=3):
    """``[(getter, obj)]`` for the arrays and Python numbers ``f`` can read from outside.

    ``getter()`` fetches what the name points to now.  Containers (lists, tuples, dicts,
    dataclasses, plain objects) are searched ``depth`` levels deep, functions through their
    own closures and globals.
    """
    out = []
    seen = set()

    def visit(obj, getter, d):
        if isinstance(obj, np.ndarray):
            out.append((getter, obj))
            return
        if isinstance(obj, _SCALARS):
            out.append((getter, obj))
            return
        if d <= 0 or id(obj) in seen or isinstance(obj, (type, types.ModuleType)):
            return
        seen.add(id(obj))
        if isinstance(obj, types.FunctionType):
            visit_function(obj, d - 1)
        elif isinstance(obj, types.MethodType):
            visit(obj.__self__, lambda o=obj: o.__self__, d - 1)
            visit_function(obj.__func__, d - 1)
        elif isinstance(obj, (list, tuple)):
            for i, v in enumerate(obj):
                visit(v, lambda g=getter, i=i: _get_item(g(), i), d - 1)
        elif isinstance(obj, dict):
            for k, v in list(obj.items()):
                visit(v, lambda g=getter, k=k: _get_item(g(), k), d - 1)
        elif hasattr(obj, "__dict__") and not callable(obj):
            for k, v in list(vars(obj).items()):
                visit(v, lambda g=getter, k=k: _get_attr(g(), k), d - 1)
        elif hasattr(obj, "func") and hasattr(obj, "args"):  # functools.partial
            visit(obj.func, lambda g=getter: g().func, d - 1)
            visit(obj.args, lambda g=getter: g().args, d - 1)
            visit(obj.keywords, lambda g=getter: g().keywords, d - 1)

    def visit_function(fn, d):
        if id(fn.__code__) in seen:
            return
        seen.add(id(fn.__code__))
        if fn.__module__ and fn.__module__.split(".")[0] in ("diffsci", "numpy", "scipy"):
            return
        for cell in fn.__closure__ or ():
            try:
                v = cell.cell_contents
            except ValueError:
                continue
            visit(v, lambda c=cell: c.cell_contents, d)
        g = fn.__globals__
        for name in _names(fn.__code__):
            if name in g:
                visit(g[name], lambda g=g, n=name: g[n], d)
        for i, v in enumerate(fn.__defaults__ or ()):
            visit(v, lambda fn=fn, i=i: fn.__defaults__[i], d)
        for k, v in (fn.__kwdefaults__ or {}).items():
            visit(v, lambda fn=fn, k=k: fn.__kwdefaults__[k], d)

    visit(f, lambda: f, depth + 1)
    return out


def _names(code):
    names = set(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            names |= _names(c)
    return names


def _get_item(obj, k):
    return obj[k]


def _get_attr(obj, k):
    return getattr(obj, k)


# ---------------------------------------------------------------------------
# Two traces of one signature: does the program depend on values no guard covers?
# ---------------------------------------------------------------------------
def _equal(a, b):
    """Whether two constants of two traces are the same (arrays by content, NaNs equal;
    functions by code; an object neither knows how to compare counts as the same)."""
    if isinstance(a, Ref) or isinstance(b, Ref):
        return isinstance(a, Ref) and isinstance(b, Ref) and a.idx == b.idx
    if isinstance(a, (np.ndarray, np.generic)) or isinstance(b, (np.ndarray, np.generic)):
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape or a.dtype != b.dtype:
            return False
        try:
            return bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
        except TypeError:  # object arrays
            return all(_equal(x, y) for x, y in zip(a.ravel(), b.ravel()))
    if type(a) is not type(b):
        return False
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    if isinstance(a, (bool, int, float, complex, str, bytes, slice, type(None))):
        return a == b or (a != a and b != b)  # NaN
    code_a, code_b = getattr(a, "__code__", None), getattr(b, "__code__", None)
    if code_a is not None:
        return code_a is code_b
    if isinstance(a, (_Pick, _CustomForward, _Opaque)):
        return all(_equal(x, vars(b)[k]) for k, x in vars(a).items())
    return True


def same_path(a, b):
    """Whether two traces took the same path: the same guards, with the same outcomes."""
    if len(a.guards) != len(b.guards):
        return False
    return all(g.pos == h.pos and _equal(g.fun, h.fun) and _equal(g.observed, h.observed)
               and _equal(list(g.args), list(h.args)) for g, h in zip(a.guards, b.guards))


def twin_difference(a, b):
    """What differs between programs ``a`` and ``b``, two traces of one signature at two
    inputs, or None.  Returns None as well when their guards came out differently (the two
    inputs take different paths: another specialization, nothing to compare).

    The same program at any two inputs on one path is what a compiled specialization
    assumes: every value it looks at is a record (recomputed by the code) or a guard.  A
    constant that differs was computed from the inputs by plain code while tracing, and
    would be kept from the first input."""
    if not same_path(a, b):
        return None
    for m, n in zip(a.nodes, b.nodes):
        name = getattr(m.prim, "__name__", "?")
        if m.idx != n.idx or not _equal(m.fun, n.fun):
            return f"operation {m.idx} is {name}, then {getattr(n.prim, '__name__', '?')}"
        if len(m.args) != len(n.args):
            return f"{name} (operation {m.idx}) got {len(m.args)} arguments, then {len(n.args)}"
        for k, (x, y) in enumerate(zip(m.args, n.args)):
            if not _equal(x, y):
                return (f"argument {k} of {name} (operation {m.idx}) is "
                        f"{_short(x)}, then {_short(y)}")
        if not _equal(m.kwargs, n.kwargs):
            return f"the keywords of {name} (operation {m.idx}) differ"
        if (getattr(m.value, "shape", None), _kind(m.value)) != (
                getattr(n.value, "shape", None), _kind(n.value)):
            return None  # another path: a result of another shape or dtype fails the check
            # of the compiled call (GuardFail), as a guard would
    if len(a.nodes) != len(b.nodes):
        return f"{len(a.nodes)} operations, then {len(b.nodes)}"
    if not _equal(a.outputs, b.outputs):
        return "an output that is a constant differs"
    return None


def program_of(fun, args):
    """The traced Program of ``fun(*args)``, built as ``jit`` builds it (for tests and tools:
    trace a function at two inputs and compare the programs with ``twin_difference``)."""
    from .._tree import tree_flatten

    tr, out = trace(lambda t: fun(*t), list(args))
    try:
        leaves, tree = tree_flatten(out)
        return build(tr, leaves, tree, None)
    finally:
        tr.tape.records.clear()
