"""The problem description: :class:`SDE` and the enums that qualify it.

An SDE ``dy = f(t, y, θ) dt + g(t, y, θ) dW`` is two plain Python functions of ``(t, y, params)``
written with NumPy operations (they run unchanged on plain arrays and on diffsci's traced arrays),
plus two tags: the structure of the noise (:class:`Noise`) and the calculus the stochastic
integral is read in (:class:`Calculus`). The state ``y`` always carries a batch dimension:
shape ``(batch, d)``, one row per independent path.

Shapes of ``g(t, y, params)`` by noise type (``m`` is the Brownian dimension):

============  ==================  ====  ========================================
noise          g's shape           m     g·dW
============  ==================  ====  ========================================
DIAGONAL       (batch, d)          d     g * dW  (elementwise)
SCALAR         (batch, d)          1     g * dW  (dW has shape (batch, 1))
ADDITIVE       (batch, d, m)       m     Σ_j g[:, :, j] dW[:, j]; g independent of y
GENERAL        (batch, d, m)       m     Σ_j g[:, :, j] dW[:, j]
============  ==================  ====  ========================================
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["SDE", "Calculus", "Noise", "Adjoint", "ErrorEstimate", "as_enum"]


class Noise(enum.Enum):
    """The structure of the diffusion term (see the module docstring for shapes)."""

    DIAGONAL = "diagonal"
    SCALAR = "scalar"
    ADDITIVE = "additive"
    GENERAL = "general"


class Calculus(enum.Enum):
    """How the stochastic integral ``∫ g dW`` is read."""

    ITO = "ito"
    STRATONOVICH = "stratonovich"


class Adjoint(enum.Enum):
    """How :func:`sde.sdeint` is differentiated.

    * ``BACKPROP``: record every solver step (discretise-then-optimise; exact for the discrete
      solve; memory O(steps)).
    * ``CHECKPOINT``: the same gradient, with the steps of each save interval run under
      :func:`diffsci.checkpointed_loop` (memory O(snapshots + save points)).
    * ``REVERSIBLE``: reversible Heun's algebraically exact adjoint (Kidger et al. 2021):
      the backprop gradient to round-off at O(1) memory in steps.
    * ``STOCHASTIC``: the stochastic adjoint of Li et al. (2020), a backward Stratonovich SDE
      for the adjoint state (optimise-then-discretise: agrees with backprop as dt → 0).

    Every method differentiates ``y0`` and ``params``. Values that drift and diffusion close
    over are differentiated by ``BACKPROP`` only; the others refuse them with a ValueError
    (pass them in ``params``) — ``REVERSIBLE`` and ``STOCHASTIC`` accept those traced by an
    outer differentiation (grad of grad), ``CHECKPOINT`` none.
    """

    BACKPROP = "backprop"
    CHECKPOINT = "checkpoint"
    REVERSIBLE = "reversible"
    STOCHASTIC = "stochastic"


class ErrorEstimate(enum.Enum):
    """How adaptive stepping (``sdeint(..., adaptive=True)``) estimates a step's local error.

    * ``EMBEDDED``: the difference between the step and a lower-order solution from the same
      stages (Heun ⊃ Euler, Milstein ⊃ Euler; the solver's ``embedded`` flag): one step per
      attempt.
    * ``DOUBLING``: one whole step against two half steps (any one-step solver): three steps
      per attempt.
    """

    EMBEDDED = "embedded"
    DOUBLING = "doubling"


def as_enum(kind: type[enum.Enum], value: Any, argument: str) -> enum.Enum:
    """Convert ``value`` (an enum member or its string value, any case) to ``kind``.

    Raises:
        ValueError: naming ``argument``, the value and the accepted values.
    """
    if isinstance(value, kind):
        return value
    if isinstance(value, str):
        key = value.strip().lower().replace("-", "_").replace("ô", "o")
        for member in kind:
            if member.value == key or member.name.lower() == key:
                return member
    accepted = ", ".join(repr(m.value) for m in kind)
    article = "an" if kind.__name__[0].lower() in "aeiou" else "a"
    raise ValueError(
        f"{argument} must be {article} {kind.__name__} or one of {accepted}, got {value!r}"
    )


@dataclass(frozen=True)
class SDE:
    """A stochastic differential equation ``dy = drift(t, y, θ) dt + diffusion(t, y, θ) dW``.

    Args:
        drift: ``drift(t, y, params) -> (batch, d)``; plain NumPy code (or diffsci.nn models).
        diffusion: ``diffusion(t, y, params)``; shape by noise type in the module docstring.
        noise: a :class:`Noise` or its string (``"diagonal"``, ``"scalar"``, ``"additive"``,
            ``"general"``). Default diagonal.
        calculus: a :class:`Calculus` or ``"ito"`` / ``"stratonovich"``. Default Itô.

    Raises:
        TypeError: drift or diffusion is not callable.
        ValueError: an unknown noise or calculus string.

    Example:
        >>> gbm = SDE(lambda t, y, p: p[0] * y, lambda t, y, p: p[1] * y, noise="diagonal")
        >>> gbm.noise, gbm.calculus
        (<Noise.DIAGONAL: 'diagonal'>, <Calculus.ITO: 'ito'>)
    """

    drift: Callable
    diffusion: Callable
    noise: Noise | str = Noise.DIAGONAL  # a string is converted to its Noise
    calculus: Calculus | str = Calculus.ITO

    def __post_init__(self):
        for name in ("drift", "diffusion"):
            if not callable(getattr(self, name)):
                raise TypeError(
                    f"SDE: {name} must be a function of (t, y, params), got "
                    f"{type(getattr(self, name)).__name__}"
                )
        object.__setattr__(self, "noise", as_enum(Noise, self.noise, "SDE: noise"))
        object.__setattr__(self, "calculus", as_enum(Calculus, self.calculus, "SDE: calculus"))

    def f(self, t: Any, y: Any, params: Any) -> Any:
        """The drift at ``(t, y)``."""
        return self.drift(t, y, params)

    def g(self, t: Any, y: Any, params: Any) -> Any:
        """The diffusion at ``(t, y)``."""
        return self.diffusion(t, y, params)

    def g_prod(self, g: Any, dW: Any) -> Any:
        """``g · dW`` for this noise type: ``(batch, d)``."""
        if self.noise in (Noise.DIAGONAL, Noise.SCALAR):
            return g * dW
        return np.sum(g * dW[:, None, :], axis=-1)

    def g_prod_transpose(self, a: Any, dW: Any) -> Any:
        """The cotangent of ``g`` in ``g_prod(g, dW)`` for the output cotangent ``a`` (linear in g:
        ``ḡ = a ⊙ dW``, or ``ḡ = a ⊗ dW`` per path for additive and general noise)."""
        if self.noise in (Noise.DIAGONAL, Noise.SCALAR):
            return a * dW
        return a[:, :, None] * dW[:, None, :]

    def brownian_dim(self, d: int, g_shape: tuple[int, ...]) -> int:
        """The Brownian dimension m for state dimension d and diffusion shape ``g_shape``."""
        if self.noise is Noise.DIAGONAL:
            return d
        if self.noise is Noise.SCALAR:
            return 1
        return int(g_shape[-1])

    def expected_g_shape(self, batch: int, d: int, m: int | None = None) -> tuple[int, ...]:
        """The diffusion's output shape this noise type requires."""
        if self.noise in (Noise.DIAGONAL, Noise.SCALAR):
            return (batch, d)
        return (batch, d, m)
