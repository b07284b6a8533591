"""Text drawing of a circuit: one line per wire, gates packed into columns left to right.

Targets show the gate's label (``RX(θ0)``), controls ``●``, a CNOT's/Toffoli's target ``X``, and
wires crossed by a multi-wire gate ``┼``.
"""

from __future__ import annotations

from ._model import Circuit


def draw(circuit: Circuit) -> str:
    """The circuit as text, e.g. ``0: ─H──●─`` / ``1: ────X─``."""
    n = circuit.n_qubits
    columns: list[dict[int, str]] = []
    busy_until = [0] * n  # first free column per wire
    for op in circuit.ops:
        touched = op.wires + op.controls
        lo, hi = min(touched), max(touched)
        col = max(busy_until[lo : hi + 1])
        while len(columns) <= col:
            columns.append({})
        cells = columns[col]
        label = op.label()
        if op.name in ("CNOT", "Toffoli"):
            label = "X"
        elif op.name in ("CZ",):
            label = "Z"
        elif op.name in ("CY",):
            label = "Y"
        elif op.name.startswith("C") and op.name not in ("CSWAP",) and op.controls:
            label = label[1:]
        for w in range(lo, hi + 1):
            cells[w] = "│"
        for w in op.controls:
            cells[w] = "●"
        for w in op.wires:
            cells[w] = "×" if op.name in ("SWAP", "CSWAP") else label
        for w in range(lo, hi + 1):
            busy_until[w] = col + 1
    width = len(str(n - 1))
    lines = [f"{w:>{width}}: ─" for w in range(n)]
    for cells in columns:
        size = max(len(s) for s in cells.values())
        for w in range(n):
            s = cells.get(w, "")
            if s == "│":
                s = "┼"
            lines[w] += s + "─" * (size - len(s)) + "──"
    return "\n".join(lines)
