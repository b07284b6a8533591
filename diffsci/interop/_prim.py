"""The recursion both ``from_torch`` and ``from_jax`` rest on: a flat foreign function as a
diffsci ``custom_vjp`` whose VJP and JVP are themselves such primitives, built on first use from
the foreign framework's own vjp/jvp, so every order of differentiation recurses through it."""

from __future__ import annotations

import numpy as np

from .._core import getval
from .._custom import custom_vjp


def _is_float(x):
    return np.result_type(getval(x)).kind in "fc"


class BridgedPrim:
    """Subclasses define ``_run(*arrays) -> tuple of arrays`` (calling :meth:`_outputs` on
    them), ``_vjp_prim(n_in)`` — the primitive ``(*xs, *ȳ of the float outputs) -> x̄`` — and
    ``_jvp_prim(n_in)`` — the primitive ``(*xs, *ẋ) -> (*y, *ẏ)``."""

    def __init__(self, name):
        self.name = name
        self._vjp = self._jvp = None
        self.diff_out = None  # which outputs are float (set by the first call)
        prim = custom_vjp(self._run)
        prim.__name__ = name
        prim.defvjp(self._fwd, self._bwd)
        prim.defjvp(self._jvp_rule)
        self.prim = prim

    def _outputs(self, arrs):
        if self.diff_out is None:
            self.diff_out = [a.dtype.kind in "fc" for a in arrs]
        return tuple(arrs)

    def _fwd(self, *xs):
        return self.prim(*xs), xs

    def _bwd(self, xs, gs):
        if self._vjp is None:
            self._vjp = self._vjp_prim(len(xs))
        gd = [g for g, d in zip(gs, self.diff_out) if d]
        cts = self._vjp.prim(*xs, *gd)
        return tuple(c if _is_float(x) else None for x, c in zip(xs, cts))

    def _jvp_rule(self, primals, tangents):
        if self._jvp is None:
            self._jvp = self._jvp_prim(len(primals))
        zs = [np.zeros(np.shape(getval(p)), np.result_type(getval(p))) if t is None else t
              for p, t in zip(primals, tangents)]
        res = self._jvp.prim(*primals, *zs)
        n = len(res) // 2
        return tuple(res[:n]), tuple(res[n:])
