"""Entry points: :func:`render` (differentiable) and display helpers (exposure, gamma, PNG).

Example:
    >>> import raytrace as rt
    >>> scene = rt.Scene(rt.Camera(eye=(0.0, 0.0, -5.0), width=8, height=8),
    ...                  (rt.Sphere((0.0, 0.0, 0.0), 1.0),),
    ...                  (rt.PointLight((2.0, 2.0, -5.0), 500.0),))
    >>> rt.render(scene).shape
    (8, 8, 3)
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from diffsci.typing import Array, ArrayLike

if TYPE_CHECKING:
    from ._model import Scene

import numpy as np

from ._ops import check_options, render_primitive

__all__ = ["render", "save_png", "to_display"]


def render(scene: Scene, *, depth: int = 2, samples: int = 1, seed: int = 0,
           edges: bool | float = False, device: str = "cpu") -> Array:
    """Render a scene by Whitted ray tracing; differentiable with respect to the whole scene.

    Primary rays through each pixel (``samples`` stratified jittered rays per pixel, a perfect
    square; 1 means the pixel centre), closest hits against spheres, planes, triangles and meshes,
    Blinn–Phong shading with ambient and hard shadows (a shadow ray per light), and up to ``depth``
    mirror bounces weighted by the material's reflection coefficient. The image is linear
    radiance (not clamped); use :func:`to_display` for viewing.

    Under ``diffsci.grad`` the gradient is a Scene-shaped pytree from the hand-written adjoint
    kernel; under ``diffsci.jvp`` a hand-written tangent kernel gives the image's directional
    derivative (``raytrace/DERIVATIONS.md``, R1–R16). Second derivatives are not supported.
    Without the edge term the gradient is exact for parameters that move no visibility edge
    (light intensity and colour, directional-light colour; material colours, exponent,
    reflection; texels, UVs and texture axes; background) and, for geometry, camera and light
    position/direction, wherever no silhouette or shadow edge crosses a pixel sample under the
    perturbation. With ``edges=True`` the motion of silhouettes (seen directly or in a planar
    mirror, clipped to the view so edges crossing the eye plane count), of hard-shadow
    boundaries and of the horizons of infinite planes is differentiated too (unbiased, by
    sampling), so those gradients are right across object outlines, shadow edges and horizons.
    Not covered: silhouettes reflected by spheres, triangles or meshes or after two mirror
    bounces, shadows and horizons seen in mirrors, and intersection curves of objects (R11,
    R12, R16).

    Sphere centre and radius gradients have a heavy-tailed interior term near the outline (the
    hit's ∂t/∂c grows as 1/√(distance to the silhouette)): their seed-spread falls more slowly
    than 1/√samples (measured ∂/∂c_x spread 4.4, 1.3, 0.94, 0.84 at 16, 64, 256, 1024 samples
    per pixel; DERIVATIONS.md, R11). Not yet fixed (it needs a change of variables there).

    Args:
        scene: a :class:`~raytrace.Scene`.
        depth: the number of mirror bounces (the paper uses 2).
        samples: rays per pixel, a perfect square (s × s strata).
        seed: seed of the sample jitter (same seed → same rays, also in the backward pass).
        edges: add the visibility-edge term to the gradient (Li et al. 2018 edge sampling of
            primary silhouettes of triangles, meshes and spheres, ``raytrace/_edges.py``, and of
            the hard-shadow boundaries they cast, ``raytrace/_shadow_edges.py``, and the
            horizons of planes, ``raytrace/_horizon.py``). ``True``
            samples 4 points per pixel of projected curve length; a float sets that density.
            The forward image is unchanged.
        device: ``"cpu"`` (Numba, parallel over pixels) or ``"cuda"`` (numba.cuda render,
            adjoint and tangent kernels, one thread per sample; the edge terms' radiance
            evaluations and ray casts run on the GPU, their sampling on the host).

    Returns:
        A (height, width, 3) float array, float32 if every float field of the scene is float32.

    Raises:
        ValueError: a bad option, or a bad scene value (naming the object and field).

    References:
        T. Whitted (1980), CACM 23(6); J. F. Blinn (1977), SIGGRAPH; T.-M. Li et al. (2018),
        "Differentiable Monte Carlo Ray Tracing through Edge Sampling", ACM TOG 37(6).
    """
    depth, side, seed, device, density = check_options(depth, samples, seed, device, edges)
    return render_primitive(scene, depth, side, seed, device, density)


def to_display(image: ArrayLike, *, exposure: float = 1.0, gamma: float = 2.2) -> np.ndarray:
    """Linear radiance → displayable RGB in [0, 1]: ``clip(exposure · image, 0, 1) ** (1/gamma)``.

    Example:
        >>> to_display(np.array([[[0.25, 2.0, -1.0]]]), gamma=1.0)
        array([[[0.25, 1.  , 0.  ]]])
    """
    return np.clip(exposure * np.asarray(image, dtype=np.float64), 0.0, 1.0) ** (1.0 / gamma)


def save_png(path: str | os.PathLike[str], image: ArrayLike, *, exposure: float = 1.0,
             gamma: float = 2.2) -> None:
    """Write :func:`to_display` of ``image`` as a PNG through Matplotlib."""
    import matplotlib.pyplot as plt

    plt.imsave(path, to_display(image, exposure=exposure, gamma=gamma))
