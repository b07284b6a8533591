"""The recording layer: traced values, the tape, primitives and the reverse sweep.

Everything differentiable bottoms out in a *primitive*: a plain function on
NumPy values wrapped by :func:`primitive`.  When a primitive is called with a
:class:`Tracer` among its positional arguments it unwraps the tracers of the
innermost active trace, runs the plain function, appends one record to that
trace's tape and returns a new tracer.  The backward sweep walks the tape once,
in reverse, calling one vector-Jacobian rule per traced argument.

Design notes (see ../shared/DESIGN.md, "The tape"):

* A tape is a flat Python list of 5-tuples ``(rules, parents, ans, args,
  kwargs)``; a tracer is ``(value, tape, index)``.  No per-op closures, no
  topological sort: record order *is* a topological order.
* Trace levels make nesting safe (``grad`` of ``grad``; a ``grad`` inside a
  function being differentiated).  Every tape gets a fresh, increasing level;
  a primitive only unwraps the tracers of the highest level among its
  arguments and, if lower-level tracers remain, calls itself again so the
  outer trace records too.  Because rules are written with NumPy calls, and
  NumPy calls on tracers dispatch back to primitives, the backward pass run
  under an outer trace is itself recorded: reverse-over-reverse for free.
* Gradient accumulation keeps the first contribution by reference, makes a
  new array on the second and adds in place from then on.
"""

from __future__ import annotations

import itertools

import numpy as np

__all__ = [
    "Tracer",
    "Tape",
    "primitive",
    "defvjp",
    "defjvp",
    "nondifferentiable",
    "is_tracer",
    "getval",
    "MissingRuleError",
]

_ndarray = np.ndarray
_levels = itertools.count(1)


class MissingRuleError(NotImplementedError):
    """Raised when a primitive is differentiated along an argument it has no rule for."""


class Rules(dict):
    """A primitive's rules: argnum -> rule function, plus the primitive's name."""

    __slots__ = ("name",)

    def __init__(self, name):
        super().__init__()
        self.name = name


class Tape:
    """One trace: a level (for nesting) and a flat list of records."""

    __slots__ = ("level", "records", "__weakref__")

    def __init__(self):
        self.level = next(_levels)
        self.records = []

    def leaf(self, value):
        """Start tracing ``value`` on this tape; returns its tracer."""
        recs = self.records
        recs.append((None, None, value, None, None))
        return Tracer(value, self, len(recs) - 1)


class Tracer:
    """A value being traced for reverse-mode differentiation.

    It behaves like the NumPy array it wraps: arithmetic operators, NumPy
    ufuncs and functions (through ``__array_ufunc__`` / ``__array_function__``),
    the common ndarray methods and attributes.  ``float(t)``, ``int(t)``,
    ``bool(t)`` and ``t.item()`` return plain Python values and therefore cut
    the gradient (as in PyTorch); comparisons return plain boolean arrays, so
    data-dependent control flow just works.
    """

    __slots__ = ("_value", "_tape", "_idx")
    # Make ndarray binary operators defer to us (``ndarray * tracer``).
    __array_priority__ = 1000.0

    def __init__(self, value, tape, idx):
        self._value = value
        self._tape = tape
        self._idx = idx

    def __repr__(self):
        return f"Tracer({self._value!r}, level={self._tape.level})"

    # Array methods, operators and the NumPy protocols are attached in
    # diffsci/numpy/_tracer_methods.py, next to the primitives they call.


def is_tracer(x):
    """True if ``x`` is a traced value (at any nesting level)."""
    return type(x) is Tracer


def getval(x):
    """The plain value under any number of trace levels (cuts the gradient)."""
    while type(x) is Tracer:
        x = x._value
    return x


# ---------------------------------------------------------------------------
# Primitives
# ---------------------------------------------------------------------------
def primitive(fun=None, *, name=None):
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

    def wrapped(*args, **kwargs):
        top = None
        level = 0
        nested = False
        for a in args:
            if type(a) is Tracer:
                lv = a._tape.level
                if lv > level:
                    if top is not None:
                        nested = True
                    top = a._tape
                    level = lv
                elif lv < level:
                    nested = True
        if top is None:
            return fun(*args, **kwargs)
        vals = list(args)
        parents = []
        for i, a in enumerate(args):
            if type(a) is Tracer and a._tape is top:
                vals[i] = a._value
                parents.append((i, a._idx))
        ans = wrapped(*vals, **kwargs) if nested else fun(*vals, **kwargs)
        recs = top.records
        recs.append((vjps, parents, ans, vals, kwargs))
        return Tracer(ans, top, len(recs) - 1)

    wrapped.__name__ = name or getattr(fun, "__name__", "primitive")
    wrapped.__qualname__ = wrapped.__name__
    wrapped.__doc__ = getattr(fun, "__doc__", None)
    wrapped.__wrapped__ = fun
    wrapped.fun = fun
    wrapped.vjps = vjps
    wrapped.jvps = jvps
    wrapped.is_primitive = True
    return wrapped


def defvjp(prim, *rules, argnums=None):
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


def defjvp(prim, *rules, argnums=None):
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
    if cur is None:
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
    n = max(seeds) + 1
    grads = [None] * n
    owned = set()
    for i, g in seeds.items():
        _add(grads, owned, i, g)
    for i in range(n - 1, -1, -1):
        g = grads[i]
        if g is None:
            continue
        rules, parents, ans, vals, kwargs = recs[i]
        if parents is None:  # a leaf: keep its gradient
            continue
        grads[i] = None
        if type(rules) is not Rules:  # a special record (multi-output primitive, ...)
            rules(grads, owned, g, recs[i])
            continue
        for argnum, p in parents:
            try:
                rule = rules[argnum]
            except KeyError:
                raise _missing(rules, argnum) from None
            _add(grads, owned, p, rule(g, ans, *vals, **kwargs))
    return grads
