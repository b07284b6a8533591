"""Pytrees: nested containers of arrays that transforms flatten and rebuild.

Tuples, lists, dicts, namedtuples and dataclasses are containers without any
registration; ``None`` is an empty container.  Dataclass fields declared with
``field(metadata={"static": True})`` are kept in the tree structure instead of
being treated as leaves.  Other types can be registered with
:func:`register_pytree_node`.  Everything else is a leaf.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from ._core import Dual, Tracer

__all__ = [
    "tree_flatten",
    "tree_unflatten",
    "tree_map",
    "tree_leaves",
    "tree_structure",
    "register_pytree_node",
    "TreeDef",
    "Raveler",
]

_registry = {}  # type -> (flatten(obj) -> (children, aux), unflatten(aux, children) -> obj)


def register_pytree_node(cls: type, flatten: Callable[[Any], tuple[Any, Any]],
                         unflatten: Callable[[Any, Any], Any]) -> None:
    """Make ``cls`` a container.

    ``flatten(obj) -> (children, aux)`` and ``unflatten(aux, children) -> obj``.
    """
    _registry[cls] = (flatten, unflatten)
    _LEAF_TYPES.discard(cls)


class TreeDef:
    """The structure of a pytree: a node kind, static data and child structures."""

    __slots__ = ("kind", "aux", "children", "num_leaves")

    def __init__(self, kind, aux, children):
        self.kind = kind
        self.aux = aux
        self.children = children
        self.num_leaves = 1 if kind is _LEAF else sum(c.num_leaves for c in children)

    def __eq__(self, other):
        return (
            isinstance(other, TreeDef)
            and self.kind == other.kind
            and _same(self.aux, other.aux)
            and self.children == other.children
        )

    def __hash__(self):
        return hash((self.kind, self.children))

    def __repr__(self):
        if self.kind is _LEAF:
            return "*"
        name = self.kind if isinstance(self.kind, str) else self.kind.__name__
        return f"{name}({', '.join(map(repr, self.children))})"


def _same(a, b):
    """Equality of static data; arrays (e.g. a mesh's faces in a static field) by value."""
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, np.ndarray):
        return a.shape == b.shape and a.dtype == b.dtype and bool(np.array_equal(a, b))
    return bool(a == b)


_LEAF = "leaf"
_NONE = "None"


def _dataclass_parts(obj):
    dyn, static = [], []
    for f in dataclasses.fields(obj):
        if f.metadata.get("static", False):
            static.append((f.name, getattr(obj, f.name)))
        else:
            dyn.append(f.name)
    return dyn, static


def _rebuild_dataclass(cls, aux, children):
    # Build without calling __init__/__post_init__: a gradient need not satisfy
    # the invariants of the model it is shaped like (a negative radius, ...).
    names, static = aux
    obj = object.__new__(cls)
    for name, value in zip(names, children):
        object.__setattr__(obj, name, value)
    for name, value in static:
        object.__setattr__(obj, name, value)
    return obj


# Exact types that are always leaves, checked first: most leaves are arrays, numbers or traced
# values, and the container checks below (dataclasses.is_dataclass above all) cost ≈ 1 µs a leaf.
# Other leaf types join the set the first time they are seen.
_LEAF_TYPES = {np.ndarray, float, int, complex, bool, np.float64, np.float32, np.float16,
               np.complex128, np.complex64, np.int64, np.int32, np.bool_, Tracer, Dual}


def _flatten(x, leaves):
    t = type(x)
    if t in _LEAF_TYPES:
        leaves.append(x)
        return _LEAF_DEF
    if t is tuple or t is list:
        return TreeDef(t, None, tuple(_flatten(c, leaves) for c in x))
    if t is dict:
        keys = tuple(x)
        return TreeDef(dict, keys, tuple(_flatten(x[k], leaves) for k in keys))
    if x is None:
        return TreeDef(_NONE, None, ())
    if t in _registry:
        children, aux = _registry[t][0](x)
        return TreeDef(t, aux, tuple(_flatten(c, leaves) for c in children))
    if issubclass(t, tuple) and hasattr(t, "_fields"):  # namedtuple
        return TreeDef(t, None, tuple(_flatten(c, leaves) for c in x))
    if dataclasses.is_dataclass(t):
        names, static = _dataclass_parts(x)
        return TreeDef(
            t, (tuple(names), tuple(static)), tuple(_flatten(getattr(x, n), leaves) for n in names)
        )
    _LEAF_TYPES.add(t)  # a type's kind never changes (register_pytree_node takes it back out)
    leaves.append(x)
    return _LEAF_DEF


_LEAF_DEF = TreeDef(_LEAF, None, ())


def tree_flatten(tree: Any) -> tuple[list[Any], TreeDef]:
    """Flatten a pytree: returns ``(leaves, treedef)``.

    >>> tree_flatten({"a": 1.0, "b": (2.0, None)})
    ([1.0, 2.0], dict(*, tuple(*, None())))
    """
    leaves = []
    treedef = _flatten(tree, leaves)
    return leaves, treedef


def _unflatten(td, it):
    kind = td.kind
    if kind is _LEAF:
        return next(it)
    if kind is _NONE:
        return None
    children = [_unflatten(c, it) for c in td.children]
    if kind is tuple:
        return tuple(children)
    if kind is list:
        return children
    if kind is dict:
        return dict(zip(td.aux, children))
    if kind in _registry:
        return _registry[kind][1](td.aux, children)
    if issubclass(kind, tuple):  # namedtuple
        return kind(*children)
    return _rebuild_dataclass(kind, td.aux, children)


def tree_unflatten(treedef: TreeDef, leaves: Iterable[Any]) -> Any:
    """Rebuild a pytree of structure ``treedef`` from ``leaves``."""
    leaves = list(leaves)
    if len(leaves) != treedef.num_leaves:
        raise ValueError(
            f"tree_unflatten: the structure {treedef!r} has {treedef.num_leaves} leaves, "
            f"got {len(leaves)}"
        )
    return _unflatten(treedef, iter(leaves))


def tree_leaves(tree: Any) -> list[Any]:
    """The leaves of a pytree, in flattening order."""
    return tree_flatten(tree)[0]


def tree_structure(tree: Any) -> TreeDef:
    """The :class:`TreeDef` of a pytree."""
    return tree_flatten(tree)[1]


def tree_map(f: Callable[..., Any], tree: Any, *rest: Any) -> Any:
    """Apply ``f`` leaf-wise to one or more pytrees of the same structure.

    >>> tree_map(lambda a, b: a + b, (1, [2]), (10, [20]))
    (11, [22])
    """
    leaves, td = tree_flatten(tree)
    others = []
    for k, r in enumerate(rest, start=1):
        rl, rtd = tree_flatten(r)
        if rtd != td:
            raise ValueError(
                f"tree_map: tree {k} has structure {rtd!r}, expected the first tree's {td!r}"
            )
        others.append(rl)
    return tree_unflatten(td, [f(*xs) for xs in zip(leaves, *others)])


class Raveler:
    """Flatten pytrees shaped like a reference tree of real arrays into one vector, and back.

    For solvers that work on flat vectors (ODE integrators, root finders).  Values may be
    traced: raveling and unraveling use differentiable NumPy calls.

    Args:
        tree: the reference pytree (its structure and leaf shapes are kept).
        name: its name in error messages ("y0", "x0").
        where: the calling function, prefixed to error messages ("odeint").

    Raises:
        ValueError: the tree has no leaves.
        TypeError: a leaf is complex or not numeric.
    """

    def __init__(self, tree, name, where):
        from ._core import getval

        leaves, self.treedef = tree_flatten(tree)
        self.name, self.where = name, where
        if not leaves:
            raise ValueError(f"{where}: {name} has no array leaves")
        vals = [getval(x) for x in leaves]
        for k, v in enumerate(vals):
            if np.result_type(v).kind not in "iufb":
                raise TypeError(f"{where}: {name} leaf {k} must be real, got dtype "
                                f"{np.result_type(v)} (complex values are not supported)")
        self.shapes = [np.shape(v) for v in vals]
        self.sizes = [int(np.prod(s, dtype=int)) for s in self.shapes]
        dt = np.result_type(*vals)
        self.dtype = dt if dt.kind == "f" else np.dtype(np.float64)
        self.size = sum(self.sizes)

    def ravel(self, tree, what):
        """One vector from ``tree`` (named ``what`` in errors), which must match the reference."""
        from ._core import getval

        leaves, td = tree_flatten(tree)
        if td != self.treedef:
            raise TypeError(f"{self.where}: {what} has structure {td!r}, expected "
                            f"{self.treedef!r} (the structure of {self.name})")
        for k, (x, s) in enumerate(zip(leaves, self.shapes)):
            if np.shape(getval(x)) != s:
                raise ValueError(f"{self.where}: {what} leaf {k} has shape "
                                 f"{np.shape(getval(x))}, expected {s} (the shape of "
                                 f"{self.name}'s leaf)")
        if len(leaves) == 1:
            x = leaves[0]
            return np.reshape(x, (-1,)) if np.ndim(getval(x)) != 1 else x
        return np.concatenate([np.reshape(x, (-1,)) for x in leaves])

    def unravel(self, vec, lead=()):
        """Split ``vec`` of shape ``lead + (size,)`` into leaves shaped ``lead + shape``."""
        from ._core import getval

        if len(self.shapes) == 1:
            shape = lead + self.shapes[0]
            leaf = vec if np.shape(getval(vec)) == shape else np.reshape(vec, shape)
            return tree_unflatten(self.treedef, [leaf])
        out, o = [], 0
        for s, n in zip(self.shapes, self.sizes):
            out.append(np.reshape(vec[..., o:o + n], lead + s))
            o += n
        return tree_unflatten(self.treedef, out)

