"""quantum: a differentiable state-vector simulator on diffsci.

Circuits are data with parameter slots into a flat θ; observables are Pauli sums applied term by
term with bitmask kernels (never a dense matrix); ``expval``, ``var``, ``probs`` and ``state`` are
differentiable in θ through ``diffsci`` — by the adjoint method (one forward pass and one backward
sweep over two state vectors), or by parameter shift — in reverse and forward mode, for batches
θ[B, P] too. The maths of every hand-written adjoint is in ``quantum/DERIVATIONS.md``.

>>> import numpy as np, diffsci as ds
>>> from quantum import Circuit, Z, expval
>>> c = Circuit(2).ry(0).cnot(0, 1)
>>> ds.grad(lambda t: expval(c, t, Z(0) @ Z(1) + Z(1)))(np.array([0.4]))
array([-0.38941834])
"""

from ._gates import GATES
from ._io import from_json, to_json
from ._measure import METHODS, counts, density_matrix, expval, probs, sample, state, var
from ._model import (
    MAX_QUBITS,
    Circuit,
    Hamiltonian,
    Operation,
    Param,
    Program,
    X,
    Y,
    Z,
    ground_state,
    heisenberg,
    maxcut,
    pauli,
    tfim,
)
from ._noise import CHANNELS, MAX_DENSITY_QUBITS
from ._qasm import from_qasm, to_qasm
from ._shots import ShotEstimate, expval_shots
from ._templates import hardware_efficient, qaoa, strongly_entangling

__all__ = [
    "CHANNELS",
    "MAX_DENSITY_QUBITS",
    "GATES",
    "MAX_QUBITS",
    "METHODS",
    "Circuit",
    "Hamiltonian",
    "Operation",
    "Param",
    "Program",
    "ShotEstimate",
    "X",
    "Y",
    "Z",
    "counts",
    "density_matrix",
    "expval",
    "expval_shots",
    "from_json",
    "from_qasm",
    "ground_state",
    "hardware_efficient",
    "heisenberg",
    "maxcut",
    "pauli",
    "probs",
    "qaoa",
    "sample",
    "state",
    "strongly_entangling",
    "tfim",
    "to_json",
    "to_qasm",
    "var",
]
