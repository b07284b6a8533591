"""Optimisers over pytrees of parameters: ``SGD``, ``Adam``/``AdamW`` and ``minimize``.

The first-order optimisers are *functional*: an optimiser is a frozen
dataclass of hyper-parameters, its state is a pytree, and one step is a pure
function of gradients, state and parameters::

    opt = Adam(1e-2)
    state = opt.init(params)
    for _ in range(100):
        grads = ds.grad(loss)(params)
        params, state = opt.update(grads, state, params)

Parameters may be any pytree (dicts, tuples, dataclass models such as
``ds.nn.MLP``); the new parameters have the same structure and the dtype of
each leaf is kept (float32 parameters stay float32).  Steps are written with
plain NumPy calls, so they can themselves be differentiated (an optimiser step
inside a loss).  :func:`diffsci.fit` runs this loop with a progress bar.

:func:`minimize` hands a pytree problem to :func:`scipy.optimize.minimize`
with exact gradients from :func:`diffsci.value_and_grad`.
"""

from __future__ import annotations

import abc
import dataclasses
import math
import numbers
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.optimize

from ._api import value_and_grad
from ._tree import _registry, tree_flatten, tree_unflatten

__all__ = [
    "AbstractOptimizer",
    "SGD",
    "SGDState",
    "Adam",
    "AdamState",
    "AdamW",
    "minimize",
]


# ---------------------------------------------------------------------------
# Leaf paths: "params['dense'].w" for error messages
# ---------------------------------------------------------------------------
def _leaf_paths(tree, root="params"):
    """Name every leaf of a pytree the way Python would index it, in flattening order.

    Args:
        tree: a pytree (tuples, lists, dicts, namedtuples, dataclasses, registered nodes).
        root: the name of the whole tree.

    Returns:
        A list of strings, one per leaf of ``tree_flatten(tree)``.

    Example:
        >>> import numpy as np
        >>> from diffsci.nn import Dense
        >>> _leaf_paths({"dense": Dense(np.ones((2, 1)), np.zeros(1)), "scale": 1.0})
        ["params['dense'].w", "params['dense'].b", "params['scale']"]
    """
    out = []
    _paths(tree, root, out)
    return out


def _paths(x, path, out):
    # Mirrors _tree._flatten's order of cases.
    t = type(x)
    if t is tuple or t is list:
        for i, c in enumerate(x):
            _paths(c, f"{path}[{i}]", out)
    elif t is dict:
        for k in x:
            _paths(x[k], f"{path}[{k!r}]", out)
    elif x is None:
        pass
    elif t in _registry:
        for i, c in enumerate(_registry[t][0](x)[0]):
            _paths(c, f"{path}[{i}]", out)
    elif issubclass(t, tuple) and hasattr(t, "_fields"):
        for name, c in zip(t._fields, x):
            _paths(c, f"{path}.{name}", out)
    elif dataclasses.is_dataclass(t):
        for f in dataclasses.fields(x):
            if not f.metadata.get("static", False):
                _paths(getattr(x, f.name), f"{path}.{f.name}", out)
    else:
        out.append(path)


def _first_nonfinite(leaves):
    """``(index, value)`` of the first leaf holding a NaN or an infinity, or ``(-1, None)``."""
    for k, leaf in enumerate(leaves):
        v = np.asarray(leaf)
        if v.dtype.kind in "fc":
            finite = np.isfinite(v)
            if not finite.all():
                return k, v.ravel()[int(np.argmin(finite.ravel()))]
    return -1, None


# ---------------------------------------------------------------------------
# Hyper-parameter validation (once, in __post_init__)
# ---------------------------------------------------------------------------
def _check_number(cls, name, value, low, high=math.inf, low_open=False, high_open=True):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{cls}: {name} must be a real number, got {type(value).__name__} "
                        f"{value!r}")
    lo_ok = value > low if low_open else value >= low
    hi_ok = value < high if high_open else value <= high
    if not (math.isfinite(value) and lo_ok and hi_ok):
        lo = "(" if low_open else "["
        hi = ")" if high_open else "]"
        raise ValueError(f"{cls}: {name} must be in {lo}{low}, {high}{hi}, got {value!r}")


def _check_lr(cls, lr):
    if callable(lr):
        return
    if isinstance(lr, bool) or not isinstance(lr, numbers.Real):
        raise TypeError(f"{cls}: lr must be a positive number or a schedule step -> lr, got "
                        f"{type(lr).__name__} {lr!r}")
    if not (math.isfinite(lr) and lr > 0):
        raise ValueError(f"{cls}: lr must be a positive finite number, got {lr!r}")


def _lr_at(opt, step):
    """The learning rate for 0-based ``step`` (a schedule is called with it)."""
    lr = opt.lr
    if not callable(lr):
        return lr
    value = lr(step)
    if not (isinstance(value, numbers.Real) and math.isfinite(value) and value > 0):
        raise ValueError(f"{type(opt).__name__}: the lr schedule returned {value!r} at step "
                         f"{step}; it must return a positive finite number")
    return float(value)


# ---------------------------------------------------------------------------
# The interface
# ---------------------------------------------------------------------------
class AbstractOptimizer(abc.ABC):
    """A first-order optimiser: ``init(params) -> state`` and one ``update`` step.

    Subclass it (as a frozen dataclass of hyper-parameters) to make an
    optimiser that :func:`diffsci.fit` accepts.
    """

    @abc.abstractmethod
    def init(self, params: Any) -> Any:
        """The optimiser's state for ``params`` (a pytree)."""

    @abc.abstractmethod
    def update(self, grads: Any, state: Any, params: Any) -> tuple[Any, Any]:
        """One step: returns ``(new_params, new_state)``."""

    def _check_state(self, grads, state, state_type):
        """Refuse arguments given in the wrong order or a state made by another optimiser."""
        name = type(self).__name__
        order = f"the arguments are {name}.update(grads, state, params)"
        if isinstance(grads, (SGDState, AdamState)):
            raise TypeError(f"{name}.update: grads is an optimiser state "
                            f"({type(grads).__name__}); {order}")
        if not isinstance(state, state_type):
            raise TypeError(f"{name}.update: state must be the {state_type.__name__} that "
                            f"{name}.init(params) returns, got {type(state).__name__}; {order}")

    def _leaves(self, grads, state_trees, params):
        """Flatten ``params`` and check that ``grads`` has the same structure."""
        p_leaves, td = tree_flatten(params)
        g_leaves, gtd = tree_flatten(grads)
        if gtd != td:
            raise ValueError(
                f"{type(self).__name__}.update: grads have structure {gtd!r} but params have "
                f"{td!r}; pass the gradient of the loss with respect to params"
            )
        others = []
        for name, tree in state_trees:
            leaves, std = tree_flatten(tree)
            if std != td:
                raise ValueError(
                    f"{type(self).__name__}.update: state.{name} has structure {std!r} but "
                    f"params have {td!r}; was the state made by init() for these params?"
                )
            others.append(leaves)
        return p_leaves, g_leaves, others, td


def _cast_like(new, p):
    """``new`` in the dtype of parameter ``p`` (float32 parameters stay float32)."""
    dt = getattr(p, "dtype", None)
    if dt is not None and getattr(new, "dtype", dt) != dt:
        return new.astype(dt)
    return new


def _zeros_like(p):
    return np.zeros_like(p, dtype=np.result_type(p))


# ---------------------------------------------------------------------------
# SGD
# ---------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class SGDState:
    """State of :class:`SGD`: the step count and the momentum buffer (``None`` without momentum)."""

    step: int
    velocity: Any  # a pytree shaped like the parameters, or None


@dataclasses.dataclass(frozen=True)
class SGD(AbstractOptimizer):
    """Stochastic gradient descent with optional (Nesterov) momentum and weight decay.

    With gradient ``g`` (plus ``weight_decay * p``), momentum ``μ`` and
    velocity ``v`` (PyTorch's convention, Sutskever et al. 2013)::

        v ← μ v + g
        p ← p − lr · (g + μ v)   if nesterov
        p ← p − lr · v           otherwise

    Without momentum this is ``p ← p − lr · g``.

    Args:
        lr: learning rate, a positive number, or a schedule ``step -> lr``
            (``step`` counts from 0).
        momentum: ``μ`` in ``[0, 1)``.
        nesterov: use Nesterov momentum (requires ``momentum > 0``).
        weight_decay: L2 penalty coefficient ``≥ 0`` added to the gradient.

    Raises:
        ValueError, TypeError: a hyper-parameter is out of range or not a number.

    Example:
        >>> opt = SGD(0.1, momentum=0.9)
        >>> state = opt.init({"w": np.ones(2)})
        >>> params, state = opt.update({"w": np.ones(2)}, state, {"w": np.ones(2)})
        >>> params["w"]
        array([0.9, 0.9])

    References:
        Sutskever, Martens, Dahl & Hinton, "On the importance of initialization
        and momentum in deep learning", ICML 2013.
    """

    lr: float | Callable[[int], float]
    momentum: float = 0.0
    nesterov: bool = False
    weight_decay: float = 0.0

    def __post_init__(self):
        _check_lr("SGD", self.lr)
        _check_number("SGD", "momentum", self.momentum, 0.0, 1.0)
        _check_number("SGD", "weight_decay", self.weight_decay, 0.0)
        if self.nesterov and self.momentum == 0:
            raise ValueError("SGD: nesterov=True requires momentum > 0, got momentum=0.0")

    def init(self, params: Any) -> SGDState:
        """State for ``params``: step 0 and a zero velocity per leaf (if momentum > 0)."""
        velocity = None
        if self.momentum > 0:
            leaves, td = tree_flatten(params)
            velocity = tree_unflatten(td, [_zeros_like(p) for p in leaves])
        return SGDState(step=0, velocity=velocity)

    def update(self, grads: Any, state: SGDState, params: Any) -> tuple[Any, SGDState]:
        """One SGD step; returns ``(new_params, new_state)``.

        Raises:
            TypeError: ``state`` is not the :class:`SGDState` of :meth:`init` (or the arguments
                are out of order). ValueError: ``grads`` or the state do not match ``params``.
        """
        self._check_state(grads, state, SGDState)
        trees = [("velocity", state.velocity)] if self.momentum > 0 else []
        p_leaves, g_leaves, others, td = self._leaves(grads, trees, params)
        lr = _lr_at(self, state.step)
        mu, wd = self.momentum, self.weight_decay
        new_p, new_v = [], []
        for k, (p, g) in enumerate(zip(p_leaves, g_leaves)):
            if wd:
                g = g + wd * p
            if mu > 0:
                v = mu * others[0][k] + g
                new_v.append(v)
                g = g + mu * v if self.nesterov else v
            new_p.append(_cast_like(p - lr * g, p))
        velocity = tree_unflatten(td, new_v) if mu > 0 else None
        return tree_unflatten(td, new_p), SGDState(step=state.step + 1, velocity=velocity)


# ---------------------------------------------------------------------------
# Adam
# ---------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class AdamState:
    """State of :class:`Adam`: the step count and the first and second moment estimates."""

    step: int
    mu: Any  # pytrees shaped like the parameters
    nu: Any


@dataclasses.dataclass(frozen=True)
class Adam(AbstractOptimizer):
    """Adam: adaptive moment estimation (Kingma & Ba 2015, Algorithm 1).

    At step ``t = 1, 2, ...`` with gradient ``g``::

        m ← β₁ m + (1 − β₁) g              v ← β₂ v + (1 − β₂) |g|²
        m̂ = m / (1 − β₁ᵗ)                  v̂ = v / (1 − β₂ᵗ)
        p ← p − lr · m̂ / (√v̂ + ε)

    so the first step moves each entry by ``lr · g / (|g| + ε)``.  Weight
    decay is either an L2 penalty added to the gradient (``decoupled=False``,
    the original Adam) or, with ``decoupled=True``, AdamW's decoupled decay
    ``p ← p − lr · weight_decay · p`` applied before the Adam step (Loshchilov
    & Hutter 2019; PyTorch's ``AdamW``).  Complex parameters use ``|g|²`` in
    the second moment.

    Args:
        lr: learning rate, a positive number, or a schedule ``step -> lr``
            (``step`` counts from 0).
        b1: β₁, decay of the first moment, in ``[0, 1)``.
        b2: β₂, decay of the second moment, in ``[0, 1)``.
        eps: ε ``> 0``, added to √v̂.
        weight_decay: ``≥ 0``.
        decoupled: AdamW-style decoupled weight decay.

    Raises:
        ValueError, TypeError: a hyper-parameter is out of range or not a number.

    Example:
        >>> opt = Adam(0.1)
        >>> state = opt.init(np.array([1.0, -2.0]))
        >>> p, state = opt.update(np.array([3.0, -0.5]), state, np.array([1.0, -2.0]))
        >>> p   # each entry moved by lr against the sign of its gradient
        array([ 0.9, -1.9])

    References:
        Kingma & Ba, "Adam: A Method for Stochastic Optimization", ICLR 2015,
        Algorithm 1.  Loshchilov & Hutter, "Decoupled Weight Decay
        Regularization", ICLR 2019, Algorithm 2.
    """

    lr: float | Callable[[int], float] = 1e-3
    b1: float = 0.9
    b2: float = 0.999
    eps: float = 1e-8
    weight_decay: float = 0.0
    decoupled: bool = False

    def __post_init__(self):
        name = type(self).__name__
        _check_lr(name, self.lr)
        _check_number(name, "b1", self.b1, 0.0, 1.0)
        _check_number(name, "b2", self.b2, 0.0, 1.0)
        _check_number(name, "eps", self.eps, 0.0, low_open=True)
        _check_number(name, "weight_decay", self.weight_decay, 0.0)

    def init(self, params: Any) -> AdamState:
        """State for ``params``: step 0 and zero moments shaped like each leaf."""
        leaves, td = tree_flatten(params)
        zeros = [_zeros_like(p) for p in leaves]
        return AdamState(step=0, mu=tree_unflatten(td, zeros),
                         nu=tree_unflatten(td, [np.real(z) for z in zeros]))

    def update(self, grads: Any, state: AdamState, params: Any) -> tuple[Any, AdamState]:
        """One Adam step; returns ``(new_params, new_state)``.

        Raises:
            TypeError: ``state`` is not the :class:`AdamState` of :meth:`init` (or the arguments
                are out of order). ValueError: ``grads`` or the state do not match ``params``.
        """
        self._check_state(grads, state, AdamState)
        p_leaves, g_leaves, (m_leaves, v_leaves), td = self._leaves(
            grads, [("mu", state.mu), ("nu", state.nu)], params)
        lr = _lr_at(self, state.step)
        t = state.step + 1
        b1, b2, eps, wd = self.b1, self.b2, self.eps, self.weight_decay
        c1 = 1.0 - b1 ** t  # bias corrections, folded into the step size
        c2 = 1.0 - b2 ** t
        new_p, new_m, new_v = [], [], []
        for p, g, m, v in zip(p_leaves, g_leaves, m_leaves, v_leaves):
            if wd and not self.decoupled:
                g = g + wd * p
            m = b1 * m + (1.0 - b1) * g
            g2 = g.real * g.real + g.imag * g.imag if np.iscomplexobj(g) else g * g
            v = b2 * v + (1.0 - b2) * g2
            q = p * (1.0 - lr * wd) if wd and self.decoupled else p
            new_p.append(_cast_like(q - lr * (m / c1) / (np.sqrt(v / c2) + eps), p))
            new_m.append(m)
            new_v.append(v)
        return tree_unflatten(td, new_p), AdamState(
            step=t, mu=tree_unflatten(td, new_m), nu=tree_unflatten(td, new_v))


def AdamW(lr: float | Callable[[int], float] = 1e-3, b1: float = 0.9, b2: float = 0.999,
          eps: float = 1e-8, weight_decay: float = 1e-2) -> Adam:
    """Adam with decoupled weight decay (Loshchilov & Hutter 2019): ``Adam(..., decoupled=True)``.

    Example:
        >>> AdamW(1e-3, weight_decay=0.1)
        Adam(lr=0.001, b1=0.9, b2=0.999, eps=1e-08, weight_decay=0.1, decoupled=True)
    """
    return Adam(lr=lr, b1=b1, b2=b2, eps=eps, weight_decay=weight_decay, decoupled=True)


# ---------------------------------------------------------------------------
# minimize: scipy.optimize.minimize with exact gradients over pytrees
# ---------------------------------------------------------------------------
#: Methods of scipy.optimize.minimize that use the gradient.
_GRADIENT_METHODS = frozenset({
    "cg", "bfgs", "newton-cg", "l-bfgs-b", "tnc", "slsqp", "dogleg", "trust-ncg",
    "trust-krylov", "trust-exact", "trust-constr",
})


class _Flat:
    """Flattening a pytree of real leaves to one float64 vector and back."""

    def __init__(self, x0):
        leaves, self.treedef = tree_flatten(x0)
        paths = _leaf_paths(x0, "x0")
        self.shapes, self.dtypes, self.scalar = [], [], []
        for leaf, path in zip(leaves, paths):
            if isinstance(leaf, (bool, np.bool_)) or not isinstance(
                    leaf, (np.ndarray, np.generic, numbers.Number)):
                raise TypeError(f"minimize: {path} is a {type(leaf).__name__}; every leaf of "
                                f"x0 must be a real number or a real array")
            a = np.asarray(leaf)
            if a.dtype.kind not in "iuf":
                raise TypeError(
                    f"minimize: {path} has dtype {a.dtype}; leaves must be real (split complex "
                    f"parameters into real and imaginary parts)")
            self.shapes.append(a.shape)
            self.dtypes.append(a.dtype if a.dtype.kind == "f" else np.dtype(np.float64))
            self.scalar.append(not isinstance(leaf, np.ndarray))
        self.sizes = [math.prod(s) for s in self.shapes]
        self.offsets = np.cumsum([0] + self.sizes)
        self.size = int(self.offsets[-1])
        self.paths = paths
        self.x0 = self.flatten(leaves)

    def flatten(self, leaves):
        if not leaves:
            return np.zeros(0)
        return np.concatenate([np.ravel(np.asarray(v, np.float64)) for v in leaves])

    def unflatten(self, vec, cast=False):
        out = []
        for k, shape in enumerate(self.shapes):
            a = vec[self.offsets[k]:self.offsets[k + 1]].reshape(shape)
            if cast:
                a = a.astype(self.dtypes[k])
            out.append(a[()] if self.scalar[k] else a)
        return tree_unflatten(self.treedef, out)

    def bounds(self, bounds):
        """scipy-style bounds from ``bounds`` (see :func:`minimize`)."""
        if bounds is None or isinstance(bounds, scipy.optimize.Bounds):
            return bounds
        try:
            items = list(bounds)
        except TypeError:
            raise TypeError(f"minimize: bounds must be a scipy.optimize.Bounds, a sequence of "
                            f"(low, high) pairs or a (lower, upper) pair of pytrees, got "
                            f"{type(bounds).__name__}") from None
        flat = len(items) == self.size and all(_is_pair(b) for b in items)
        tree = len(items) == 2 and all(self._fits(side) for side in items)
        if flat and tree and self.size == 2:
            raise ValueError(
                "minimize: bounds with two pairs is ambiguous for 2 parameters: it may be "
                "per-parameter (low, high) pairs or a (lower, upper) pair of pytrees. Pass "
                "scipy.optimize.Bounds(lb=[...], ub=[...]) instead")
        if flat:
            return items
        if tree:
            lb, ub = self._broadcast(items[0], -np.inf), self._broadcast(items[1], np.inf)
            if np.any(lb > ub):
                k = int(np.argmax(lb > ub))
                raise ValueError(f"minimize: lower bound {lb[k]} exceeds upper bound {ub[k]} at "
                                 f"flat index {k}")
            return scipy.optimize.Bounds(lb, ub)
        raise ValueError(
            f"minimize: bounds must be a sequence of {self.size} (low, high) pairs (one per "
            f"entry of x_flat), a (lower, upper) pair where each side is a number or a pytree "
            f"with x0's structure {self.treedef!r} (use ±np.inf for no bound), or a "
            f"scipy.optimize.Bounds")

    def _fits(self, side):
        if side is None or isinstance(side, numbers.Real):
            return True
        leaves, td = tree_flatten(side)
        return td == self.treedef and all(
            np.broadcast_shapes(np.shape(v), s) == s for v, s in zip(leaves, self.shapes))

    def _broadcast(self, side, default):
        if side is None:
            return np.full(self.size, default)
        if isinstance(side, numbers.Real):
            return np.full(self.size, float(side))
        leaves = tree_flatten(side)[0]
        return self.flatten([np.broadcast_to(np.asarray(v, np.float64), s)
                             for v, s in zip(leaves, self.shapes)])


def _is_pair(b):
    return (isinstance(b, (tuple, list)) and len(b) == 2
            and all(v is None or isinstance(v, numbers.Real) for v in b))


def minimize(fun: Callable[..., Any], x0: Any, args: tuple[Any, ...] = (), method: str = "L-BFGS-B",
             bounds: Any = None, options: dict[str, Any] | None = None, tol: float | None = None,
             callback: Callable[..., Any] | None = None, constraints: Any = (),
             jit: bool = False) -> Any:
    """Minimise a scalar function of a pytree with :func:`scipy.optimize.minimize`.

    ``fun(x, *args)`` is differentiated with :func:`diffsci.value_and_grad`,
    so the optimiser gets exact gradients.  ``x0`` may be any pytree of real
    numbers and arrays (a dict, a dataclass model ...): it is flattened to one
    float64 vector for SciPy and each trial point is rebuilt with ``x0``'s
    structure, in float64, before ``fun`` sees it.  The arguments come in
    SciPy's order, ``(fun, x0, args, method, ...)``.

    Args:
        fun: ``fun(x, *args) -> real scalar``.
        x0: the starting point, a pytree of real leaves (integer leaves are
            treated as floats).
        args: extra positional arguments of ``fun`` (not differentiated), a tuple.
        method: any method of :func:`scipy.optimize.minimize`.  Gradient
            methods (``"L-BFGS-B"``, ``"BFGS"``, ``"CG"``, ``"SLSQP"``,
            ``"TNC"``, ``"trust-constr"`` ...) get the exact gradient;
            derivative-free ones (``"Nelder-Mead"``, ``"Powell"`` ...) only
            values.
        bounds: ``None``; a :class:`scipy.optimize.Bounds` or a sequence of
            ``(low, high)`` pairs over ``x_flat`` (SciPy's forms); or a
            ``(lower, upper)`` pair in which each side is a number or a pytree
            with ``x0``'s structure (leaves broadcast to the parameter's shape;
            ``±np.inf`` or ``None`` for no bound).
        options: SciPy's ``options`` dict (``maxiter``, ``gtol`` ...).
        tol: SciPy's ``tol``.
        callback: called as ``callback(x)`` after each iteration with ``x`` in
            ``x0``'s structure; returning ``True`` stops (SciPy ≥ 1.11 methods).
        constraints: SciPy's ``constraints`` (functions of ``x_flat``).
        jit: compile ``fun`` and its gradient with :func:`diffsci.jit`.

    Returns:
        SciPy's :class:`~scipy.optimize.OptimizeResult` with ``x`` in ``x0``'s
        structure (each leaf in its original float dtype), ``x_flat`` (the
        float64 vector), ``jac`` the gradient at ``x`` in ``x0``'s structure
        and ``jac_flat`` (when the method reports one), ``fun`` a float, and
        ``success``, ``message``, ``nit``, ``nfev`` as SciPy sets them.

    Raises:
        FloatingPointError: ``fun`` or its gradient is not finite at ``x0``
            (naming the leaf, e.g. ``x0['scale']``).
        TypeError: a leaf of ``x0`` is not a real number or array, or ``fun``
            does not return a real scalar.
        ValueError: ``bounds`` do not fit ``x0``.
        TypeError: ``args`` is a string or ``method`` is not one (the order before SciPy's,
            ``minimize(fun, x0, method, args)``, is refused with this message).

    Example:
        >>> res = minimize(lambda p: (p["a"] - 1.0) ** 2 + np.sum((p["b"] + 2.0) ** 2),
        ...                {"a": 0.0, "b": np.zeros(2)})
        >>> round(float(res.x["a"]), 6), res.x["b"].round(6), res.success
        (1.0, array([-2., -2.]), True)
    """
    if isinstance(args, str) or not (method is None or isinstance(method, str) or callable(method)):
        raise TypeError(
            f"minimize: args must be a tuple of extra arguments of fun and method a string; got "
            f"args={args!r}, method={method!r}. The order is SciPy's, minimize(fun, x0, args=(), "
            f"method='L-BFGS-B', ...): pass method by keyword")
    flat = _Flat(x0)
    vg = value_and_grad(fun)
    if jit:
        from ._jit import jit as _jit

        vg = _jit(vg)
    g_method = method is None or str(method).lower() in _GRADIENT_METHODS
    args = tuple(args)

    def evaluate(vec):
        value, g = vg(flat.unflatten(vec), *args)
        return float(value), flat.flatten(tree_flatten(g)[0])

    value, g = vg(flat.unflatten(flat.x0), *args)
    if not math.isfinite(float(value)):
        raise FloatingPointError(f"minimize: fun(x0) = {float(value)} is not finite; start "
                                 f"from a point where the objective is defined")
    bad, _ = _first_nonfinite(tree_flatten(g)[0])
    if bad >= 0:
        raise FloatingPointError(
            f"minimize: the gradient of fun at x0 is not finite at {flat.paths[bad]} "
            f"(fun(x0) = {float(value)}); start from a point where fun is differentiable")

    sp_callback = None
    if callback is not None:
        def sp_callback(xk, *rest):
            return callback(flat.unflatten(np.asarray(xk), cast=True))

    kwargs = dict(args=(), method=method, bounds=flat.bounds(bounds), tol=tol,
                  callback=sp_callback, options=options)
    if constraints:
        kwargs["constraints"] = constraints
    if g_method:
        res = scipy.optimize.minimize(evaluate, flat.x0, jac=True, **kwargs)
    else:
        res = scipy.optimize.minimize(lambda v: evaluate(v)[0], flat.x0, **kwargs)
    res.x_flat = np.asarray(res.x, np.float64)
    res.x = flat.unflatten(res.x_flat, cast=True)
    res.fun = float(res.fun)
    if getattr(res, "jac", None) is not None and np.size(res.jac) == flat.size:
        res.jac_flat = np.asarray(res.jac, np.float64)
        res.jac = flat.unflatten(res.jac_flat, cast=True)
    return res
