"""The recording layer: traced values, the tape, primitives and the reverse sweep.

Everything differentiable bottoms out in a *primitive*: a plain function on
NumPy values wrapped by :func:`primitive`.  When a primitive is called with a
:class:`Tracer` among its positional arguments it unwraps the tracers of the
innermost active trace, runs the plain function, appends one record to that
trace's tape and returns a new tracer.  The backward sweep walks the tape once,
in reverse, calling one vector-Jacobian rule per traced argument.

Design notes (the README's "Layout"; diffsci/DERIVATIONS.md for the in-place repairs):

* A tape is a flat Python list of tracers: each traced value *is* its own
  record (value, tape, index, rules, parents, saved args, kwargs), so one op
  costs one object.  A one-argument call stores its parent index and argument
  directly (no tuples); other calls store ``parents`` aligned with ``args``
  (a record index, or ``None`` for an untraced argument).  No per-op
  closures, no topological sort: record order *is* a topological order.
* Trace levels make nesting safe (``grad`` of ``grad``; a ``grad`` inside a
  function being differentiated).  Every tape gets a fresh, increasing level;
  a primitive only unwraps the tracers of the highest level among its
  arguments and, if lower-level tracers remain, calls itself again so the
  outer trace records too.  Because rules are written with NumPy calls, and
  NumPy calls on tracers dispatch back to primitives, the backward pass run
  under an outer trace is itself recorded: reverse-over-reverse for free.
* Gradient accumulation keeps the first contribution by reference, makes a
  new array on the second and adds in place from then on.
* Forward mode shares the levels: a :class:`Dual` carries a tangent, and a
  primitive applied to duals adds up its JVP rules eagerly (no tape).  A
  primitive without a JVP rule gets one from its VJP (:func:`_jvp_from_vjp`).
* In-place writes (``x[i] = v``) are records too; ``_inplace.py`` keeps their
  undo log, which the sweep replays (see :func:`backward`).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

__all__ = [
    "Dual",
    "ForwardTrace",
    "Tracer",
    "record",
    "Tape",
    "primitive",
    "defvjp",
    "defvjp_const",
    "defjvp",
    "nondifferentiable",
    "is_tracer",
    "top_trace",
    "getval",
    "MissingRuleError",
    "UnexpectedTracerError",
    "TracerConversionError",
    "close",
]

_ndarray = np.ndarray
_levels = itertools.count(1)
#: Turns a (nested) list/tuple holding traced values into one traced array; set by
#: diffsci.numpy (a ufunc primitive called on ``[x, y]`` stacks it, as NumPy converts lists).
stack_sequence = None
#: ``observe(fun, args, kwargs)`` computes the nondifferentiable functions while diffsci.jit
#: traces (it records what the trace looked at as a guard: diffsci/_jit/_trace.py); else None.
observe = None


def _has_traced(seq):
    for v in seq:
        tv = type(v)
        if tv is Tracer or tv is Dual or ((tv is list or tv is tuple) and _has_traced(v)):
            return True
    return False


class _Missing:
    """Marks an absent positional argument in the primitive wrapper's signature."""

    __slots__ = ()

    def __repr__(self):
        return "<no argument>"


_NO = _Missing()


class MissingRuleError(NotImplementedError):
    """Raised when a primitive is differentiated along an argument it has no rule for."""


class UnexpectedTracerError(RuntimeError):
    """A traced value was used after the transform that traced it had returned (it escaped,
    e.g. through a list or a global, from an inner ``grad``/``jvp``): its derivative would be
    lost silently."""


class TracerConversionError(TypeError):
    """A traced value was converted to a plain Python number or array (``float(x)``,
    ``math.sin(x)``, ``np.asarray(x)``), which would cut its gradient silently."""


class _Records(list):
    """A tape's records while its function runs."""

    __slots__ = ()


class _ClosedRecords(list):
    """A tape's records after its function returned: readable, but recording on it raises
    :class:`UnexpectedTracerError` (a tracer that escaped its transform)."""

    __slots__ = ()

    def append(self, rec):
        raise escaped(rec._tape)

    def __setitem__(self, i, rec):
        raise escaped(rec._tape)


def escaped(trace):
    """The error for a value of ``trace`` used after its transform returned."""
    return UnexpectedTracerError(
        f"a value traced by diffsci.{getattr(trace, 'origin', None) or 'transform'} was used "
        f"after that {getattr(trace, 'origin', None) or 'transform'} call had returned (it "
        f"escaped through a list, a global, a closure or an attribute). Its derivative would "
        f"be lost. Return the value from the function being differentiated instead (use "
        f"has_aux=True for extra outputs), or take diffsci.stop_gradient(x) inside it."
    )


def close(trace):
    """Mark ``trace`` as finished: its tracers can no longer be used in computations."""
    if type(trace) is Tape:
        trace.records.__class__ = _ClosedRecords
    else:
        trace.writes = _CLOSED


class _Closed:
    __slots__ = ()


_CLOSED = _Closed()  # a ForwardTrace's ``writes`` once its jvp returned


class Rules(dict):
    """A primitive's rules: argnum -> rule function, plus the primitive's name."""

    __slots__ = ("name",)

    def __init__(self, name):
        super().__init__()
        self.name = name


class Tape:
    """One trace: a level (for nesting) and a flat list of records (tracers)."""

    __slots__ = ("level", "records", "writes", "plan", "origin", "__weakref__")

    def __init__(self, origin=None):
        self.level = next(_levels)
        self.records = _Records()
        self.origin = origin  # the transform's name, for error messages
        self.writes = None  # indices of in-place write records (see _inplace.py)
        self.plan = None  # the repairs of stale views a sweep needs (see _inplace._plan)

    def leaf(self, value):
        """Start tracing ``value`` on this tape; returns its tracer."""
        recs = self.records
        t = Tracer(value, self, len(recs), None, None, None, None)
        recs.append(t)
        return t


class Tracer:
    """A value being traced for reverse-mode differentiation (and its tape record).

    It behaves like the NumPy array it wraps: arithmetic operators, NumPy
    ufuncs and functions (through ``__array_ufunc__`` / ``__array_function__``),
    the common ndarray methods and attributes.  ``float(t)``, ``int(t)``,
    ``bool(t)`` and ``t.item()`` return plain Python values and therefore cut
    the gradient (as in PyTorch); comparisons return plain boolean arrays, so
    data-dependent control flow just works.

    Record fields: ``_rules`` (the primitive's :class:`Rules`, or a callable
    for a special record, or ``None`` for a leaf), ``_parents`` (``None`` for a
    leaf; an ``int`` for a one-argument call, whose argument is ``_args``;
    otherwise a tuple aligned with the tuple ``_args``), ``_kwargs``.
    """

    __slots__ = ("_value", "_tape", "_idx", "_rules", "_parents", "_args", "_kwargs")
    # Make ndarray binary operators defer to us (``ndarray * tracer``).
    __array_priority__ = 1000.0

    def __init__(self, value: Any, tape: Any, idx: int, rules: Any, parents: Any, args: Any,
                 kwargs: Any) -> None:
        self._value = value
        self._tape = tape
        self._idx = idx
        self._rules = rules
        self._parents = parents
        self._args = args
        self._kwargs = kwargs

    def __repr__(self):
        return f"Tracer({self._value!r}, level={self._tape.level})"

    # Array methods, operators and the NumPy protocols are attached in
    # diffsci/numpy/_tracer_methods.py, next to the primitives they call.


def record(tape, value, rules, parents, args, kwargs=None):
    """Append a record to ``tape`` and return its tracer (for special records)."""
    recs = tape.records
    t = Tracer(value, tape, len(recs), rules, parents, args, kwargs)
    recs.append(t)
    return t


class ForwardTrace:
    """One forward-mode trace: only a level (dual values carry their tangents)."""

    __slots__ = ("level", "writes", "by_root", "origin", "__weakref__")

    def __init__(self, origin="jvp"):
        self.level = next(_levels)
        self.origin = origin
        self.writes = None  # log of in-place writes (see _inplace._setitem_dual)
        self.by_root = None


class Dual:
    """A value carrying a tangent for forward mode (a dual number over arrays).

    Same ndarray face as :class:`Tracer` (the methods are attached to both).
    Rules run eagerly: a primitive applied to duals returns a dual whose
    tangent is the sum of the primitive's JVP rules over its dual arguments.
    """

    __slots__ = ("_value", "_tangent", "_tape", "_ver")
    __array_priority__ = 1000.0

    def __init__(self, value, tangent, trace):
        self._value = value
        self._tangent = tangent
        self._tape = trace

    def __repr__(self):
        return f"Dual({self._value!r}, tangent={self._tangent!r}, level={self._tape.level})"


def is_tracer(x):
    """True if ``x`` is a traced value (reverse or forward mode, any nesting level)."""
    return type(x) is Tracer or type(x) is Dual


def top_trace(values):
    """The innermost (highest-level) trace among ``values``' tracers, or None."""
    top = None
    for x in values:
        if (type(x) is Tracer or type(x) is Dual) and (top is None or x._tape.level > top.level):
            top = x._tape
    return top


def getval(x):
    """The plain value under any number of trace levels (cuts the gradient)."""
    while type(x) is Tracer or type(x) is Dual:
        x = x._value
    return x


# ---------------------------------------------------------------------------
# Primitives
# ---------------------------------------------------------------------------
def primitive(fun: Callable[..., Any] | None = None, *, name: str | None = None) -> Any:
    """Wrap a plain function on arrays as a differentiable primitive.

    The wrapped function behaves exactly like ``fun`` on plain values; on
    traced values it records itself.  Give it rules with :func:`defvjp`
    (reverse mode) and :func:`defjvp` (forward mode).  Only *positional*
    arguments are traced; keyword arguments are passed through unchanged.

    Example::

        @primitive
        def cube(x):
            return x ** 3
        defvjp(cube, lambda g, ans, x: g * 3 * x ** 2)
    """
    if fun is None:
        return lambda f: primitive(f, name=name)
    vjps = Rules(name or getattr(fun, "__name__", "primitive"))
    jvps = Rules(vjps.name)
    cvjps = Rules(vjps.name)  # rules for ``x op c`` with a Python scalar c (defvjp_const)
    cvjps1 = Rules(vjps.name)  # ... and for ``c op x``
    new = object.__new__
    # A NumPy ufunc takes out= positionally after its inputs, and where=: see _inplace.ufunc_out
    ufunc = fun if isinstance(fun, np.ufunc) else None
    unary_ufunc = ufunc is not None and ufunc.nin == 1

    def general(args, kwargs):
        # Any arity, any mix of trace levels and modes.
        if ufunc is not None and (len(args) > ufunc.nin
                                  or (kwargs and ("out" in kwargs or "where" in kwargs))):
            return _inplace.ufunc_out(wrapped, ufunc, args, kwargs)
        top = None
        level = 0
        for a in args:
            ta = type(a)
            if (ta is Tracer or ta is Dual) and a._tape.level > level:
                top = a._tape
                level = top.level
        if kwargs:
            for k, v in kwargs.items():
                if type(v) is Tracer or type(v) is Dual:
                    raise TypeError(
                        f"{vjps.name}: the traced value passed as keyword argument {k!r} would "
                        f"not be differentiated; pass it positionally"
                    )
        if top is None:
            return fun(*args, **kwargs) if kwargs else fun(*args)
        if type(top) is ForwardTrace:
            return forward(top, args, kwargs)
        vals = list(args)
        parents = [None] * len(args)
        nested = False
        for i, a in enumerate(args):
            ta = type(a)
            if ta is Tracer and a._tape is top:
                vals[i] = v = a._value
                parents[i] = a._idx
                nested = nested or type(v) is Tracer or type(v) is Dual
            elif ta is Tracer or ta is Dual:
                nested = True
        kwargs = kwargs or None
        if nested:
            ans = wrapped(*vals, **kwargs) if kwargs else wrapped(*vals)
        else:
            ans = fun(*vals, **kwargs) if kwargs else fun(*vals)
        recs = top.records
        t = Tracer(ans, top, len(recs), vjps, tuple(parents), tuple(vals), kwargs)
        recs.append(t)
        return t

    def forward(top, args, kwargs):
        # Forward mode: primal by recursion (lower levels record themselves),
        # tangent as the sum of the JVP rules of the dual arguments.
        primals = list(args)
        duals = []
        for i, a in enumerate(args):
            if type(a) is Dual and a._tape is top:
                primals[i] = a._value
                duals.append((i, a._tangent))
        if top.writes is not None:  # memory was written in place: tangents of views catch up
            if top.writes is _CLOSED:
                raise escaped(top)
            for k, (i, _t) in enumerate(duals):
                duals[k] = (i, _inplace.tangent(args[i]))
        ans = wrapped(*primals, **kwargs) if kwargs else wrapped(*primals)
        kwargs = kwargs or {}
        out = None
        for i, t in duals:
            rule = jvps.get(i)
            if rule is None:
                c = _jvp_from_vjp(vjps, i, t, ans, primals, kwargs)
            else:
                c = rule(t, ans, *primals, **kwargs)
            out = c if out is None else out + c
        if not isinstance(out, (_ndarray, Tracer, Dual)):  # Python/NumPy scalars lack shapes
            out = np.asarray(out)
        d = Dual(ans, out, top)
        if top.writes is not None:
            d._ver = len(top.writes)
        return d

    # The fast paths below are ``general`` unrolled for one and two positional
    # arguments at a single reverse-mode level, without keyword arguments: they
    # carry most of the per-op overhead budget (benchmarks/bench_overhead.py).
    def wrapped(a=_NO, b=_NO, /, *rest, **kwargs):
        # One or two positional arguments, no keywords: the fast paths.  The
        # positional-only defaults spare the *args tuple of the common calls.
        if kwargs or rest or a is _NO:
            return general(tuple(x for x in (a, b) if x is not _NO) + rest, kwargs)
        if b is _NO:
            if type(a) is not Tracer:
                if type(a) is Dual:  # forward mode, one argument at one level: inline
                    v = a._value
                    rule = jvps.get(0)
                    if (rule is None or type(v) is Tracer or type(v) is Dual
                            or a._tape.writes is not None):
                        return general((a,), None)
                    ans = fun(v)
                    t = rule(a._tangent, ans, v)
                    if not isinstance(t, (_ndarray, Tracer, Dual)):
                        t = np.asarray(t)
                    return Dual(ans, t, a._tape)
                if ufunc is not None and (type(a) is list or type(a) is tuple) and _has_traced(a):
                    return wrapped(stack_sequence(a))  # np.sin([x, y])
                return fun(a)
            v = a._value
            if type(v) is not _ndarray and (type(v) is Tracer or type(v) is Dual):
                return general((a,), None)
            ans = fun(v)
            tape = a._tape
            recs = tape.records
            # object.__new__ + stores here skips the __init__ frame (~0.1 µs per op).
            t = new(Tracer)
            t._value = ans
            t._tape = tape
            t._idx = len(recs)
            t._rules = vjps
            t._parents = a._idx
            t._args = v
            t._kwargs = None
            recs.append(t)
            return t
        if unary_ufunc:  # sin(x, out): out given positionally
            return general((a, b), None)
        return binary(a, b)

    def binary(a, b):
        # Two positional arguments (operators call this directly).
        ta = type(a)
        tb = type(b)
        if ta is Tracer:
            va = a._value
            if tb is Tracer:
                vb = b._value
                if (a._tape is not b._tape or type(va) is Tracer or type(vb) is Tracer
                        or type(va) is Dual or type(vb) is Dual):
                    return general((a, b), None)
                rules, parents = vjps, (a._idx, b._idx)
            else:
                if tb is Dual or (type(va) is not _ndarray
                                  and (type(va) is Tracer or type(va) is Dual)):
                    return general((a, b), None)
                vb = b
                if cvjps and (tb is float or tb is int):
                    # ``x op c`` with a Python scalar c: a one-parent record whose rule gets
                    # (x, c) as one tuple (see ``defvjp_const``): the sweep's cheapest path.
                    rules, parents = cvjps, a._idx
                else:
                    if ufunc is not None and (tb is list or tb is tuple):
                        # ``x * [1.0, 2.0]``: the rules need an array; ``x * [y, 2.0]`` stacks
                        if _has_traced(b):
                            return binary(a, stack_sequence(b))
                        vb = np.asarray(b)
                    rules, parents = vjps, (a._idx, None)
            tape = a._tape
        elif tb is Tracer:
            vb = b._value
            if ta is Dual or type(vb) is Tracer or type(vb) is Dual:
                return general((a, b), None)
            va = a
            if cvjps1 and (ta is float or ta is int):  # ``c op x``: as ``x op c`` above
                rules, parents = cvjps1, b._idx
            else:
                if ufunc is not None and (ta is list or ta is tuple):
                    if _has_traced(a):
                        return binary(stack_sequence(a), b)
                    va = np.asarray(a)
                rules, parents = vjps, (None, b._idx)
            tape = b._tape
        elif ta is Dual or tb is Dual:  # forward mode at one level: inline
            if ufunc is not None and (ta is list or ta is tuple or tb is list or tb is tuple) \
                    and _has_traced((a, b)):
                a, b = [stack_sequence(v) if type(v) in (list, tuple) else v for v in (a, b)]
                return binary(a, b)
            if ta is Dual:
                trace, va, ta_ = a._tape, a._value, a._tangent
                if tb is Dual:
                    if b._tape is not trace:
                        return general((a, b), None)
                    vb, tb_ = b._value, b._tangent
                else:
                    vb, tb_ = b, None
            else:
                trace, va, ta_, vb, tb_ = b._tape, a, None, b._value, b._tangent
            if (type(va) is Tracer or type(va) is Dual or type(vb) is Tracer
                    or type(vb) is Dual or trace.writes is not None):
                return general((a, b), None)
            r0 = jvps.get(0) if ta_ is not None else False
            r1 = jvps.get(1) if tb_ is not None else False
            if r0 is None or r1 is None:
                return general((a, b), None)
            ans = fun(va, vb)
            t = r0(ta_, ans, va, vb) if r0 else None
            if r1:
                c = r1(tb_, ans, va, vb)
                t = c if t is None else t + c
            if not isinstance(t, (_ndarray, Tracer, Dual)):
                t = np.asarray(t)
            return Dual(ans, t, trace)
        else:
            if ufunc is not None and (ta is list or ta is tuple or tb is list or tb is tuple) \
                    and _has_traced((a, b)):
                a, b = [stack_sequence(v) if type(v) in (list, tuple) else v for v in (a, b)]
                return binary(a, b)
            return fun(a, b)
        ans = fun(va, vb)
        recs = tape.records
        t = new(Tracer)
        t._value = ans
        t._tape = tape
        t._idx = len(recs)
        t._rules = rules
        t._parents = parents
        t._args = (va, vb)
        t._kwargs = None
        recs.append(t)
        return t

    wrapped.__name__ = name or getattr(fun, "__name__", "primitive")
    wrapped.__qualname__ = wrapped.__name__
    wrapped.__doc__ = getattr(fun, "__doc__", None)
    wrapped.__wrapped__ = fun
    wrapped.fun = fun
    wrapped.vjps = vjps
    wrapped.jvps = jvps
    wrapped.cvjps = cvjps
    wrapped.cvjps1 = cvjps1
    wrapped.is_primitive = True
    wrapped.binary = binary  # the two-argument fast path, for the Tracer operators
    return wrapped


def defvjp(prim: Any, *rules: Callable[..., Any] | None,
           argnums: Iterable[int] | None = None) -> Any:
    """Register vector-Jacobian rules for a primitive, one per positional argument.

    Each rule is ``rule(g, ans, *args, **kwargs) -> cotangent for that argument``
    where ``g`` is the output cotangent, ``ans`` the primitive's output and
    ``args``/``kwargs`` its plain inputs.  Rules must return the cotangent with
    the argument's shape (use :func:`diffsci.extend.unbroadcast`).  ``None`` in
    place of a rule leaves that argument without one.  Write rules with NumPy
    calls so they can themselves be differentiated (higher order).
    """
    argnums = range(len(rules)) if argnums is None else argnums
    for i, rule in zip(argnums, rules):
        if rule is not None:
            prim.vjps[i] = rule
    return prim


def defvjp_const(prim, rule, argnum=0):
    """Optional fast rule for ``prim(x, c)`` (``argnum=0``) or ``prim(c, x)`` (``argnum=1``)
    with traced x and a Python scalar c.

    ``rule(g, ans, args) -> cotangent of x`` where ``args`` is the argument tuple.  Such a call
    is then recorded with one parent, the reverse sweep's cheapest path (``x * 2.0``,
    ``1.0 + x``, ``x ** 2`` in tight loops).  Without one, the ordinary rules apply.
    """
    (prim.cvjps if argnum == 0 else prim.cvjps1)[0] = rule
    return prim


def defjvp(prim: Any, *rules: Callable[..., Any] | None,
           argnums: Iterable[int] | None = None) -> Any:
    """Register Jacobian-vector rules: ``rule(t, ans, *args, **kwargs)`` per argument.

    Stored for forward mode; the rule maps the argument's tangent ``t`` to the
    output's tangent.
    """
    argnums = range(len(rules)) if argnums is None else argnums
    for i, rule in zip(argnums, rules):
        if rule is not None:
            prim.jvps[i] = rule
    return prim


def nondifferentiable(fun, name=None):
    """Wrap ``fun`` so that it strips tracers from its inputs and returns plain values.

    Used for functions whose derivative is zero almost everywhere or which
    return non-float results (``floor``, ``argmax``, comparisons ...).
    """

    def wrapped(*args, **kwargs):
        if observe is not None: return observe(fun, args, kwargs)  # noqa: E701 (diffsci.jit)
        args = [getval(a) for a in args]
        if kwargs:
            kwargs = {k: getval(v) for k, v in kwargs.items()}
        return fun(*args, **kwargs)

    wrapped.__name__ = name or getattr(fun, "__name__", "nondifferentiable")
    wrapped.__qualname__ = wrapped.__name__
    wrapped.__doc__ = getattr(fun, "__doc__", None)
    wrapped.__wrapped__ = fun
    wrapped.fun = fun
    wrapped.is_nondifferentiable = True
    return wrapped


# ---------------------------------------------------------------------------
# The reverse sweep
# ---------------------------------------------------------------------------
def _jvp_from_vjp(vjps, argnum, t, ans, primals, kwargs):
    """Forward-mode fallback for a primitive with a VJP rule but no JVP rule.

    The VJP is linear in its cotangent v, so J t = ∇_v ⟨t, Jᵀ v⟩ (real inner
    product Re Σ conj(t)·Jᵀv): one reverse pass over the VJP rule itself.
    Explicit JVP rules (:func:`defjvp`) are faster; this keeps every primitive
    usable in forward mode.
    """
    rule = vjps.get(argnum)
    if rule is None:
        name = vjps.name
        raise MissingRuleError(
            f"primitive '{name}' has neither a forward-mode (JVP) nor a reverse-mode (VJP) "
            f"rule for positional argument {argnum}, which is being differentiated in forward "
            f"mode. Register one with diffsci.extend.defjvp({name}, ..., argnums=({argnum},))."
        )
    from ._api import grad  # the transforms sit above this layer

    a = getval(ans)
    v0 = np.zeros(np.shape(a), np.result_type(a))

    def pairing(v):
        c = rule(v, ans, *primals, **kwargs)
        prod = np.conj(t) * c if np.iscomplexobj(getval(c)) or np.iscomplexobj(getval(t)) \
            else t * c
        return np.sum(np.real(prod)) if np.iscomplexobj(getval(prod)) else np.sum(prod)

    return grad(pairing)(v0)


def _missing(rules, argnum):
    name = rules.name
    return MissingRuleError(
        f"primitive '{name}' has no reverse-mode (VJP) rule for positional argument "
        f"{argnum}, which is being differentiated. Register one with "
        f"diffsci.extend.defvjp({name}, ..., argnums=({argnum},)) "
        f"or wrap the computation in diffsci.custom_vjp."
    )


def _add(grads, owned, p, c):
    cur = grads[p]
    if cur is None or cur is _UNDO:
        grads[p] = c
    elif p in owned and type(cur) is _ndarray and type(c) is _ndarray and cur.dtype == c.dtype:
        cur += c
    else:
        grads[p] = cur + c
        owned.add(p)


def backward(tape, seeds):
    """Run the reverse sweep.

    Args:
        tape: the :class:`Tape` to walk.
        seeds: dict ``{record index: output cotangent}``.

    Returns:
        The list of accumulated cotangents, indexed by record (leaves keep
        theirs; interior entries are released as the sweep passes them).
    """
    recs = tape.records
    writes = tape.writes
    n = len(recs) if writes else max(seeds) + 1
    grads = [None] * n
    owned = set()
    for i, g in seeds.items():
        _add(grads, owned, i, g)
    if writes:  # in-place writes: repair stale views, visit every write to undo it
        _inplace.prepare(tape, grads)
        try:
            return _inplace.sweep_with_repairs(
                tape, grads, owned, lambda gs, hi, lo: _sweep(recs, gs, owned, hi, lo))
        finally:
            _inplace.redo(tape)
    return _sweep(recs, grads, owned, n)


def _sweep(recs, grads, owned, n, lo=0):
    for i in range(n - 1, lo - 1, -1):
        g = grads[i]
        if g is None:
            continue
        r = recs[i]
        parents = r._parents
        if type(parents) is int:  # one positional argument, no kwargs
            grads[i] = None
            rules = r._rules
            try:
                rule = rules[0]
            except KeyError:
                raise _missing(rules, 0) from None
            c = rule(g, r._value, r._args)
            if grads[parents] is None:
                grads[parents] = c
            else:
                _add(grads, owned, parents, c)
            continue
        if parents is None:  # a leaf: keep its gradient
            continue
        grads[i] = None
        rules = r._rules
        if type(rules) is not Rules:  # a special record (custom_vjp, ...)
            rules(grads, owned, g, r)
            continue
        args = r._args
        kwargs = r._kwargs
        ans = r._value
        if kwargs is None and len(parents) == 2:  # the common binary call, unrolled
            p, q = parents
            x, y = args
            if p is not None:
                try:
                    rule = rules[0]
                except KeyError:
                    raise _missing(rules, 0) from None
                c = rule(g, ans, x, y)
                if grads[p] is None:
                    grads[p] = c
                else:
                    _add(grads, owned, p, c)
            if q is not None:
                try:
                    rule = rules[1]
                except KeyError:
                    raise _missing(rules, 1) from None
                c = rule(g, ans, x, y)
                if grads[q] is None:
                    grads[q] = c
                else:
                    _add(grads, owned, q, c)
            continue
        argnum = -1
        for p in parents:
            argnum += 1
            if p is None:
                continue
            rule = rules.get(argnum)
            if rule is None:
                raise _missing(rules, argnum)
            c = rule(g, ans, *args, **kwargs) if kwargs else rule(g, ans, *args)
            if grads[p] is None:
                grads[p] = c
            else:
                _add(grads, owned, p, c)
    return grads


from . import _inplace  # noqa: E402  (in-place writes build on the records defined above)

_UNDO = _inplace._UNDO
