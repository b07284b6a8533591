"""Checkpointing: trade recomputation for memory in reverse mode.

Two transforms, both built on :class:`diffsci.custom_vjp` (no core hooks):

* :func:`checkpoint` — the paper's ``checkpoint(f)``: the forward pass keeps
  only f's inputs (f runs on plain values, nothing of it on the tape) and the
  backward pass re-runs f under :func:`diffsci.pullback`.
* :func:`checkpointed_loop` — n applications of a step function,
  differentiated with the binomial checkpointing schedule of Griewank's
  *revolve*: at most ``snapshots`` stored carries and the provably minimal
  number of recomputed steps.

The maths (the schedule's recursion, its closed-form cost and the optimal
split) is in ``diffsci/DERIVATIONS.md``, section "Checkpointing"; equation
numbers (C1)–(C7) below refer to it.

Nesting: when a checkpointed call sees tracers of several levels, the rule at
the innermost level runs the *same* transform on the next level's values, so
every level records one compact checkpointed record; the backward pass, when
its inputs are traced by an outer level, re-runs f (or the loop) on those
traced inputs so that the outer trace records the recomputation
(reverse-over-reverse works; the outer level then holds that recomputation).

References:
    A. Griewank, "Achieving logarithmic growth of temporal and spatial
    complexity in reverse automatic differentiation", Optimization Methods and
    Software 1(1), 1992, 35–54 (binomial checkpointing).
    A. Griewank and A. Walther, "Algorithm 799: revolve: an implementation of
    checkpointing for the reverse or adjoint mode of computational
    differentiation", ACM TOMS 26(1), 2000, 19–45 (the schedule and its cost).
"""

from __future__ import annotations

import enum
import functools
import itertools
import numbers
from collections.abc import Callable
from math import comb
from typing import Any

import numpy as np

from ._api import pullback
from ._core import getval, is_tracer, top_trace
from ._custom import custom_vjp
from ._tree import tree_flatten, tree_unflatten

__all__ = ["checkpoint", "checkpointed_loop", "LoopStats"]


# ---------------------------------------------------------------------------
# Shared helpers
# ---------------------------------------------------------------------------
def _level(leaves):
    """The highest trace level among ``leaves`` (0 when none is traced)."""
    top = top_trace(leaves)
    return 0 if top is None else top.level


def _differentiable(x):
    """True for a float or complex leaf (the leaves that get cotangents)."""
    v = getval(x)
    dt = getattr(v, "dtype", None)
    if dt is None:
        if not isinstance(v, numbers.Number) or isinstance(v, bool):
            return False
        dt = np.result_type(v)
    return dt.kind in "fc"


def _placeholder(x):
    """The cotangent entry of a leaf that gets none (an int, a string ...).

    ``custom_vjp`` wants each argument's cotangent to have the argument's
    structure, so a non-differentiable leaf inside a pytree needs *some* leaf
    there; it is never added to a gradient (such leaves are not traced).
    """
    v = getval(x)
    if isinstance(v, (np.ndarray, np.generic, numbers.Number)):
        return np.zeros_like(v)
    return v


def _vjp(fun, args):
    """:func:`diffsci.pullback` of ``fun(*args)`` along the float/complex leaves of ``args``.

    Returns:
        ``(y, back)`` where ``back(ȳ, release=False)`` returns one cotangent
        per leaf of ``args`` (flattened), ``None`` for the leaves that are not
        float or complex (integers pass through with no cotangent).  With
        ``release=True`` the tape is emptied afterwards (``back`` must not be
        called again): a tape and its records form a reference cycle, which
        would otherwise linger until Python's cyclic garbage collector runs —
        in a loop of pullbacks that is dozens of tapes held at once.
    """
    leaves, tree = tree_flatten(args)
    diff = [i for i, x in enumerate(leaves) if _differentiable(x)]
    tapes = []

    def on_diff(*dleaves):
        if dleaves:
            tapes.append(dleaves[0]._tape)
        full = list(leaves)
        for i, d in zip(diff, dleaves):
            full[i] = d
        return fun(*tree_unflatten(tree, full))

    y, back = pullback(on_diff, *[leaves[i] for i in diff])

    def back_leaves(ybar, release=False):
        cts = back(ybar)
        if release:
            for tape in tapes:
                tape.records.clear()
        full = [None] * len(leaves)
        for i, c in zip(diff, cts):
            full[i] = c
        return full

    return y, back_leaves


def _check_not_captured(out, level, what, how):
    """Raise if ``out`` carries a tracer of level ≥ ``level``.

    Such a tracer can only come from a traced value that the checkpointed
    function closes over (or gets by keyword): its gradient would be lost,
    so refuse instead of returning a wrong one.
    """
    for o in tree_flatten(out)[0]:
        if is_tracer(o) and o._tape.level >= level:
            raise ValueError(
                f"{what}: the output depends on a value being differentiated that the function "
                f"closes over (or receives by keyword), not through its differentiated "
                f"arguments; its gradient would be lost. {how}"
            )


def _name(f):
    return getattr(f, "__name__", type(f).__name__)


# ---------------------------------------------------------------------------
# checkpoint(f)
# ---------------------------------------------------------------------------
def checkpoint(f: Callable[..., Any]) -> Callable[..., Any]:
    """Return ``f`` with its intermediates recomputed in the backward pass.

    The checkpointed function computes the same values as ``f``.  Under
    differentiation, its forward pass runs ``f`` on plain values — nothing of
    ``f``'s inside is recorded, so between the forward and the backward pass
    only ``f``'s inputs and outputs are held — and its backward pass runs ``f``
    again under :func:`diffsci.pullback` to obtain the cotangents (eq. (C1)).
    Memory falls from O(f's intermediates) to O(inputs + outputs) for one extra
    evaluation of ``f``.

    Side effects of ``f`` (prints, appends, counters) therefore run **twice**
    when the result is differentiated (once without tracing), as in Zygote.
    ``f`` must be deterministic: the recomputation must reproduce the forward
    values (seed any randomness explicitly).

    It composes: checkpoints nest (an inner checkpoint is re-run by the outer
    one's backward pass), work inside :func:`diffsci.grad` of ``grad``
    (second order: the backward pass is itself recorded by the outer trace) and
    inside :func:`checkpointed_loop` steps.

    Args:
        f: a function of pytrees.  Its *positional* arguments are
            differentiated (float and complex leaves; integer leaves pass
            through with no cotangent); keyword arguments are static (not
            differentiated).  Values being differentiated must reach ``f``
            through its positional arguments, not a closure.

    Returns:
        A function with ``f``'s signature.

    Raises:
        TypeError: ``f`` is not callable.
        ValueError: (when called) ``f``'s output depends on a value being
            differentiated that it closes over or gets by keyword — pass it as
            a positional argument.

    Example:
        >>> import numpy as np
        >>> import diffsci as ds
        >>> def block(x):
        ...     for _ in range(50):
        ...         x = np.sin(x) * 1.01
        ...     return x
        >>> g = ds.grad(lambda x: np.sum(checkpoint(block)(x)))(np.ones(3))
        >>> bool(np.allclose(g, ds.grad(lambda x: np.sum(block(x)))(np.ones(3))))
        True

    References:
        Innes et al., arXiv:1907.07587 (2019), §"Checkpointing" (the paper's
        ``checkpoint``); derivation: ``diffsci/DERIVATIONS.md``, eq. (C1).
    """
    if not callable(f):
        raise TypeError(f"checkpoint(f): f must be callable, got {type(f).__name__}")

    @functools.wraps(f)
    def checkpointed(*args, **kwargs):
        return _checkpoint_call(f, args, kwargs)

    return checkpointed


def _checkpoint_call(f, args, kwargs):
    leaves, in_tree = tree_flatten(args)
    level = _level(leaves)
    if level == 0:  # nothing traced: just run f
        return f(*args, **kwargs)

    def run(*a):
        return f(*a, **kwargs)

    run.__name__ = f"checkpoint({_name(f)})"
    rule = custom_vjp(run)

    def fwd(*vals):
        # vals: this level's values, possibly traced at lower levels; those
        # levels record their own checkpointed call (plain values run f bare).
        before = _snapshot(vals)
        out = _checkpoint_call(f, vals, kwargs)
        _check_unmodified(vals, before, f"checkpoint({_name(f)})")
        _check_not_captured(
            out, level, f"checkpoint({_name(f)})",
            "Pass that value as a positional argument of the checkpointed function.",
        )
        return out, vals

    def bwd(vals, g):
        # Recompute f, this time recorded, and pull the cotangent back (eq. C1).
        # If vals or g are traced by an outer level, this recomputation and
        # the backward sweep are recorded there (second order).
        _, back = _vjp(run, vals)
        cts = back(g, release=True)
        val_leaves = tree_flatten(vals)[0]
        cts = [_placeholder(x) if c is None else c for c, x in zip(cts, val_leaves)]
        return tuple(tree_unflatten(in_tree, cts))

    rule.defvjp(fwd, bwd)
    return rule(*args)


# ---------------------------------------------------------------------------
# The binomial (revolve) schedule
# ---------------------------------------------------------------------------
def _beta(c, r):
    """β(c, r) = C(c + r, c): steps reversible with c snapshots, r repetitions (eq. C2)."""
    return comb(c + r, c) if r >= 0 else 0


def _repetitions(n, k):
    """The repetition number r: the least r ≥ 0 with n ≤ β(k, r) (eq. C3)."""
    r = 0
    while _beta(k, r) < n:
        r += 1
    return r


def min_advances(n, k):
    """Revolve's minimal number of forward steps to reverse n steps with k snapshots.

    ``t(n, k) = r·n − β(k + 1, r − 1)`` where ``β(k, r−1) < n ≤ β(k, r)``
    (eq. (C3) of ``diffsci/DERIVATIONS.md``; Griewank & Walther 2000).  The
    n taped evaluations of the reverse sweep are not included, so a
    :func:`checkpointed_loop` forward-plus-backward pass evaluates ``step``
    ``n + min_advances(n, k)`` times (eq. C6).

    Example:
        >>> min_advances(10, 3), min_advances(10, 1), min_advances(10, 10)
        (15, 45, 9)
    """
    r = _repetitions(n, k)
    return r * n - _beta(k + 1, r - 1)


def _split(l, c):
    """Optimal distance of the next snapshot when reversing l ≥ 2 steps with c ≥ 2 snapshots.

    Every m in ``[max(1, β(c, r−2), l − β(c−1, r)), min(l−1, β(c, r−1), l − β(c−1, r−1))]``
    is optimal (eq. C5); we take the largest.
    """
    r = _repetitions(l, c)
    return min(l - 1, _beta(c, r - 1), l - _beta(c - 1, r - 1))


class _Action(enum.Enum):
    """One instruction of the schedule, applied at a step position."""

    RESTORE = "restore"  # current carry := the snapshot at position p
    ADVANCE = "advance"  # step the current carry forward (untaped) up to position p
    STORE = "store"      # keep the current carry (at position p) as a snapshot
    FREE = "free"        # drop the snapshot at position p
    REVERSE = "reverse"  # tape step p from the current carry and pull the cotangent back


def _schedule(s, e, c):
    """Yield the actions that reverse steps s, ..., e−1 (eq. C4).

    Precondition: the carry at position s is stored, and c snapshots (that one
    included) may be held.  Generated lazily: O(c + r) live frames, never the
    whole O(n) list.
    """
    l = e - s
    if l <= 0:
        return
    if l == 1 or c == 1:  # no snapshot to spare: restart from s for every step
        for i in range(e - 1, s - 1, -1):
            yield _Action.RESTORE, s
            if i > s:
                yield _Action.ADVANCE, i
            yield _Action.REVERSE, i
        return
    m = s + _split(l, c)
    yield _Action.RESTORE, s
    yield _Action.ADVANCE, m
    yield _Action.STORE, m
    yield from _schedule(m, e, c - 1)
    yield _Action.FREE, m
    yield from _schedule(s, m, c)


# ---------------------------------------------------------------------------
# checkpointed_loop
# ---------------------------------------------------------------------------
class LoopStats:
    """What a :func:`checkpointed_loop` call did (updated by its backward passes too).

    The counters are cumulative over the forward pass and every backward pass
    run so far (and over the trace levels of a nested call).  After one
    forward and one backward pass at one level, ``advances ==
    advance_bound`` and ``taped == n``.  A plain object, not a pytree, so it
    can travel through ``has_aux`` or a pullback's output untouched.

    Attributes:
        n: the number of steps.
        snapshots: the snapshot budget k.
        advances: untaped evaluations of ``step`` (forward sweep and
            recomputation).
        taped: evaluations of ``step`` under :func:`diffsci.pullback` (one per
            step per backward pass).
        max_stored: the most carries held as snapshots at once (the initial
            carry included); never more than ``snapshots``.
    """

    __slots__ = ("n", "snapshots", "advances", "taped", "max_stored")

    def __init__(self, n, snapshots):
        self.n = n
        self.snapshots = snapshots
        self.advances = 0
        self.taped = 0
        self.max_stored = 0

    def __repr__(self):
        return (
            f"LoopStats(n={self.n}, snapshots={self.snapshots}, advances={self.advances}, "
            f"taped={self.taped}, max_stored={self.max_stored}, "
            f"advance_bound={self.advance_bound})"
        )

    @property
    def step_evaluations(self):
        """``advances + taped``."""
        return self.advances + self.taped

    @property
    def repetitions(self):
        """Revolve's repetition number r for (n, snapshots) (eq. C3)."""
        return _repetitions(self.n, self.snapshots)

    @property
    def advance_bound(self):
        """Revolve's minimal advance count ``r·n − β(k+1, r−1)`` (eq. C3)."""
        return min_advances(self.n, self.snapshots)


def checkpointed_loop(step: Callable[..., Any], carry: Any, n: int, snapshots: int,
                      args: tuple[Any, ...] = (), *, return_stats: bool = False) -> Any:
    """Run ``carry = step(carry, *args)`` n times, differentiably, in O(snapshots) memory.

    Without tracers this is the plain loop.  Under differentiation (with
    respect to the initial ``carry`` and ``args``) the forward pass keeps at
    most ``snapshots`` carries (plain values, the initial one included) and
    records nothing of the steps on the outer tape; the backward pass follows
    the binomial schedule of Griewank's *revolve* (eqs. C4–C5): it restores a
    snapshot, advances it without taping, stores new snapshots, and obtains
    each step's VJP from :func:`diffsci.pullback` of ``step`` at a recomputed
    carry, accumulating the cotangents of ``args``.  Every step is taped once
    per backward pass and the untaped recomputations number exactly revolve's
    minimum ``r·n − β(k+1, r−1)`` (eq. C3), so a forward-plus-backward pass
    evaluates ``step`` ``n + r·n − β(k+1, r−1)`` times against the plain
    loop's n, where r is the least integer with n ≤ C(k + r, k).  Memory
    held between the passes: the snapshots plus one step's tape (the last
    step's, taped in the forward pass).

    ``step`` must be deterministic and must not modify its arguments in place
    (snapshots are shared, not copied); it runs several times per step.

    Args:
        step: ``step(carry, *args) -> new carry`` with the carry's pytree
            structure and leaf shapes.
        carry: the initial carry, a pytree (float/complex leaves are
            differentiated; integer leaves, e.g. a counter, get no cotangent).
        n: the number of steps, an int ≥ 0.
        snapshots: k, the most carries stored at any time, an int ≥ 1.  k = 1
            recomputes from the start for every step (n(n−1)/2 advances); k ≥ n
            stores every carry (n − 1 advances).
        args: a tuple of extra positional arguments of ``step`` (pytrees),
            differentiated like ``carry``.  Values being differentiated must
            reach ``step`` through ``carry`` or ``args``, not a closure.
        return_stats: also return a :class:`LoopStats` (updated in place when
            backward passes run).

    Returns:
        The final carry, or ``(carry, stats)`` with ``return_stats=True``.

    Raises:
        TypeError: ``step`` is not callable, ``n`` or ``snapshots`` is not an
            int, or ``args`` is not a tuple; or ``step`` returns a carry of
            another structure or shape.
        ValueError: ``n < 0`` or ``snapshots < 1``; or ``step``'s output
            depends on a differentiated value it closes over.

    Example:
        >>> import numpy as np
        >>> import diffsci as ds
        >>> step = lambda u, a: u - 0.1 * a * u ** 3
        >>> loss = lambda u0, a: np.sum(checkpointed_loop(step, u0, 100, 5, (a,)))
        >>> g = ds.grad(loss, argnums=(0, 1))(np.ones(3), 0.5)
        >>> y, stats = checkpointed_loop(step, np.ones(3), 100, 5, (0.5,), return_stats=True)
        >>> stats.advance_bound, stats.repetitions
        (316, 4)

    References:
        Griewank & Walther, "Algorithm 799: revolve", ACM TOMS 26(1), 2000
        (the schedule; the cost t(n, k) = r·n − β(k+1, r−1)); derivation and
        proofs in ``diffsci/DERIVATIONS.md``, eqs. (C2)–(C7).
    """
    if not callable(step):
        raise TypeError(f"checkpointed_loop: step must be callable, got {type(step).__name__}")
    n = _check_int(n, "n", 0, "the number of steps")
    k = _check_int(snapshots, "snapshots", 1, "the most carries stored at once")
    if isinstance(args, list):
        args = tuple(args)
    if not isinstance(args, tuple):
        raise TypeError(
            f"checkpointed_loop: args must be a tuple of extra positional arguments of step, "
            f"got {type(args).__name__} (write args=(a,) for one)"
        )
    stats = LoopStats(n=n, snapshots=k)
    out = _loop_call(step, carry, args, n, k, stats)
    return (out, stats) if return_stats else out


def _check_int(v, name, lowest, meaning):
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
        raise TypeError(
            f"checkpointed_loop: {name} ({meaning}) must be an int, got {type(v).__name__} {v!r}"
        )
    if v < lowest:
        raise ValueError(
            f"checkpointed_loop: {name} ({meaning}) must be >= {lowest}, got {v}"
        )
    return int(v)


def _check_carry(new, old, step):
    """The carry ``step`` returned must have the input carry's structure and shapes."""
    new_leaves, new_tree = tree_flatten(new)
    old_leaves, old_tree = tree_flatten(old)
    new_shapes = [np.shape(getval(x)) for x in new_leaves]
    old_shapes = [np.shape(getval(x)) for x in old_leaves]
    if new_tree != old_tree or new_shapes != old_shapes:
        raise TypeError(
            f"checkpointed_loop: step {_name(step)} must return a carry of the same structure "
            f"and leaf shapes as its input: got {new_tree!r} with shapes {new_shapes}, "
            f"expected {old_tree!r} with shapes {old_shapes}"
        )


def _snapshot(tree):
    """Copies of the plain array leaves of ``tree`` (to detect in-place modification)."""
    return [np.array(x, copy=True) if type(x) is np.ndarray else None
            for x in tree_flatten(tree)[0]]


def _check_unmodified(tree, before, what):
    """Raise if a plain array leaf of ``tree`` changed since :func:`_snapshot`."""
    for k, (x, b) in enumerate(zip(tree_flatten(tree)[0], before)):
        if b is not None and not np.array_equal(x, b, equal_nan=True):
            raise ValueError(
                f"{what} modified its argument in place (leaf {k}). A checkpointed function "
                f"is run again in the backward pass on its saved inputs, so it must not "
                f"write into them: copy first (x = x.copy()) or write into a new array."
            )


def _check_not_aliased(new, old, step):
    """A step that returns (a view of) its input carry has modified it in place."""
    for x, y in zip(tree_flatten(new)[0], tree_flatten(old)[0]):
        if type(x) is np.ndarray and type(y) is np.ndarray and np.may_share_memory(x, y):
            raise ValueError(
                f"checkpointed_loop: step {_name(step)} returned memory shared with its input "
                f"carry (an in-place update). Stored snapshots would be overwritten: return "
                f"a new array (carry = carry + dt * f(carry), not carry += ...)."
            )


def _plain_loop(step, carry, args, n, stats):
    for i in range(n):
        new = step(carry, *args)
        if i == 0:
            _check_carry(new, carry, step)
            _check_not_aliased(new, carry, step)
        carry = new
    stats.advances += n
    return carry


def _loop_call(step, carry, args, n, k, stats):
    level = _level(tree_flatten((carry, args))[0])
    if level == 0:  # nothing traced: the plain loop
        return _plain_loop(step, carry, args, n, stats)

    def run(c, *a):
        return _plain_loop(step, c, a, n, stats)

    run.__name__ = f"checkpointed_loop({_name(step)})"
    rule = custom_vjp(run)
    what = f"checkpointed_loop({_name(step)})"
    how = "Pass that value to step through args=(...)."

    def fwd(c, *a):
        if _level(tree_flatten((c, a))[0]) > 0:
            # Traced at lower levels: they record their own checkpointed loop;
            # this level recomputes everything from the traced inputs (bwd).
            out = _loop_call(step, c, a, n, k, stats)
            _check_not_captured(out, level, what, how)
            return out, _Revolve(step, a, n, k, stats, c)
        rev = _Revolve(step, a, n, k, stats, c)
        out = rev.forward()
        _check_not_captured(out, level, what, how)
        return out, rev

    def bwd(rev, g):
        return rev.backward(g)

    rule.defvjp(fwd, bwd)
    return rule(carry, *args)


class _Revolve:
    """Executes the binomial schedule of one loop: forward sweep, then reverse sweep.

    With plain inputs, :meth:`forward` runs the schedule up to and including
    the first taped step (the last step, n−1) and keeps the snapshots and that
    step's pullback; :meth:`backward` continues from there.  With inputs traced
    by an outer level (second order), :meth:`backward` runs the whole schedule
    on them so that the outer trace records it.
    """

    __slots__ = ("step", "args", "n", "k", "stats", "carry0", "snaps", "prefix", "back_last",
                 "checked")

    def __init__(self, step, args, n, k, stats, carry0):
        self.step, self.args, self.n, self.k, self.stats = step, args, n, k, stats
        self.carry0 = carry0
        self.snaps = None
        self.prefix = 0
        self.back_last = None
        self.checked = False

    def _advance(self, cur, count):
        step, args = self.step, self.args
        for _ in range(count):
            new = step(cur, *args)
            if not self.checked:
                _check_carry(new, cur, step)
                _check_not_aliased(new, cur, step)
                self.checked = True
            cur = new
        self.stats.advances += count
        return cur

    def _store(self, snaps, p, cur):
        snaps[p] = cur
        if len(snaps) > self.stats.max_stored:
            self.stats.max_stored = len(snaps)

    def forward(self):
        """The forward sweep (plain values): returns the final carry."""
        snaps = {}
        self._store(snaps, 0, self.carry0)
        self.snaps = snaps
        pos, cur = 0, self.carry0
        for count, (act, p) in enumerate(_schedule(0, self.n, self.k), start=1):
            if act is _Action.REVERSE:  # the first youturn: step n−1, taped now
                out, self.back_last = _vjp(self.step, (cur, *self.args))
                self.stats.taped += 1
                if not self.checked:
                    _check_carry(out, cur, self.step)
                    self.checked = True
                self.prefix = count
                return out
            pos, cur = self._apply(act, p, pos, cur, snaps)
        return self.carry0  # n == 0

    def _apply(self, act, p, pos, cur, snaps):
        """Apply a non-taping action; returns the new (position, carry)."""
        if act is _Action.RESTORE:
            return p, (cur if pos == p else snaps[p])
        if act is _Action.ADVANCE:
            return p, self._advance(cur, p - pos)
        if act is _Action.STORE:
            self._store(snaps, p, cur)
        else:  # FREE
            del snaps[p]
        return pos, cur

    def backward(self, g):
        """The reverse sweep: cotangents of (carry0, *args) for the output cotangent g."""
        c_leaves, c_tree = tree_flatten(self.carry0)
        a_leaves, _ = tree_flatten(self.args)
        nc = len(c_leaves)
        gc = tree_flatten(g)[0]
        ga = [None] * len(a_leaves)
        actions = _schedule(0, self.n, self.k)
        if self.snaps is not None:  # plain inputs: continue after forward()
            snaps = dict(self.snaps)
            if self.n:
                gc = self._pull(self.back_last, gc, ga, c_leaves, c_tree, nc)
            actions = itertools.islice(actions, self.prefix, None)
            pos, cur = None, None  # the next action is a RESTORE
        else:  # inputs traced by an outer level: the whole schedule, recorded there
            snaps = {}
            self._store(snaps, 0, self.carry0)
            pos, cur = 0, self.carry0
        for act, p in actions:
            if act is _Action.REVERSE:
                _, back = _vjp(self.step, (cur, *self.args))
                self.stats.taped += 1
                gc = self._pull(back, gc, ga, c_leaves, c_tree, nc, release=True)
            else:
                pos, cur = self._apply(act, p, pos, cur, snaps)
        cts = [_placeholder(x) if c is None else c
               for c, x in zip(gc + ga, c_leaves + a_leaves)]
        return tuple(tree_unflatten(tree_flatten((self.carry0, *self.args))[1], cts))

    @staticmethod
    def _pull(back, gc, ga, c_leaves, c_tree, nc, release=False):
        """One step's VJP (eq. C1): returns the carry cotangent, accumulates into ga."""
        ybar = [_placeholder(x) if c is None else c for c, x in zip(gc, c_leaves)]
        cts = back(tree_unflatten(c_tree, ybar), release)
        for j, c in enumerate(cts[nc:]):
            if c is not None:
                ga[j] = c if ga[j] is None else ga[j] + c
        return cts[:nc]
