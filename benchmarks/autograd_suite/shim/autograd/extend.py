"""``autograd.extend``: primitives and their rules, with autograd's rule convention
(``defvjp(f, maker)``, ``maker(ans, *args) -> (g -> cotangent)``) mapped onto diffsci's
(``rule(g, ans, *args)``)."""

import diffsci as _ds

from ._primitive import primitive  # noqa: E402, F401


def defvjp(prim, *makers, argnums=None):
    rules = [None if m is None else (lambda g, ans, *a, m=m, **k: m(ans, *a, **k)(g))
             for m in makers]
    return _ds.defvjp(prim, *rules, argnums=argnums)


def defjvp(prim, *makers, argnums=None):
    rules = [None if m is None else (lambda t, ans, *a, m=m, **k: m(t, ans, *a, **k))
             for m in makers]
    return _ds.defjvp(prim, *rules, argnums=argnums)
