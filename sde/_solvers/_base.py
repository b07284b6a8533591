"""The solver interface: :class:`AbstractSolver` and the :class:`Method` names."""

from __future__ import annotations

import abc
import enum
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from .._model import SDE, Calculus, Noise

__all__ = ["AbstractSolver", "Method"]


class Method(enum.Enum):
    """The solvers by name (``sdeint(method=...)`` also accepts these strings)."""

    EULER = "euler"
    MILSTEIN = "milstein"
    HEUN = "heun"
    EULER_HEUN = "euler_heun"
    SRA1 = "sra1"
    SRI = "sri"
    REVERSIBLE_HEUN = "reversible_heun"


@dataclass(frozen=True)
class AbstractSolver(abc.ABC):
    """A fixed-step SDE solver.

    Class attributes every solver declares:
        method: its :class:`Method`.
        strong_order: the strong order of convergence per supported noise type (the keys are the
            supported noise types).
        calculus: the calculi it solves (a solver for one calculus also accepts additive noise
            in the other, where the two coincide).
        needs_levy_area: whether a step needs the space-time Lévy area ``H``.
        embedded: whether :meth:`step_with_error` gives an embedded error estimate (a lower-order
            solution from the same stages), used by adaptive stepping.
        error_order: the power of h that the embedded estimate scales with in mean square
            (``p̂ + ½`` for an embedded solution of strong order ``p̂``): the controller's
            exponent is ``−1/error_order``.

    A step maps ``(y, state)`` at ``t`` to ``(y, state)`` at ``t + dt`` given the Brownian
    increment ``dW`` (and ``H``); ``state`` is solver-specific (``None`` for one-step methods).
    Steps are plain NumPy code, so they run on traced values (backpropagation through the solver).
    """

    method: ClassVar[Method]
    strong_order: ClassVar[Mapping[Noise, float]]
    calculus: ClassVar[frozenset[Calculus]]
    needs_levy_area: ClassVar[bool] = False
    embedded: ClassVar[bool] = False
    error_order: ClassVar[float] = 1.0

    def check(self, sde: SDE) -> None:
        """Raise ValueError if this solver does not support ``sde``'s noise or calculus."""
        name = self.method.value
        if sde.noise not in self.strong_order:
            ok = ", ".join(n.value for n in self.strong_order)
            raise ValueError(
                f"sdeint: method {name!r} does not support noise {sde.noise.value!r} "
                f"(supported: {ok})"
            )
        if sde.calculus not in self.calculus and sde.noise is not Noise.ADDITIVE:
            ok = ", ".join(c.value for c in self.calculus)
            raise ValueError(
                f"sdeint: method {name!r} solves {ok} SDEs, got "
                f"{'an' if sde.calculus is Calculus.ITO else 'a'} {sde.calculus.value} SDE "
                f"with {sde.noise.value} noise; pick a solver for {sde.calculus.value} "
                f"calculus or convert the drift"
            )

    def init(self, sde: SDE, t0: float, y0, params) -> Any:
        """The solver state at ``t0`` (``None`` unless the method carries one)."""
        return None

    @abc.abstractmethod
    def step(self, sde: SDE, t: float, dt: float, y, state, params, dW, H=None):
        """One step: returns ``(y_next, state_next)``."""

    def step_with_error(self, sde: SDE, t: float, dt: float, y, state, params, dW, H=None):
        """One step and its embedded local error estimate: ``(y_next, state_next, err)``.

        Raises:
            NotImplementedError: the method has no embedded pair (``embedded`` is False).
        """
        raise NotImplementedError(
            f"method {self.method.value!r} has no embedded error estimate; "
            f"use error_estimate='doubling'"
        )
