"""The one device convention shared by every diffsci package.

Every function that can run on a GPU takes ``device="cpu"`` (the default) or ``device="cuda"`` and
passes it through :func:`check_device` once, at the API boundary. ``"cuda"`` runs the package's
numba.cuda kernels: on a real GPU when one is usable, or on numba's CUDA simulator when
``NUMBA_ENABLE_CUDASIM=1`` was set before numba.cuda was first imported (the simulator runs the
kernels in Python threads, so it is for tests on small inputs, not for speed).

numba.cuda is imported lazily, inside the functions that need it, so this module imports on any
machine, and importing it never fixes numba.cuda's mode (real or simulator) behind a caller's back.

The module also defines :class:`GpuCheck`, one entry of the registry that
``benchmarks/gpu_check.py`` runs: each package lists its CUDA kernels against its CPU kernels in a
``<package>/_gpu_checks.py`` module as ``CHECKS = [GpuCheck(...), ...]``.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

__all__ = [
    "DEFAULT_DEVICE",
    "DEVICES",
    "Device",
    "GpuCheck",
    "check_device",
    "cuda_available",
    "cuda_simulator_active",
    "device_info",
]

Device = Literal["cpu", "cuda"]
DEVICES: tuple[Device, ...] = ("cpu", "cuda")
DEFAULT_DEVICE: Device = "cpu"

SIMULATOR_ENV = "NUMBA_ENABLE_CUDASIM"
_HINTS = {"gpu": "cuda", "cuda:0": "cuda", "host": "cpu"}


def cuda_simulator_active() -> bool:
    """Whether numba.cuda runs (or, once imported, will run) on numba's CUDA simulator.

    Once numba is imported its configuration decides, so ``numba.config.ENABLE_CUDASIM`` is read;
    before that, the ``NUMBA_ENABLE_CUDASIM`` environment variable is read the way numba reads it
    (an integer, non-zero meaning on). The flag only takes effect if it is set before numba.cuda is
    first imported.

    Returns:
        True if the simulator is switched on.

    Example:
        In a fresh process, ``NUMBA_ENABLE_CUDASIM=1 python -c "from diffsci.devices import
        cuda_simulator_active; print(cuda_simulator_active())"`` prints ``True``. Within a
        process the answer depends on how numba was first imported there:

        >>> cuda_simulator_active()   # doctest: +SKIP
        True
        >>> isinstance(cuda_simulator_active(), bool)
        True
    """
    config = sys.modules.get("numba.core.config")
    if config is not None:
        return bool(getattr(config, "ENABLE_CUDASIM", 0))
    value = os.environ.get(SIMULATOR_ENV, "").strip()
    try:
        return int(value or "0") != 0
    except ValueError:  # numba warns and falls back to 0 on a malformed value
        return False


def _probe_cuda() -> tuple[bool, str | None, str | None]:
    """Look for a real GPU through numba.cuda; returns ``(available, gpu_name, error)``.

    Never raises: a missing driver, a missing numba.cuda or any other failure is reported in
    ``error``. Reports no GPU while the simulator is active (the simulator claims a fake device).
    """
    if cuda_simulator_active():
        return False, None, None
    try:
        cuda = importlib.import_module("numba.cuda")
        if "simulator" in getattr(cuda.is_available, "__module__", ""):
            return False, None, None  # numba.cuda was imported in simulator mode earlier
        if not cuda.is_available():
            return False, None, None
        name = cuda.get_current_device().name
        if isinstance(name, bytes):
            name = name.decode(errors="replace")
        return True, str(name), None
    except Exception as exc:  # noqa: BLE001 - any failure means "no usable GPU"
        return False, None, f"{type(exc).__name__}: {exc}".strip()


def cuda_available() -> bool:
    """Whether a real CUDA GPU is usable through numba.cuda.

    Imports numba.cuda on first use (lazily) and swallows every error: a machine without a driver,
    without numba.cuda or with a broken CUDA install simply has no GPU. The CUDA simulator does not
    count: with ``NUMBA_ENABLE_CUDASIM=1`` this returns False (see :func:`cuda_simulator_active`).

    Returns:
        True if numba.cuda reports a usable, real GPU.

    Example:
        >>> cuda_available()      # on a laptop without an NVIDIA GPU
        False
    """
    return _probe_cuda()[0]


def check_device(device: Any) -> Device:
    """Validate a ``device`` argument and return it normalised to ``"cpu"`` or ``"cuda"``.

    Case and surrounding whitespace are ignored. Call it once at the API boundary; kernels below
    it may assume a valid device.

    Args:
        device: ``"cpu"`` or ``"cuda"``.

    Returns:
        ``"cpu"`` or ``"cuda"``.

    Raises:
        ValueError: ``device`` is not one of the allowed values (the message names both).
        RuntimeError: ``"cuda"`` was requested but neither a real GPU nor the CUDA simulator is
            available; the message says how to get either.

    Example:
        >>> check_device(" CPU ")
        'cpu'
        >>> check_device("gpu")
        Traceback (most recent call last):
        ...
        ValueError: device must be one of 'cpu', 'cuda'; got 'gpu' (str). Did you mean 'cuda'?
    """
    normalised = device.strip().lower() if isinstance(device, str) else None
    if normalised not in DEVICES:
        allowed = ", ".join(repr(d) for d in DEVICES)
        message = f"device must be one of {allowed}; got {device!r} ({type(device).__name__})."
        if normalised in _HINTS:
            message += f" Did you mean {_HINTS[normalised]!r}?"
        raise ValueError(message)
    if normalised == "cuda" and not (cuda_simulator_active() or cuda_available()):
        raise RuntimeError(
            "device='cuda' was requested but no CUDA GPU is usable through numba.cuda. "
            "On a machine with an NVIDIA GPU and driver, install the extra: "
            "pip install 'diffsci[cuda]'. To run the CUDA kernels on the CPU instead "
            "(slow; for tests), set NUMBA_ENABLE_CUDASIM=1 before numba.cuda is first imported. "
            "Otherwise use device='cpu'."
        )
    return normalised  # type: ignore[return-value]


def device_info() -> dict[str, Any]:
    """Summarise what this process can run on, for bug reports and benchmark headers.

    Returns:
        A dict with keys ``numba_version`` (str, or None if numba is not installed),
        ``cuda_available`` (bool, a real GPU), ``cuda_simulator_active`` (bool), ``gpu_name``
        (str or None) and ``cuda_error`` (why probing numba.cuda failed, or None).

    Example:
        >>> sorted(device_info())
        ['cuda_available', 'cuda_error', 'cuda_simulator_active', 'gpu_name', 'numba_version']
        >>> device_info()        # doctest: +SKIP
        {'numba_version': '0.61.0', 'cuda_available': False, 'cuda_simulator_active': False,
         'gpu_name': None, 'cuda_error': None}

        (the values are this machine's: above, a laptop without an NVIDIA GPU).
    """
    try:
        numba_version: str | None = importlib.metadata.version("numba")
    except importlib.metadata.PackageNotFoundError:
        numba_version = None
    available, gpu_name, error = _probe_cuda()
    return {
        "numba_version": numba_version,
        "cuda_available": available,
        "cuda_simulator_active": cuda_simulator_active(),
        "gpu_name": gpu_name,
        "cuda_error": error,
    }


@dataclass(frozen=True)
class GpuCheck:
    """One CUDA-kernel-versus-CPU-kernel check, as run by ``benchmarks/gpu_check.py``.

    A package lists its checks in ``<package>/_gpu_checks.py`` as ``CHECKS = [GpuCheck(...)]``.
    The runner draws inputs with ``make_inputs(rng, size)``, calls every function as ``fn(*inputs)``
    and compares each result with ``reference_fn``'s by the relative error
    ``max|result - ref| / max|ref|`` (over every output array). ``cuda_fn`` receives the inputs with
    every ndarray already copied to the device and returns device arrays (or host arrays); the
    runner synchronises and copies back outside the timed region, so the times are kernel times
    without transfers. Results may be one array or a tuple of arrays.

    Args:
        package: the package the kernel belongs to, e.g. ``"quantum"``.
        name: the kernel's name, e.g. ``"apply_1q_gate"``.
        make_inputs: ``(rng: numpy.random.Generator, size: int) -> tuple`` of plain ndarrays and
            scalars; ``size`` is the problem size (elements, amplitudes, paths ...).
        cpu_fn: the CPU (Numba ``@njit``) kernel entry point, returning host arrays.
        cuda_fn: the numba.cuda entry point on device inputs.
        reference_fn: an independent float64 NumPy implementation, returning host arrays.
        size: the problem size on a real GPU.
        sim_size: the problem size on the CUDA simulator (tiny: it runs in Python threads).
        rtol: the largest relative error accepted for either kernel against the reference.

    Raises:
        ValueError: a field has the wrong type or range (the message names the field).

    Example:
        >>> import numpy as np
        >>> negate = GpuCheck("diffsci", "negate", lambda rng, size: (rng.random(size),),
        ...                   cpu_fn=np.negative, cuda_fn=np.negative,
        ...                   reference_fn=np.negative, size=1 << 24)
        >>> negate.size, negate.sim_size, negate.rtol
        (16777216, 64, 1e-12)
        >>> GpuCheck("diffsci", "negate", None, np.negative, np.negative, np.negative)
        Traceback (most recent call last):
        ...
        ValueError: GpuCheck.make_inputs of diffsci.negate must be callable; got None (NoneType).
    """

    package: str
    name: str
    make_inputs: Callable[..., tuple[Any, ...]]
    cpu_fn: Callable[..., Any]
    cuda_fn: Callable[..., Any]
    reference_fn: Callable[..., Any]
    size: int = 1 << 20
    sim_size: int = 64
    rtol: float = 1e-12

    def __post_init__(self) -> None:
        for field in ("package", "name"):
            value = getattr(self, field)
            if not isinstance(value, str) or not value:
                raise ValueError(f"GpuCheck.{field} must be a non-empty str; got {value!r}.")
        for field in ("make_inputs", "cpu_fn", "cuda_fn", "reference_fn"):
            value = getattr(self, field)
            if not callable(value):
                raise ValueError(
                    f"GpuCheck.{field} of {self.package}.{self.name} must be callable; "
                    f"got {value!r} ({type(value).__name__})."
                )
        for field in ("size", "sim_size"):
            value = getattr(self, field)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(
                    f"GpuCheck.{field} of {self.package}.{self.name} must be a positive int; "
                    f"got {value!r}."
                )
        if not (isinstance(self.rtol, int | float) and self.rtol > 0):
            raise ValueError(
                f"GpuCheck.rtol of {self.package}.{self.name} must be a positive number; "
                f"got {self.rtol!r}."
            )
