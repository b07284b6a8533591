"""Rebuilding a jitted function's outputs: a generated function per output structure."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .._tree import _LEAF, _NONE, TreeDef, _rebuild_dataclass, _registry, tree_unflatten


def _rebuild_node(td, children):
    kind = td.kind
    if kind in _registry:
        return _registry[kind][1](td.aux, children)
    if issubclass(kind, tuple):  # namedtuple
        return kind(*children)
    return _rebuild_dataclass(kind, td.aux, children)


def unflattener(treedef: TreeDef) -> Callable[[Sequence[Any]], Any]:
    """A function ``leaves -> tree_unflatten(treedef, leaves)`` for one structure, generated
    once (no recursion or checks per call: compiled mode rebuilds its outputs with it)."""
    env = {"_rebuild_node": _rebuild_node}
    count = [0]

    def expr(td):
        kind = td.kind
        if kind is _LEAF:
            count[0] += 1
            return f"o[{count[0] - 1}]"
        if kind is _NONE:
            return "None"
        ch = [expr(c) for c in td.children]
        if kind is tuple:
            return "(" + "".join(c + ", " for c in ch) + ")"
        if kind is list:
            return "[" + ", ".join(ch) + "]"
        name = f"_n{len(env)}"
        env[name] = td
        if kind is dict:
            return f"dict(zip({name}.aux, ({''.join(c + ', ' for c in ch)})))"
        return f"_rebuild_node({name}, [{', '.join(ch)}])"

    try:
        body = expr(treedef)
        src = f"def unflatten(o):\n    return {body}\n"
        exec(compile(src, "<diffsci unflattener>", "exec"), env)  # noqa: S102
    except (RecursionError, SyntaxError, MemoryError):  # a very deep tree: the general path
        return lambda leaves: tree_unflatten(treedef, leaves)
    return env["unflatten"]
