"""autograd's ``primitive`` as diffsci's, with autograd's deprecated rule-definition methods
(``defgrad``, ``defvjp``, ``defvjp_is_zero``) mapped onto :func:`diffsci.defvjp`."""

import numpy as np

import diffsci as ds


def primitive(fun):
    p = ds.primitive(fun)

    def defgrad(maker, argnum=0):  # maker(ans, *args) -> (g -> cotangent)
        ds.defvjp(p, lambda g, ans, *a, **k: maker(ans, *a, **k)(g), argnums=[argnum])

    def defvjp(rule, argnum=0):  # rule(g, ans, vs, gvs, *args)
        ds.defvjp(p, lambda g, ans, *a, **k: rule(g, ans, None, None, *a, **k),
                  argnums=[argnum])

    def defvjp_is_zero(argnums=(0,)):
        for i in argnums:
            ds.defvjp(p, lambda g, ans, *a, i=i, **k: np.zeros(np.shape(a[i])), argnums=[i])

    p.defgrad, p.defvjp, p.defvjp_is_zero = defgrad, defvjp, defvjp_is_zero
    return p
