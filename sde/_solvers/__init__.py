"""The solvers, one per file, and the table that names them."""

from ._base import AbstractSolver, Method
from .euler import Euler
from .euler_heun import EulerHeun
from .heun import Heun
from .milstein import Milstein
from .reversible_heun import ReversibleHeun
from .sra1 import SRA1
from .sri import SRI

SOLVERS: dict[Method, AbstractSolver] = {
    Method.EULER: Euler(),
    Method.MILSTEIN: Milstein(),
    Method.HEUN: Heun(),
    Method.EULER_HEUN: EulerHeun(),
    Method.SRA1: SRA1(),
    Method.SRI: SRI(),
    Method.REVERSIBLE_HEUN: ReversibleHeun(),
}

__all__ = ["SOLVERS", "SRA1", "SRI", "AbstractSolver", "Euler", "EulerHeun", "Heun", "Method",
           "Milstein", "ReversibleHeun"]
