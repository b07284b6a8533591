"""diffsci ⇄ PyTorch: :func:`to_torch`, :class:`TorchModule` and :func:`from_torch`.

Imported only when one of them is first used (``diffsci.interop`` is lazy), so
``import diffsci`` never needs torch.

Conventions: PyTorch's complex cotangent is diffsci's (∂L/∂x + i·∂L/∂y for a real loss
of z = x + iy, and x̄ = conj(f′(x))·ȳ for a holomorphic f; the README's "Gradients:
conventions and validity"), and both JVPs carry no conjugate, so values, cotangents and
tangents cross unchanged.

Higher order goes through the same construction at every level: the backward of a bridged
function is the bridged function "(inputs, output cotangents) ↦ input cotangents", so
``create_graph=True`` (torch over diffsci) and ``grad`` of ``grad`` (diffsci over torch)
work to any order the other side supports.
"""

from __future__ import annotations

import functools
import weakref

import numpy as np
import torch

from .._api import _Traced, pullback
from .._core import Dual, Tracer, getval
from .._tree import tree_flatten, tree_unflatten
from ._prim import BridgedPrim

__all__ = ["to_torch", "TorchModule", "from_torch"]

_Tensor = torch.Tensor
_ndarray = np.ndarray
_LEAF_TREE = tree_flatten(0)[1]
_NUMPY_FLOATS = frozenset({torch.float16, torch.float32, torch.float64, torch.complex64,
                           torch.complex128})
_strided = torch.strided


# ---------------------------------------------------------------------------
# Crossing: tensors to arrays and back, with the errors naming what crossed wrongly
# ---------------------------------------------------------------------------
def _to_numpy(t, who, where, differentiable=True):
    """A CPU tensor as a NumPy array sharing its memory (strides kept: no copy for
    non-contiguous tensors); lazy conjugate/negative bits are resolved first."""
    if t.dtype in _NUMPY_FLOATS and t.device.type == "cpu" and t.layout is _strided:
        try:  # the common case, checked in three attribute reads
            return (t.detach() if t.requires_grad else t).numpy()
        except RuntimeError:  # a conjugate or negative bit: resolved below
            pass
    if t.device.type != "cpu":
        raise TypeError(
            f"{who}: {where} is a tensor on device {t.device}; diffsci runs on the CPU. Move "
            f"it with .cpu() before the call (and the result back with .to({str(t.device)!r}))")
    if t.layout is not torch.strided:
        raise TypeError(f"{who}: {where} is a {t.layout} tensor; only dense (strided) tensors "
                        f"cross to diffsci (use .to_dense())")
    if differentiable and not (t.is_floating_point() or t.is_complex()):
        raise TypeError(
            f"{who}: {where} is a tensor of dtype {t.dtype}; differentiated inputs must be "
            f"float or complex tensors. Pass a float tensor (x.double()), or name the argument "
            f"in nondiff_argnums to pass it as a constant")
    if t.dtype is torch.bfloat16:
        raise TypeError(f"{who}: {where} has dtype torch.bfloat16, which NumPy lacks; convert "
                        f"it with .float()")
    if t.requires_grad:
        t = t.detach()
    if t.is_conj():
        t = t.resolve_conj()
    if t.is_neg():
        t = t.resolve_neg()
    return t.numpy()


def _from_numpy(o, who, k):
    """A diffsci output leaf as a tensor sharing its memory (copied only when NumPy's array
    is read-only or has negative strides, which tensors cannot share)."""
    if type(o) is not _ndarray:
        if isinstance(o, (np.generic, int, float, complex, bool)):
            o = np.asarray(o)
        else:
            raise TypeError(
                f"{who}: output leaf {k} is {_describe(o)}; a bridged function must return "
                f"arrays or numbers (or pytrees of them)")
    if o.dtype.kind not in "fcbiu":
        raise TypeError(f"{who}: output leaf {k} is an array of dtype {o.dtype}, which has no "
                        f"torch dtype; return float, complex, integer or boolean arrays")
    if not o.flags.writeable or any(s < 0 for s in o.strides):
        o = o.copy()
    return torch.from_numpy(o)


def _describe(x):
    v = getval(x)
    dt = getattr(v, "dtype", None)
    if isinstance(v, _Tensor):
        return f"a torch.Tensor of shape {tuple(v.shape)} and dtype {v.dtype}"
    if dt is not None:
        return f"a {type(v).__name__} of shape {np.shape(v)} and dtype {dt}"
    return f"a {type(v).__name__}"


def _is_diff(a):
    return a.dtype.kind in "fc"


# ---------------------------------------------------------------------------
# diffsci -> torch
# ---------------------------------------------------------------------------
class _Node:
    """One diffsci function of flat arrays ``fn(*xs) -> tuple of arrays`` as torch sees it.

    ``vjp()`` is the node of its pullback ``(*xs, *ȳ) -> x̄``: the backward of the
    backward, built on first use (``create_graph=True``)."""

    __slots__ = ("fn", "name", "diff_out", "_vjp", "order", "otree")

    def __init__(self, fn, name, order=1):
        self.fn = fn
        self.name = name
        self.order = order
        self.diff_out = None  # which outputs are float/complex (set by the first forward)
        self._vjp = None
        self.otree = None  # the output structure of the last call (to_torch's fast path)

    def vjp(self, n_in):
        if self._vjp is None:
            fn, diff_out, name = self.fn, self.diff_out, self.name

            def vjp_fn(*args):
                xs, gs = args[:n_in], args[n_in:]
                outs, back = pullback(fn, *xs)
                bars, it = [], iter(gs)
                for o, d in zip(outs, diff_out):
                    v = getval(o)
                    bars.append(next(it) if d else np.zeros(np.shape(v), v.dtype))
                return back(tuple(bars))

            self._vjp = _Node(vjp_fn, name, self.order + 1)
        return self._vjp


def _second_order_error(node, e):
    return RuntimeError(
        f"to_torch({node.name}): torch asked for derivatives of order {node.order} "
        f"(create_graph=True, gradgradcheck, a Hessian), which diffsci could not compute for "
        f"this function: {type(e).__name__}: {e}")


class _Call(torch.autograd.Function):
    """Forward: trace ``node.fn`` (diffsci's pullback, through its internal traced call:
    the public ``pullback`` adds pytree handling this flat call does not need); backward:
    the trace's reverse sweep, or (when torch records the backward, create_graph=True) the
    nested call of ``node.vjp``."""

    @staticmethod
    def forward(ctx, node, *tensors):
        who = f"to_torch({node.name})"
        xs = [_to_numpy(t, who, f"input {k}") for k, t in enumerate(tensors)]
        try:
            traced = _Traced(node.fn, xs, {}, tuple(range(len(xs))), "to_torch")
        except Exception as e:
            if node.order > 1:
                raise _second_order_error(node, e) from e
            raise
        outs = traced.out
        res, diff = [], []
        for k, o in enumerate(outs):
            r = _from_numpy(o._value if traced.owns(o) else o, who, k)
            res.append(r)
            diff.append(r.is_floating_point() or r.is_complex())
        if node.diff_out is None:
            node.diff_out = diff
        ctx.node, ctx.traced = node, traced
        weakref.finalize(ctx, traced.release)  # the tape's records form a cycle: free early
        if any(t.requires_grad for t in tensors):
            ctx.save_for_backward(*tensors)
        nd = [r for r, d in zip(res, diff) if not d]
        if nd:
            ctx.mark_non_differentiable(*nd)
        return tuple(res)

    @staticmethod
    def backward(ctx, *gs):
        node = ctx.node
        if torch.is_grad_enabled():  # create_graph=True: torch records this backward
            xs = ctx.saved_tensors
            gd = [g for g, d in zip(gs, node.diff_out) if d]
            return (None, *_Call.apply(node.vjp(len(xs)), *xs, *gd))
        who = f"to_torch({node.name})"
        traced = ctx.traced
        seeds = {}
        for k, (o, g, d) in enumerate(zip(traced.out, gs, node.diff_out)):
            if d and g is not None and traced.owns(o):
                b = _to_numpy(g, who, f"the cotangent of output {k}")
                i = o._idx
                seeds[i] = b if i not in seeds else seeds[i] + b
        cts = traced.backward(seeds)
        return (None, *(torch.from_numpy(np.asarray(c)) for c in cts))


def _norm_argnums(nums, who):
    if isinstance(nums, int):
        nums = (nums,)
    try:
        nums = tuple(nums)
    except TypeError:
        raise TypeError(f"{who}: nondiff_argnums must be an int or a tuple of ints, got "
                        f"{nums!r}") from None
    if not all(isinstance(a, int) and not isinstance(a, bool) for a in nums):
        raise TypeError(f"{who}: nondiff_argnums must hold ints, got {nums!r}")
    return frozenset(nums)


def to_torch(f, *, nondiff_argnums=(), name=None):
    """``f`` as a function of ``torch.Tensor``\\ s, differentiable by ``torch.autograd``.

    Every tensor leaf of the positional arguments (pytrees: tuples, lists, dicts,
    dataclasses) is an input of one ``torch.autograd.Function`` whose forward runs
    ``diffsci.pullback(f, ...)`` on NumPy views of the tensors (CPU tensors cross without
    a copy, non-contiguous ones keep their strides) and whose backward runs the pullback
    it kept.  Outputs (arrays or pytrees of them) come back as tensors sharing the result
    arrays' memory, in their dtypes (float32 stays float32).  Complex tensors cross
    unchanged: PyTorch's cotangent convention is diffsci's.

    ``create_graph=True`` (double backward, ``torch.autograd.gradgradcheck``, Hessians)
    records the backward as a second bridged call, of ``f``'s pullback, itself
    differentiated by diffsci, to any order diffsci supports for ``f``; where diffsci has
    no such derivative the error says so.

    Args:
        f: a diffsci-differentiable function of arrays / pytrees of arrays.
        nondiff_argnums: positions of arguments passed as constants (integer tensors,
            index arrays, options): their tensors become NumPy arrays, nothing is
            differentiated.  Non-tensor leaves (Python numbers, NumPy arrays) of any
            argument, and keyword arguments, are constants too.
        name: the name errors use (default ``f.__name__``).

    Returns:
        A function of tensors with ``f``'s signature, returning ``f``'s output structure
        with tensors at its leaves.

    Raises:
        TypeError: a tensor on another device than the CPU, a sparse tensor, an integer or
            boolean tensor in a differentiated argument, an output leaf that is not an array
            or a number.
        RuntimeError: ``create_graph=True`` where diffsci cannot give ``f`` second
            derivatives (the message carries diffsci's reason).

    Example:
        >>> import torch, numpy as np
        >>> sq = to_torch(lambda x: np.sum(np.sin(x) ** 2))
        >>> x = torch.tensor([0.5, 1.0], dtype=torch.float64, requires_grad=True)
        >>> sq(x).backward()
        >>> torch.allclose(x.grad, torch.sin(2 * x.detach()))
        True
    """
    fname = name or getattr(f, "__name__", type(f).__name__)
    who = f"to_torch({fname})"
    nondiff = _norm_argnums(nondiff_argnums, who)
    fast = {}  # input dtypes -> the _Node of the call with plain tensor arguments

    @functools.wraps(f)
    def wrapped(*args, **kwargs):
        if not kwargs and not nondiff and all(type(a) is _Tensor for a in args):
            # the common case, every argument one tensor: one _Node per input dtypes, no
            # pytree handling (the output structure is kept on the node by each call)
            for i, a in enumerate(args):
                _check_tensor(a, who, f"argument {i}")
            key = tuple(a.dtype for a in args)
            node = fast.get(key)
            if node is None:
                node = fast[key] = _Node(_fast_fn(f), fname)
                node.fn.node = node
            res = _Call.apply(node, *args)
            otree = node.otree
            return res[0] if otree is None else tree_unflatten(otree, list(res))
        call = list(args)
        slots = []  # (argument position, its leaves, its treedef, tensor leaf indices)
        tensors = []
        for i, a in enumerate(args):
            if type(a) is _Tensor or isinstance(a, _Tensor):  # the common case: one tensor
                if i in nondiff:
                    call[i] = _const(a, who, f"argument {i}")
                else:
                    slots.append((i, None, None, None))
                    tensors.append(a)
                continue
            leaves, tree = tree_flatten(a)
            idx = [k for k, x in enumerate(leaves) if isinstance(x, _Tensor)]
            if not idx:
                continue
            if i in nondiff:
                call[i] = _const(a, who, f"argument {i}")
                continue
            slots.append((i, leaves, tree, idx))
            tensors.extend(leaves[k] for k in idx)
        if kwargs:  # constants: their tensors cross as NumPy arrays
            kwargs = {k: _const(v, who, f"keyword argument {k!r}") for k, v in kwargs.items()}
        for i, leaves, _tree, idx in slots:  # check before running anything
            if idx is None:
                _check_tensor(args[i], who, f"argument {i}")
            else:
                for k in idx:
                    _check_tensor(leaves[k], who, f"argument {i} (leaf {k} of its pytree)")
        box = []

        def fn(*xs):
            it = iter(xs)
            for i, leaves, tree, idx in slots:
                if idx is None:
                    call[i] = next(it)
                else:
                    new = list(leaves)
                    for k in idx:
                        new[k] = next(it)
                    call[i] = tree_unflatten(tree, new)
            out = f(*call, **kwargs)
            ol, otree = tree_flatten(out)
            box.append(otree)
            return tuple(ol)

        res = _Call.apply(_Node(fn, fname), *tensors)
        return tree_unflatten(box[0], list(res))

    return wrapped


def _fast_fn(f):
    def fn(*xs):
        out = f(*xs)
        if type(out) is Tracer or type(out) is _ndarray:
            fn.node.otree = None  # one array: no pytree
            return (out,)
        ol, fn.node.otree = tree_flatten(out)
        return tuple(ol)

    return fn


def _const(v, who, where):
    """A constant argument with its tensor leaves as NumPy arrays (not differentiated)."""
    if isinstance(v, _Tensor):
        return _to_numpy(v, who, where, differentiable=False)
    leaves, tree = tree_flatten(v)
    if not any(isinstance(x, _Tensor) for x in leaves):
        return v
    return tree_unflatten(tree, [_to_numpy(x, who, f"{where} (leaf {k})", False)
                                 if isinstance(x, _Tensor) else x
                                 for k, x in enumerate(leaves)])


def _check_tensor(t, who, where):
    if t.device.type != "cpu" or not (t.is_floating_point() or t.is_complex()):
        _to_numpy(t, who, where)  # raises the message


class TorchModule(torch.nn.Module):
    """A ``torch.nn.Module`` whose trainable parameters are the pytree ``params`` and whose
    ``forward(*inputs)`` is ``f(params, *inputs)`` through :func:`to_torch`.

    The counterpart of PennyLane's ``TorchLayer`` for any diffsci function: a quantum
    circuit, a render, an SDE solve or a pricer becomes a layer of a torch model, trained
    with ``torch.optim``.

    Args:
        f: ``f(params, *inputs)``, diffsci-differentiable in ``params`` and the inputs.
        params: a pytree (dict, tuple, list, dataclass) of float or complex NumPy arrays or
            numbers: the initial values.  Each leaf becomes a ``torch.nn.Parameter`` of its
            dtype (float64 stays float64), listed in ``self.params`` in leaf order.
        nondiff_argnums: as in :func:`to_torch`, counted over ``inputs`` (0 is the first
            input).

    Raises:
        TypeError: a parameter leaf that is not a float or complex number/array.

    Example:
        >>> import numpy as np, torch
        >>> layer = TorchModule(lambda p, x: np.tanh(x @ p["w"] + p["b"]),
        ...                     {"w": np.eye(2), "b": np.zeros(2)})
        >>> layer(torch.ones(3, 2, dtype=torch.float64)).shape
        torch.Size([3, 2])
    """

    def __init__(self, f, params, *, nondiff_argnums=()):
        super().__init__()
        leaves, self._tree = tree_flatten(params)
        ps = []
        for k, v in enumerate(leaves):
            if isinstance(v, _Tensor):
                v = v.detach().cpu().numpy()
            a = np.asarray(v)
            if a.dtype.kind not in "fc":
                raise TypeError(
                    f"TorchModule: parameter leaf {k} is {_describe(v)}; trainable parameters "
                    f"must be float or complex (np.asarray(x, float)); pass constants through "
                    f"f's closure or as inputs")
            ps.append(torch.nn.Parameter(torch.from_numpy(np.array(a, copy=True))))
        self.params = torch.nn.ParameterList(ps)
        self._name = getattr(f, "__name__", type(f).__name__)
        nd = _norm_argnums(nondiff_argnums, f"TorchModule({self._name})")
        self._call = to_torch(f, nondiff_argnums=tuple(i + 1 for i in nd), name=self._name)

    def param_tree(self):
        """The parameters in ``params``'s structure (the ``nn.Parameter`` objects)."""
        return tree_unflatten(self._tree, list(self.params))

    def numpy_params(self):
        """The current parameter values as a pytree of NumPy arrays (copies)."""
        return tree_unflatten(self._tree, [p.detach().numpy().copy() for p in self.params])

    def forward(self, *inputs):
        return self._call(self.param_tree(), *inputs)

    def extra_repr(self):
        return f"f={self._name}, params={len(self.params)} leaves"


# ---------------------------------------------------------------------------
# torch -> diffsci
# ---------------------------------------------------------------------------
def _as_tensor(x):
    """A NumPy value (a plain array inside diffsci's rules) as a tensor sharing memory."""
    a = np.asarray(x)
    if not a.flags.writeable or any(s < 0 for s in a.strides):
        a = a.copy()
    return torch.from_numpy(a)


def _out_arrays(leaves, who):
    """A flat torch function's output tensors as NumPy arrays (views of the tensors)."""
    arrs = []
    for k, t in enumerate(leaves):
        if not isinstance(t, _Tensor):
            raise TypeError(f"{who}: output leaf {k} is {_describe(t)}; a torch function "
                            f"bridged into diffsci must return tensors (or pytrees of them)")
        arrs.append(_to_numpy(t, who, f"output leaf {k}", differentiable=False))
    return arrs


class _TorchPrim(BridgedPrim):
    """A flat torch function ``tfn(*tensors) -> tuple of tensors`` as a diffsci primitive,
    whose VJP and JVP are the _TorchPrims of torch's; one reverse level keeps torch's graph
    from the forward instead."""

    def __init__(self, tfn, name):
        self.tfn = tfn
        super().__init__(name)

    def _run(self, *xs):
        who = f"from_torch({self.name})"
        ts = [_as_tensor(x) for x in xs]
        with torch.no_grad():
            out = self.tfn(*ts)
        return self._outputs(_out_arrays(out, who))

    def _fwd(self, *xs):
        if any(type(x) is Tracer or type(x) is Dual for x in xs):
            return self.prim(*xs), (xs, None)  # an outer level differentiates: recurse
        # One reverse level: run torch with its graph recorded and keep it for _bwd (the
        # torch forward then runs once, not again inside the VJP).
        who = f"from_torch({self.name})"
        ts = [_as_tensor(x) for x in xs]
        with torch.enable_grad():
            for t in ts:
                if _is_diff_tensor(t):
                    t.requires_grad_()
            outs = self.tfn(*ts)
        return self._outputs(_out_arrays(outs, who)), (xs, (ts, tuple(outs)))

    def _bwd(self, res, gs):
        xs, kept = res
        if kept is None or any(type(g) is Tracer or type(g) is Dual for g in gs):
            return super()._bwd(xs, gs)
        ts, outs = kept
        pairs = [(o, _as_tensor(g)) for o, g, d in zip(outs, gs, self.diff_out)
                 if d and o.requires_grad]
        wrt = [t for t in ts if t.requires_grad]
        grads = iter(torch.autograd.grad([o for o, _ in pairs], wrt, [g for _, g in pairs],
                                         retain_graph=True, allow_unused=True)
                     if pairs and wrt else [None] * len(wrt))
        cts = []
        for x, t in zip(xs, ts):
            c = next(grads) if t.requires_grad else None
            cts.append(None if not t.requires_grad else
                       np.zeros(np.shape(x), np.result_type(x)) if c is None else
                       _to_numpy(c, f"from_torch({self.name})", "a cotangent").copy())
        return tuple(cts)

    def _vjp_prim(self, n):
        return _TorchPrim(_torch_vjp(self.tfn, n, self.diff_out), f"vjp of {self.name}")

    def _jvp_prim(self, n):
        return _TorchPrim(_torch_jvp(self.tfn, n), f"jvp of {self.name}")


def _is_diff_tensor(x):
    return x.is_floating_point() or x.is_complex()


def _torch_vjp(tfn, n_in, diff_out):
    """``(*xs, *ȳ) -> x̄`` in torch.

    Two versions: the function itself runs ``torch.autograd.grad`` (the fast one, recorded
    for a further reverse order when its inputs require grad), and its ``functional``
    attribute runs ``torch.func.vjp`` over the ``functional`` version of ``tfn``, which
    ``torch.func.jvp`` can differentiate (forward over reverse: ``hessian``)."""
    functional_tfn = getattr(tfn, "functional", tfn)

    def vjp(*args):
        xs, gs = args[:n_in], args[n_in:]
        create = torch.is_grad_enabled() and any(a.requires_grad for a in args)
        with torch.enable_grad():
            xr = [x if x.requires_grad or not _is_diff_tensor(x)
                  else x.detach().requires_grad_() for x in xs]
            outs = [o for o, f in zip(tfn(*xr), diff_out) if f]
            pairs = [(o, g) for o, g in zip(outs, gs) if o.requires_grad]
            wrt = [x for x in xr if x.requires_grad]
            if pairs and wrt:
                grads = torch.autograd.grad([o for o, _ in pairs], wrt, [g for _, g in pairs],
                                            allow_unused=True, create_graph=create)
            else:
                grads = [None] * len(wrt)
        it = iter(grads)
        res = []
        for x in xr:
            c = next(it) if x.requires_grad else None
            res.append(torch.zeros_like(x) if c is None else c)
        return tuple(res)

    def vjp_functional(*args):
        xs, gs = args[:n_in], args[n_in:]
        dx = [k for k, x in enumerate(xs) if _is_diff_tensor(x)]

        def part(*d):
            full = list(xs)
            for k, v in zip(dx, d):
                full[k] = v
            return tuple(o for o, f in zip(functional_tfn(*full), diff_out) if f)

        _, back = torch.func.vjp(part, *(xs[k] for k in dx))
        cts = back(tuple(gs))
        res = [torch.zeros_like(x) for x in xs]
        for k, c in zip(dx, cts):
            res[k] = c
        return tuple(res)

    vjp.functional = vjp_functional
    return vjp


def _torch_jvp(tfn, n_in):
    """``(*xs, *ẋ) -> (*y, *ẏ)`` by ``torch.func.jvp`` (forward-mode AD) of the
    ``functional`` version of ``tfn``."""
    functional_tfn = getattr(tfn, "functional", tfn)

    def jvp(*args):
        xs, ts = args[:n_in], args[n_in:]
        out, tout = torch.func.jvp(functional_tfn, tuple(xs), tuple(ts))
        return (*out, *tout)

    return jvp


def from_torch(module_or_fn, *, name=None, params=None):
    """A torch function or ``torch.nn.Module`` as a diffsci-differentiable function.

    The result is a diffsci primitive (a :class:`diffsci.custom_vjp`): its forward runs the
    torch code on tensors sharing the NumPy arrays' memory (under ``torch.no_grad``), its
    VJP runs ``torch.autograd.grad`` and its JVP ``torch.func.jvp``.  The VJP and JVP are
    bridged the same way, so ``grad`` of ``grad``, ``hessian`` and ``jvp`` of ``grad`` work.
    A torch network can then be the drift of an ``sde.SDE`` or the right-hand side of
    ``diffsci.scipy.integrate.odeint``, differentiated by diffsci's adjoints.

    Args:
        module_or_fn: a function of tensors returning a tensor or a pytree of tensors, or a
            ``torch.nn.Module``.
        name: the name errors use.
        params: for a module only.  ``None`` (default): the result is ``g(params, *inputs)``
            with ``params`` a dict name → NumPy array (the module's parameters by
            ``named_parameters``, put in the module's parameter slots for the call, as
            ``torch.func.functional_call`` does; a tied parameter is one entry), so diffsci
            differentiates them; ``g.params`` holds copies of the module's current values
            (in their dtypes: call ``module.double()`` first for float64).  ``False``: the
            result is ``g(*inputs)`` with the module's parameters as constants.

    Returns:
        A function of NumPy arrays (or diffsci traced values) with the torch function's
        output structure, NumPy arrays at its leaves.

    Raises:
        TypeError: the torch code returns something other than tensors; a tensor off the
            CPU comes back.

    Example:
        >>> import torch, diffsci as ds
        >>> f = from_torch(lambda x: torch.sin(x).sum())
        >>> float(ds.grad(f)(np.array(0.0)))
        1.0
    """
    if isinstance(module_or_fn, torch.nn.Module):
        module = module_or_fn
        mname = name or type(module).__name__
        if params is False:
            return _from_fn(module, mname)
        if params is not None:
            raise TypeError(f"from_torch({mname}): params must be None or False, got "
                            f"{params!r}")
        names = [n for n, _ in module.named_parameters()]
        index = {id(q): k for k, q in enumerate(q for _, q in module.named_parameters())}
        slots = []  # (submodule, attribute, index into names): every use, tied ones too
        for n, q in module.named_parameters(remove_duplicate=False):
            path, _, attr = n.rpartition(".")
            slots.append((module.get_submodule(path) if path else module, attr, index[id(q)]))

        def tfn(*flat):
            # The module run with the given tensors in place of its parameters: what
            # torch.func.functional_call does, with the parameter slots found once (it
            # walks the module on every call, ~0.5 ms for a small MLP).  Restored after.
            k = len(names)
            saved = [sub._parameters[attr] for sub, attr, _ in slots]
            try:
                for sub, attr, j in slots:
                    sub._parameters[attr] = flat[j]
                return module(*flat[k:])
            finally:
                for (sub, attr, _), q in zip(slots, saved):
                    sub._parameters[attr] = q

        inner = _from_fn(tfn, mname)

        def g(p, *inputs):
            if not isinstance(p, dict) or list(p) != names:
                got = list(p) if isinstance(p, dict) else type(p).__name__
                raise TypeError(f"from_torch({mname}): the first argument must be the dict of "
                                f"parameters {names} (g.params), got {got}")
            return inner(*(p[n] for n in names), *inputs)

        g.params = {n: q.detach().cpu().numpy().copy() for n, q in module.named_parameters()}
        g.__name__ = mname
        return g
    if params is not None:
        raise TypeError("from_torch: params applies to a torch.nn.Module only")
    if not callable(module_or_fn):
        raise TypeError(f"from_torch: expected a torch.nn.Module or a function of tensors, got "
                        f"{type(module_or_fn).__name__}")
    return _from_fn(module_or_fn, name or getattr(module_or_fn, "__name__", "fn"))


def _from_fn(fn, name):
    cache = {}

    @functools.wraps(fn) if not isinstance(fn, torch.nn.Module) else (lambda w: w)
    def g(*args):
        leaves, tree = tree_flatten(args)
        for k, x in enumerate(leaves):
            if isinstance(x, _Tensor):
                raise TypeError(f"from_torch({name}): argument leaf {k} is a torch.Tensor; "
                                f"the bridged function takes NumPy arrays (use to_torch for "
                                f"the other direction)")
        box = []
        flat_in = all(c.num_leaves == 1 and not c.children for c in tree.children)

        def tfn(*ts):
            out = fn(*(ts if flat_in else tree_unflatten(tree, list(ts))))
            if type(out) is _Tensor:  # one tensor: no pytree
                box.append(_LEAF_TREE)
                return (out,)
            ol, otree = tree_flatten(out)
            box.append(otree)
            return tuple(ol)

        prim = cache.get(tree)
        if prim is None:  # one primitive per input structure: its VJP/JVP levels are kept
            prim = cache[tree] = _TorchPrim(tfn, name)
            prim.box = box
        xs = [x if type(x) in (Tracer, Dual) else np.asarray(x) for x in leaves]
        outs = prim.prim(*xs)
        return tree_unflatten(prim.box[0], list(outs))

    return g
