"""Rebuilding a jitted function's outputs: a generated function per output structure."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .._tree import _LEAF, _LEAF_DEF, _NONE, TreeDef, _unflatten, tree_unflatten


def unflattener(treedef: TreeDef) -> Callable[[Sequence[Any]], Any]:
    """A function ``leaves -> tree_unflatten(treedef, leaves)`` for one structure, generated
    once (no recursion or checks per call: compiled mode rebuilds its outputs with it)."""
    env = {"_unflatten": _unflatten}
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
        if kind is dict:
            env[name] = td.aux
            return f"dict(zip({name}, ({''.join(c + ', ' for c in ch)})))"
        # any other node (registered, namedtuple, dataclass): the general rebuild of the node
        # alone, its children taken as leaves
        env[name] = TreeDef(kind, td.aux, (_LEAF_DEF,) * len(ch))
        return f"_unflatten({name}, iter(({''.join(c + ', ' for c in ch)})))"

    try:
        body = expr(treedef)
        src = f"def unflatten(o):\n    return {body}\n"
        exec(compile(src, "<diffsci unflattener>", "exec"), env)  # noqa: S102
    except (RecursionError, SyntaxError, MemoryError):  # a very deep tree: the general path
        return lambda leaves: tree_unflatten(treedef, leaves)
    return env["unflatten"]
