"""Mesh builders: :func:`uv_sphere`, a closed faceted sphere (for tests, examples, benchmarks)."""

from __future__ import annotations

import numpy as np

from diffsci.typing import ArrayLike

from ._model import Material, Mesh, to_float_array

__all__ = ["uv_sphere"]


def uv_sphere(n: int, center: ArrayLike = (0.0, 0.0, 0.0), radius: float = 1.0,
              material: Material | None = None) -> Mesh:
    """A closed UV-sphere triangle mesh with 4n(n − 1) outward-facing faces.

    n − 1 rings of 2n vertices at polar angles kπ/n plus the two poles; quads between rings are
    split in two, and each pole gets a fan of 2n triangles.

    Args:
        n: rings + 1 (n ≥ 2).
        center, radius: the sphere's centre and radius.
        material: the mesh's material (default :class:`~raytrace.Material`).

    Returns:
        A :class:`~raytrace.Mesh` with 2n(n − 1) + 2 vertices.

    Raises:
        ValueError: n is not an int >= 2, radius <= 0 (or NaN), center not of shape (3,).
        TypeError: radius is not a number (bools are not), center holds non-numbers.

    Example:
        >>> uv_sphere(4).faces.shape
        (48, 3)
    """
    if not isinstance(n, (int, np.integer)) or isinstance(n, (bool, np.bool_)) or n < 2:
        raise ValueError(f"uv_sphere: n: expected an int >= 2, got {n!r}")
    if isinstance(radius, (bool, np.bool_)) or not isinstance(radius, (int, float, np.number)):
        raise TypeError(f"uv_sphere: radius: expected a number, got {type(radius).__name__} "
                        f"({radius!r})")
    if not radius > 0:
        raise ValueError(f"uv_sphere: radius: expected > 0, got {radius!r}")
    center = to_float_array("uv_sphere: center", center)
    if np.shape(center) != (3,):
        raise ValueError(f"uv_sphere: center: expected shape (3,), got {np.shape(center)}")
    th = np.linspace(0.0, np.pi, n + 1)[1:-1]
    ph = np.linspace(0.0, 2.0 * np.pi, 2 * n, endpoint=False)
    t, p = np.meshgrid(th, ph, indexing="ij")
    v = np.column_stack([(np.sin(t) * np.cos(p)).ravel(), np.cos(t).ravel(),
                         (np.sin(t) * np.sin(p)).ravel()])
    v = np.vstack([v, [[0.0, 1.0, 0.0], [0.0, -1.0, 0.0]]]) * radius + np.asarray(center)
    m, rows = 2 * n, n - 1
    idx = np.arange(rows * m).reshape(rows, m)
    nxt = np.roll(idx, -1, axis=1)
    a, b, c, d = idx[:-1].ravel(), nxt[:-1].ravel(), idx[1:].ravel(), nxt[1:].ravel()
    faces = np.concatenate([
        np.column_stack([a, c, b]), np.column_stack([b, c, d]),
        np.column_stack([np.full(m, rows * m), idx[0], nxt[0]]),
        np.column_stack([np.full(m, rows * m + 1), nxt[-1], idx[-1]]),
    ])
    return Mesh(v, faces[:, ::-1], material)  # the rows above wind inward
