"""Circuit templates: ready-made parameterised layers.

- :func:`hardware_efficient` — the paper's ansatz (Innes et al. 2019, §5.2; Kandala et al.,
  Nature 549, 242 (2017)): rotor sets Rz·Rx·Rz on every qubit separated by CNOT rings.
"""

from __future__ import annotations

from ._model import Circuit


def hardware_efficient(n_qubits: int, layers: int, *, ring: bool = True) -> Circuit:
    """Hardware-efficient ansatz: ``layers + 1`` rotor sets separated by ``layers`` CNOT rings.

    Each rotor is ``Rz · Rx · Rz`` (applied Rz, then Rx, then Rz); the first set has no leading
    Rz (it would act on |0⟩ trivially) and the last set no trailing Rz (it commutes with a ZZ-type
    measurement basis), as in the paper's VQE. A ring is ``CNOT(i, i+1 mod n)`` for every i
    (open chain when ``ring=False`` or n = 2).

    Args:
        n_qubits: number of qubits (>= 1).
        layers: number of CNOT rings (>= 0).
        ring: close the chain with CNOT(n-1, 0).

    Returns:
        A :class:`Circuit` with ``n_qubits * (3 * (layers + 1) - 2)`` parameters (one layer or
        more), ordered gate by gate.

    Example:
        >>> hardware_efficient(4, 2).n_params
        28
    """
    if layers < 0:
        raise ValueError(f"hardware_efficient: layers must be >= 0; got {layers}.")
    c = Circuit(n_qubits)
    for layer in range(layers + 1):
        for q in range(n_qubits):
            if layer > 0:
                c.rz(q)
            c.rx(q)
            if layer < layers:
                c.rz(q)
        if layer < layers:
            last = n_qubits if ring and n_qubits > 2 else n_qubits - 1
            for q in range(last):
                c.cnot(q, (q + 1) % n_qubits)
    return c
