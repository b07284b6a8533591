"""Saving and loading circuits as JSON, with their parameter slots (and optionally θ).

The document is plain data: ``{"format": "diffsci.quantum.circuit", "version": 1, "n_qubits",
"n_params", "ops": [...], "theta": [...] | null}``; each op holds its name, wires, controls,
angles (``{"param": index, "scale": s}`` for a slot of θ, a number for a fixed angle), and where
it has them its Pauli word, its matrix (a QubitUnitary's, as ``[[re, im], ...]`` rows) or its
channel data (a named channel's strength, a Kraus channel's operators). Loading rebuilds the
circuit through the validating builder (:meth:`Circuit.append`, :meth:`Circuit.channel`), so a
document is checked exactly as a circuit built by hand.
"""

from __future__ import annotations

import json

import numpy as np

from diffsci.typing import ArrayLike

from ._gates import GATES
from ._model import Circuit, Param
from ._noise import CHANNELS, KRAUS

FORMAT = "diffsci.quantum.circuit"
VERSION = 1


def _matrix_out(m) -> list:
    m = np.asarray(m, np.complex128)
    return [[[float(v.real), float(v.imag)] for v in row] for row in m]


def _matrix_in(data, what: str) -> np.ndarray:
    try:
        a = np.array(data, np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{what}: a matrix must be rows of [re, im] pairs.") from exc
    if a.ndim != 3 or a.shape[-1] != 2:
        raise ValueError(f"{what}: a matrix must be rows of [re, im] pairs; got shape "
                         f"{a.shape}.")
    return a[..., 0] + 1j * a[..., 1]


def to_json(circuit: Circuit, theta: ArrayLike | None = None, *,
            indent: int | None = None) -> str:
    """The circuit (and θ, if given) as a JSON document.

    Args:
        circuit: any circuit (gates and channels).
        theta: parameters of shape (n_params,) to store with it, or None.
        indent: passed to ``json.dumps``.

    Returns:
        The JSON text; :func:`from_json` reads it back to an equal circuit (same gates, same
        slots, same θ).

    Raises:
        TypeError: circuit is not a Circuit. ValueError: theta's shape or a non-finite θ.

    Example:
        >>> c2, t2 = from_json(to_json(Circuit(1).rx(0), [0.5]))
        >>> c2.n_params, t2
        (1, array([0.5]))
    """
    if not isinstance(circuit, Circuit):
        raise TypeError(f"to_json: circuit must be a quantum.Circuit; got "
                        f"{type(circuit).__name__}.")
    if theta is not None:
        theta = np.asarray(theta, np.float64)
        if theta.shape != (circuit.n_params,):
            raise ValueError(f"to_json: theta must have shape ({circuit.n_params},); got shape "
                             f"{theta.shape}.")
        if not np.isfinite(theta).all():
            raise ValueError(f"to_json: theta must be finite; got {theta.tolist()}.")
    ops = []
    for op in circuit.ops:
        d = {"name": op.name, "wires": list(op.wires), "controls": list(op.controls)}
        if op.name in CHANNELS:
            d["strength"] = float(op.angles[0])
        elif op.name == KRAUS:
            d["kraus"] = [_matrix_out(k) for k in op.kraus]
        else:
            d["angles"] = [{"param": a.index, "scale": a.scale} if isinstance(a, Param)
                           else float(a) for a in op.angles]
            if op.paulis is not None:
                d["paulis"] = op.paulis
            if op.matrix is not None:
                d["matrix"] = _matrix_out(op.matrix)
        ops.append(d)
    doc = {"format": FORMAT, "version": VERSION, "n_qubits": circuit.n_qubits,
           "n_params": circuit.n_params, "ops": ops,
           "theta": None if theta is None else theta.tolist()}
    return json.dumps(doc, indent=indent)


def from_json(text: str) -> tuple[Circuit, np.ndarray | None]:
    """Read a circuit written by :func:`to_json`.

    Returns:
        ``(circuit, theta)``: θ as stored, or None when the document has none.

    Raises:
        ValueError: not JSON, another format or version, a bad op (unknown gate, bad wires,
            angles, matrix, a non-unitary matrix, a non-CPTP channel: the builder's errors,
            prefixed with the op's index), a θ of the wrong length.
    """
    if not isinstance(text, str | bytes):
        raise TypeError(f"from_json: text must be a str; got {type(text).__name__}.")
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"from_json: not a JSON document: {exc}.") from exc
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ValueError(f"from_json: expected a document with format {FORMAT!r}.")
    if doc.get("version") != VERSION:
        raise ValueError(f"from_json: unsupported version {doc.get('version')!r} (this reader: "
                         f"{VERSION}).")
    c = Circuit(doc["n_qubits"])
    for k, d in enumerate(doc.get("ops", [])):
        what = f"from_json: op {k}"
        try:
            name = d["name"]
            if name in CHANNELS:
                c.channel(name, d["wires"], d["strength"])
            elif name == KRAUS:
                c.kraus(d["wires"], [_matrix_in(m, what) for m in d["kraus"]])
            else:
                angles = [Param(a["param"], a["scale"]) if isinstance(a, dict) else a
                          for a in d.get("angles", [])]
                matrix = _matrix_in(d["matrix"], what) if "matrix" in d else None
                spec = GATES.get(name)
                nc = spec.base_controls if spec is not None else 0
                ctrl = list(d.get("controls", []))  # the implied controls first (Operation)
                c.append(name, ctrl[:nc] + list(d["wires"]), angles, controls=ctrl[nc:],
                         paulis=d.get("paulis"), matrix=matrix)
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"{what} ({d.get('name') if isinstance(d, dict) else d}): "
                             f"{exc}") from exc
    n_params = doc.get("n_params", c.n_params)
    if not isinstance(n_params, int) or n_params < c.n_params:
        raise ValueError(f"from_json: n_params {n_params!r} is below the slots the ops use "
                         f"({c.n_params}).")
    c._n_params = n_params
    theta = doc.get("theta")
    if theta is not None:
        theta = np.asarray(theta, np.float64)
        if theta.shape != (n_params,) or not np.isfinite(theta).all():
            raise ValueError(f"from_json: theta must be {n_params} finite numbers; got "
                             f"{doc['theta']!r}.")
    return c, theta
