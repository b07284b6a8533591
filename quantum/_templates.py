"""Circuit templates: ready-made parameterised layers.

- :func:`hardware_efficient` — the paper's ansatz (Innes et al. 2019, §5.2; Kandala et al.,
  Nature 549, 242 (2017)): rotor sets Rz·Rx·Rz on every qubit separated by CNOT rings.
- :func:`strongly_entangling` — general rotations and CNOT rings of growing range (Schuld et al.
  2020).
- :func:`qaoa` — alternating cost and mixer layers for a diagonal cost such as MaxCut (Farhi et al.
  2014).
"""

from __future__ import annotations

from collections.abc import Sequence

from ._model import Circuit, Hamiltonian


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


def strongly_entangling(n_qubits: int, layers: int, *,
                        ranges: Sequence[int] | None = None) -> Circuit:
    """Strongly entangling layers: per layer, a general rotation on every wire, then a CNOT ring.

    Layer ``l`` applies ``Rot(φ, θ, ω) = RZ(ω) RY(θ) RZ(φ)`` to every wire, then
    ``CNOT(i, (i + r_l) mod n)`` for every wire i, with range ``r_l = ranges[l]`` (default
    ``l mod (n - 1) + 1``, as in PennyLane's ``StronglyEntanglingLayers``). One wire: rotations
    only.

    Args:
        n_qubits: number of qubits (>= 1).
        layers: number of layers (>= 1).
        ranges: one range per layer, each in ``[1, n_qubits - 1]`` (default above).

    Returns:
        A :class:`Circuit` with ``3 * n_qubits * layers`` parameters; θ reshaped to
        ``(layers, n_qubits, 3)`` holds ``(φ, θ, ω)`` per layer and wire.

    Raises:
        ValueError: ``layers < 1``; ``ranges`` of the wrong length or out of range.

    Reference: Schuld, Bocharov, Svore & Wiebe, *Circuit-centric quantum classifiers*,
    Phys. Rev. A 101, 032308 (2020), Fig. 4.

    Example:
        >>> strongly_entangling(4, 2).n_params
        24
    """
    if isinstance(layers, bool) or not isinstance(layers, int) or layers < 1:
        raise ValueError(f"strongly_entangling: layers must be an int >= 1; got {layers!r}.")
    c = Circuit(n_qubits)
    n = c.n_qubits
    if ranges is None:
        ranges = [(layer % (n - 1)) + 1 if n > 1 else 0 for layer in range(layers)]
    ranges = list(ranges)
    if len(ranges) != layers:
        raise ValueError(f"strongly_entangling: ranges needs one entry per layer ({layers}); "
                         f"got {len(ranges)}.")
    for r in ranges:
        if n > 1 and not (isinstance(r, int) and 1 <= r <= n - 1):
            raise ValueError(f"strongly_entangling: each range must be an int in [1, {n - 1}]; "
                             f"got {r!r}.")
    for layer in range(layers):
        for q in range(n):
            c.rot(q)
        if n > 1:
            for q in range(n):
                c.cnot(q, (q + ranges[layer]) % n)
    return c


def qaoa(cost: Hamiltonian, depth: int, *, n_qubits: int | None = None) -> Circuit:
    """QAOA circuit: |+…+⟩, then ``depth`` × [cost layer e^{-iγ_l C}, mixer e^{-iβ_l Σ X_i}].

    The cost C must be diagonal (Z-type words, e.g. :func:`maxcut`): each term ``c Z…Z`` becomes
    ``MultiRZ(2 c γ)`` (IsingZZ for two wires, RZ for one) sharing the layer's γ slot, constant
    terms are a global phase and are dropped; the mixer is ``RX(2β)`` on every wire.

    Args:
        cost: a diagonal :class:`Hamiltonian`.
        depth: number of layers p (>= 1).
        n_qubits: register size (default ``cost.n_wires``).

    Returns:
        A :class:`Circuit` with ``2 * depth`` parameters ``θ = (γ_1, β_1, …, γ_p, β_p)``; then
        ``expval(circuit, θ, cost)`` is the QAOA objective.

    Raises:
        TypeError: cost is not a Hamiltonian.
        ValueError: a non-diagonal term (X or Y letters), ``depth < 1``, a too small register.

    Reference: Farhi, Goldstone & Gutmann, arXiv:1411.4028 (2014), eqs. (3)–(5).

    Example:
        >>> from quantum import maxcut
        >>> qaoa(maxcut([(0, 1), (1, 2), (2, 0)]), depth=2).n_params
        4
    """
    if not isinstance(cost, Hamiltonian):
        raise TypeError(f"qaoa: cost must be a quantum.Hamiltonian; got {type(cost).__name__}.")
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
        raise ValueError(f"qaoa: depth must be an int >= 1; got {depth!r}.")
    for coeff, word, _ in cost.terms:
        if set(word) - {"Z"}:
            raise ValueError(f"qaoa: the cost must be diagonal (Z-type words only); got the term "
                             f"{coeff:+g}·{word}. Use PauliRot layers for general Hamiltonians.")
    n = cost.n_wires if n_qubits is None else n_qubits
    if n < cost.n_wires:
        raise ValueError(f"qaoa: n_qubits = {n} but the cost acts on wire {cost.n_wires - 1}.")
    c = Circuit(n)
    for q in range(n):
        c.h(q)
    for _ in range(depth):
        gamma, beta = c.new_param(), c.new_param()
        for coeff, word, wires in cost.terms:
            if word:
                c.multi_rz(wires, 2.0 * coeff * gamma)
        for q in range(n):
            c.rx(q, 2.0 * beta)
    return c
