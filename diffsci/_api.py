"""User-facing reverse-mode transforms: pullback, grad, value_and_grad, jacobian, hooks.

They sit on the recording layer of ``_core.py`` and know nothing about
individual primitives.
"""

from __future__ import annotations

import functools
import numbers
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from ._core import Dual, Tape, Tracer, backward, close, getval, primitive
from ._tree import _LEAF, tree_flatten, tree_map, tree_unflatten

__all__ = [
    "pullback",
    "vjp",
    "grad",
    "value_and_grad",
    "jacobian",
    "jacrev",
    "stop_gradient",
    "hook",
]

_ndarray = np.ndarray


# ---------------------------------------------------------------------------
# Leaves: what may be differentiated
# ---------------------------------------------------------------------------
def _dtype(v):
    """dtype of a plain value (fast for arrays and NumPy scalars)."""
    dt = getattr(v, "dtype", None)
    return dt if dt is not None else np.result_type(v)


def _leaf_value(x, where):
    """Validate a leaf to differentiate and return the value to trace.

    ``where`` is a zero-argument function naming the leaf (only called on error).
    """
    v = getval(x)
    if type(v) is _ndarray or isinstance(v, np.generic):
        kind = v.dtype.kind
    elif isinstance(v, (bool, np.bool_)):
        kind = "b"
    elif isinstance(v, numbers.Number):
        kind = np.asarray(v).dtype.kind
    else:
        raise TypeError(
            f"cannot differentiate with respect to {where()}: it is a {type(v).__name__}, "
            f"not an array or a number. Pass it through a closure instead, or mark a "
            f"dataclass field as static with field(metadata={{'static': True}})."
        )
    if kind not in "fc":
        raise TypeError(
            f"cannot differentiate with respect to {where()}: it has integer/boolean dtype "
            f"({type(v).__name__} {v!r:.60}). Gradients are defined for float and complex "
            f"inputs; pass a float (e.g. 5.0 instead of 5) or np.asarray(x, float)."
        )
    if type(x) is Tracer or type(x) is Dual:
        return x  # an outer trace's value stays traced
    # A private copy: the function may write into its argument (x[0] = ...), which changes
    # what it computes but never the caller's array (as with JAX's immutable inputs).
    return np.array(x, copy=True)


def _finalize(g, x):
    """Turn an accumulated cotangent into the gradient for leaf input ``x``."""
    if type(g) is _ndarray and type(x) is _ndarray and g.dtype is x.dtype and g.shape == x.shape:
        # the common case (float array in, same-dtype cotangent): never a view or read-only
        return g.copy() if g.base is not None or not g.flags.writeable else g
    v = getval(x)
    dtype = _dtype(v)
    if g is None:
        g = np.zeros(np.shape(v), dtype)
    else:
        gv = getval(g)
        gdt = _dtype(gv)
        if gdt.kind == "c" and dtype.kind != "c":
            g = np.real(g)
            gdt = _dtype(getval(g))
        if gdt != dtype:
            g = g.astype(dtype)
        if np.shape(getval(g)) != np.shape(v):
            raise AssertionError(
                f"internal error: gradient of shape {np.shape(getval(g))} for an input of "
                f"shape {np.shape(v)}; a VJP rule returned a wrongly shaped cotangent"
            )
        if type(g) is _ndarray and (g.base is not None or not g.flags.writeable):
            g = g.copy()  # never hand out views of residuals or read-only broadcasts
    if isinstance(v, _ndarray):
        if isinstance(g, np.generic):  # NumPy ops on 0-d arrays return scalars
            g = np.asarray(g)
    elif type(g) is _ndarray:
        g = g[()]  # a Python or NumPy scalar input gets a NumPy scalar gradient
    return g


_SEEDS = {}


def _seed(dtype):
    """The cotangent 1 of a scalar output, one read-only array per dtype (never mutated:
    accumulation copies before adding in place, and _finalize copies read-only arrays)."""
    seed = _SEEDS.get(dtype)
    if seed is None:
        seed = _SEEDS[dtype] = np.ones((), dtype)
        seed.flags.writeable = False
    return seed


def _argnums_tuple(argnums, nargs, fname):
    if isinstance(argnums, (int, np.integer)) and not isinstance(argnums, (bool, np.bool_)):
        nums = (int(argnums),)
    elif isinstance(argnums, (tuple, list)):
        nums = tuple(argnums)
    else:
        raise TypeError(f"{fname}: argnums must be an int or a tuple of ints, got "
                        f"{type(argnums).__name__} {argnums!r}")
    for a in nums:
        if not isinstance(a, (int, np.integer)) or isinstance(a, (bool, np.bool_)):
            raise TypeError(f"{fname}: argnums must hold ints, got {type(a).__name__} {a!r} "
                            f"in argnums={argnums!r}")
        if not -nargs <= a < nargs:
            raise ValueError(f"{fname}: argnums={argnums!r} does not fit a call with "
                             f"{nargs} positional argument(s)")
    out = tuple(int(a) % nargs for a in nums)
    if len(set(out)) != len(out):
        raise ValueError(f"{fname}: argnums={argnums!r} names an argument more than once")
    return out


class _Traced:
    """The traced call shared by every reverse-mode transform."""

    __slots__ = ("tape", "in_tree", "in_leaves", "tracers", "leaf_idx", "out")

    def __init__(self, f, args, kwargs, argnums, fname):
        self.tape = tape = Tape(fname)
        diff = [args[i] for i in argnums]
        leaves, self.in_tree = tree_flatten(diff)
        self.in_leaves = leaves
        self.tracers = [
            tape.leaf(_leaf_value(x, lambda k=k: _leaf_paths(diff, argnums)[k]))
            for k, x in enumerate(leaves)
        ]
        # A write into an argument re-points its tracer at the write record: keep the leaves'.
        self.leaf_idx = [t._idx for t in self.tracers]
        # every differentiated argument a single leaf (the common case): no rebuild needed
        new_diff = (self.tracers if all(c.kind is _LEAF for c in self.in_tree.children)
                    else tree_unflatten(self.in_tree, self.tracers))
        call = list(args)
        for i, d in zip(argnums, new_diff):
            call[i] = d
        try:
            self.out = f(*call, **kwargs)
        except ValueError as e:
            _conversion_context(e)
            raise
        finally:
            close(tape)  # later records on it are escaped tracers

    def release(self):
        """Drop the tape's records: they and the tape form a reference cycle that would
        otherwise wait for the cyclic garbage collector (memory grows in training loops)."""
        self.tape.records.clear()

    def owns(self, x):
        return type(x) is Tracer and x._tape is self.tape

    def backward(self, seeds):
        """Cotangents for the differentiated leaves (finalized), as a list."""
        if not seeds:
            return [_finalize(None, x) for x in self.in_leaves]
        grads = backward(self.tape, seeds)
        n = len(grads)
        return [
            _finalize(grads[i] if i < n else None, x)
            for i, x in zip(self.leaf_idx, self.in_leaves)
        ]


def _conversion_context(e):
    """Re-raise NumPy's "setting an array element with a sequence" as diffsci's message
    when it came from storing a traced value into a plain array (NumPy drops ours)."""
    from .numpy._tracer_methods import take_pending_store_error

    err = take_pending_store_error()
    if err is not None and "array element" in str(e):
        raise err from e


def _leaf_paths(diff, argnums):
    """Human-readable names of the leaves ("argument 0", "argument 1 leaf 2")."""
    out = []
    for i, d in zip(argnums, diff):
        n = len(tree_flatten(d)[0])
        if n == 1 and tree_flatten(d)[1].kind == "leaf":
            out.append(f"argument {i}")
        else:
            out.extend(f"argument {i} (leaf {k} of its pytree)" for k in range(n))
    return out


def _strip(tree, traced):
    """Plain values of an output pytree (tracers of this trace unwrapped one level)."""
    return tree_map(lambda x: x._value if traced.owns(x) else x, tree)


# ---------------------------------------------------------------------------
# pullback (Zygote's J)
# ---------------------------------------------------------------------------
def pullback(f: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[Any, Callable[[Any], Any]]:
    """Run ``f(*args)`` and return ``(y, back)``: the paper's J operator.

    ``back(ȳ)`` maps an output cotangent ``ȳ`` (same structure and shapes as
    ``y``) to a tuple with one cotangent per positional argument, each shaped
    like its argument.  ``back`` may be called any number of times.

    Args:
        f: a function of arrays/pytrees of float or complex values.
        *args: the inputs; every one is differentiated.
        **kwargs: passed to ``f`` and not differentiated.

    Returns:
        ``(y, back)``.

    Example:
        >>> y, back = pullback(lambda x, y: x * y, 2.0, 3.0)
        >>> back(1.0)
        (3.0, 2.0)
    """
    traced = _Traced(f, args, kwargs, tuple(range(len(args))), "pullback")
    y = _strip(traced.out, traced)
    out_leaves, out_tree = tree_flatten(traced.out)

    def back(ybar):
        bar_leaves, bar_tree = tree_flatten(ybar)
        if bar_tree != out_tree:
            raise ValueError(
                f"back: the cotangent has structure {bar_tree!r} but the output of "
                f"{_name(f)} has structure {out_tree!r}"
            )
        seeds = {}
        for k, (o, b) in enumerate(zip(out_leaves, bar_leaves)):
            oshape, bshape = np.shape(getval(o)), np.shape(getval(b))
            if oshape != bshape:
                raise ValueError(
                    f"back: cotangent {k} has shape {bshape}, expected {oshape} (the shape "
                    f"of output {k} of {_name(f)})"
                )
            if traced.owns(o):
                b = b if isinstance(b, (_ndarray, Tracer, Dual)) else np.asarray(b)
                i = o._idx
                seeds[i] = b if i not in seeds else seeds[i] + b
        grads = traced.backward(seeds)
        return tuple(tree_unflatten(traced.in_tree, grads))

    weakref.finalize(back, traced.release)  # free the tape as soon as back is dropped
    return y, back


vjp = pullback


def _name(f):
    return getattr(f, "__name__", type(f).__name__)


# ---------------------------------------------------------------------------
# grad and value_and_grad
# ---------------------------------------------------------------------------
def value_and_grad(f: Callable[..., Any], argnums: int | tuple[int, ...] = 0,
                   has_aux: bool = False) -> Callable[..., Any]:
    """Return a function computing ``(f(*args), gradient)``.

    Args:
        f: a function returning a real scalar (or ``(scalar, aux)`` with
            ``has_aux=True``).
        argnums: which positional argument(s) to differentiate: an int, or a
            tuple of ints (then gradients come as a tuple).
        has_aux: ``f`` returns ``(value, aux)``; the result is then
            ``((value, aux), gradient)`` and ``aux`` is not differentiated.

    Returns:
        A function with ``f``'s signature.  Gradients have the structure,
        shapes and dtypes of the differentiated arguments; an argument that
        does not influence the output gets zeros.

    Raises:
        TypeError: when the output is not a real scalar, or an argument to
            differentiate is integer-valued or not numeric.

    Example:
        >>> value_and_grad(lambda x: x ** 2)(3.0)
        (9.0, 6.0)
    """

    compiled = getattr(type(f), "_value_and_grad", None)  # jit(f): one program (_jit)
    if compiled is not None:
        return compiled(f, argnums, has_aux)

    @functools.wraps(f)
    def vg(*args, **kwargs):
        nums = _argnums_tuple(argnums, len(args), "value_and_grad")
        traced = _Traced(f, args, kwargs, nums, "grad")
        out = traced.out
        if has_aux:
            if not (isinstance(out, (tuple, list)) and len(out) == 2):
                raise TypeError(
                    f"has_aux=True: {_name(f)} must return a pair (value, aux), got "
                    f"{type(out).__name__}"
                )
            out, aux = out
        v = getval(out)
        shape = getattr(v, "shape", ())
        if (not isinstance(v, (_ndarray, np.generic, numbers.Number))
                or (shape and int(np.prod(shape)) != 1)):
            raise TypeError(
                f"grad requires {_name(f)} to return a scalar, got "
                f"{type(v).__name__} of shape {np.shape(v) if hasattr(v, 'shape') else '?'}. "
                f"For vector outputs use diffsci.jacobian (the full Jacobian) or "
                f"diffsci.pullback (vector-Jacobian products); or reduce with .sum()."
            )
        dt = _dtype(v)
        if dt.kind == "c":
            raise TypeError(
                f"grad requires a real scalar output; {_name(f)} returned a complex value. "
                f"Differentiate its real part (np.real(...)) or abs(...)**2, or use "
                f"diffsci.pullback / diffsci.wirtinger for holomorphic functions."
            )
        if dt.kind not in "f":
            raise TypeError(
                f"grad requires a real floating-point output; {_name(f)} returned "
                f"{'a boolean' if dt.kind == 'b' else 'an integer'} ({dt}), whose derivative "
                f"is zero wherever it exists. Return the float quantity the decision is "
                f"based on instead.")
        # a size-1 array output (shape (1,), (1, 1)): the gradient of its one element
        seed = _seed(dt) if not shape else np.ones(shape, dt)
        seeds = {out._idx: seed} if traced.owns(out) else {}
        grads = tree_unflatten(traced.in_tree, traced.backward(seeds))
        g = grads[0] if isinstance(argnums, int) else tuple(grads)
        value = out._value if traced.owns(out) else out
        if has_aux:
            aux = _strip(aux, traced)
        traced.release()
        return ((value, aux), g) if has_aux else (value, g)

    return vg


def grad(f: Callable[..., Any], argnums: int | tuple[int, ...] = 0,
         has_aux: bool = False) -> Callable[..., Any]:
    """Return a function computing the gradient of scalar-valued ``f``.

    See :func:`value_and_grad` for the arguments.  With ``has_aux=True`` the
    result is ``(gradient, aux)``.  For complex inputs z = x + iy the gradient
    is ∂f/∂x + i·∂f/∂y, so ``z - lr * g`` descends.

    Example:
        >>> grad(lambda x: x ** 3)(2.0)
        12.0
    """
    vg = value_and_grad(f, argnums, has_aux)

    @functools.wraps(f)
    def g(*args, **kwargs):
        (value, g_) = vg(*args, **kwargs)
        return (g_, value[1]) if has_aux else g_

    return g


# ---------------------------------------------------------------------------
# Jacobians
# ---------------------------------------------------------------------------
def jacobian(f: Callable[..., Any], argnums: int | tuple[int, ...] = 0, mode: str = "rev",
             has_aux: bool = False) -> Callable[..., Any]:
    """Return a function computing the Jacobian of ``f``.

    For an output array of shape ``S`` and an input of shape ``T`` the
    Jacobian has shape ``S + T``.  With pytree outputs the result has the
    output's structure with, at each output leaf, the input's structure (a
    tuple over ``argnums`` when it is a tuple).

    Args:
        f: the function.
        argnums: int or tuple of ints.
        mode: ``"rev"``: one reverse sweep per output element; ``"fwd"``: one
            forward pass per input element (cheaper for few inputs).
        has_aux: ``f`` returns ``(value, aux)``; the result is ``(J, aux)``.

    Example:
        >>> jacobian(lambda x: x ** 2)(np.array([1.0, 2.0]))
        array([[2., 0.],
               [0., 4.]])
    """
    if mode not in ("rev", "fwd"):
        raise ValueError(f"jacobian: mode must be 'rev' or 'fwd', got {mode!r}")
    if mode == "fwd":
        from ._forward import jacfwd

        return jacfwd(f, argnums=argnums, has_aux=has_aux)

    @functools.wraps(f)
    def jac(*args, **kwargs):
        nums = _argnums_tuple(argnums, len(args), "jacobian")
        traced = _Traced(f, args, kwargs, nums, "jacobian")
        out = traced.out
        if has_aux:
            out, aux = out
        out_leaves, out_tree = tree_flatten(out)
        per_out = []
        for o in out_leaves:
            ov = getval(o)
            oshape = np.shape(ov)
            odt = np.result_type(ov)
            rows = []
            for k in range(int(np.prod(oshape, dtype=int))):
                seed = np.zeros(oshape, odt)
                seed.flat[k] = 1
                rows.append(traced.backward({o._idx: seed}) if traced.owns(o)
                            else traced.backward({}))
            leaves_j = []
            for j, x in enumerate(traced.in_leaves):
                xv = getval(x)
                stacked = [r[j] for r in rows]
                if stacked:  # np.stack dispatches to diffsci when the rows are traced
                    J = np.reshape(np.stack(stacked), oshape + np.shape(xv))
                else:
                    J = np.zeros(oshape + np.shape(xv), np.result_type(xv))
                leaves_j.append(J)
            grads = tree_unflatten(traced.in_tree, leaves_j)
            per_out.append(grads[0] if isinstance(argnums, int) else tuple(grads))
        J = tree_unflatten(out_tree, per_out)
        if has_aux:
            aux = _strip(aux, traced)
        traced.release()
        return (J, aux) if has_aux else J

    return jac


def jacrev(f: Callable[..., Any], argnums: int | tuple[int, ...] = 0,
           has_aux: bool = False) -> Callable[..., Any]:
    """Reverse-mode Jacobian: ``jacobian(f, argnums, mode="rev")``."""
    return jacobian(f, argnums=argnums, mode="rev", has_aux=has_aux)


# ---------------------------------------------------------------------------
# Gradient control
# ---------------------------------------------------------------------------
def stop_gradient(x: Any) -> Any:
    """Return ``x`` (any pytree) with every trace removed: no gradient flows through it."""
    return tree_map(getval, x)


@primitive
def _hook(x, fn=None):
    return x


def _hook_vjp(g, ans, x, fn=None):
    out = fn(g)
    if np.shape(getval(out)) != np.shape(getval(g)):
        raise ValueError(
            f"hook: the function {_name(fn)} returned a gradient of shape "
            f"{np.shape(getval(out))}, expected {np.shape(getval(g))}"
        )
    return out


_hook.vjps[0] = _hook_vjp
_hook.jvps[0] = lambda t, ans, x, fn=None: t  # hooks act on gradients, not on tangents


def hook(f: Callable[[Any], Any], x: Any) -> Any:
    """Return ``x`` unchanged, arranging for ``f`` to be applied to its gradient.

    ``f`` receives the cotangent flowing back into ``x`` and returns the one to
    propagate further (same shape): clip, rescale, log or inspect gradients.

    Example:
        >>> grad(lambda x: hook(lambda g: 2 * g, x) ** 2)(3.0)   # 2 * 6
        12.0
    """
    if not callable(f):
        raise TypeError(f"hook(f, x): f must be callable, got {type(f).__name__}")
    return tree_map(lambda leaf: _hook(leaf, fn=f), x)
