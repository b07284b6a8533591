"""Tests for diffsci.devices: the device argument convention and the CUDA probes."""

import sys
import types

import pytest

from diffsci import devices
from diffsci.devices import GpuCheck, check_device, cuda_simulator_active, device_info


def _no_cuda(monkeypatch):
    monkeypatch.setattr(devices, "cuda_available", lambda: False)
    monkeypatch.setattr(devices, "cuda_simulator_active", lambda: False)


# ---------------------------------------------------------------- check_device


@pytest.mark.parametrize("given", ["cpu", "CPU", " cpu ", "Cpu\n"])
def test_check_device_normalises_cpu(given):
    assert check_device(given) == "cpu"


@pytest.mark.parametrize("given", ["cuda", "CUDA", " Cuda "])
def test_check_device_normalises_cuda_on_the_simulator(monkeypatch, given):
    monkeypatch.setattr(devices, "cuda_simulator_active", lambda: True)
    assert check_device(given) == "cuda"


def test_check_device_accepts_cuda_on_a_real_gpu(monkeypatch):
    monkeypatch.setattr(devices, "cuda_simulator_active", lambda: False)
    monkeypatch.setattr(devices, "cuda_available", lambda: True)
    assert check_device("cuda") == "cuda"


@pytest.mark.parametrize("given", ["tpu", "", "cuda:1", 0, None, ("cpu",)])
def test_check_device_rejects_unknown_values(given):
    with pytest.raises(ValueError) as info:
        check_device(given)
    message = str(info.value)
    assert message.startswith("device must be one of 'cpu', 'cuda'; got ")
    assert repr(given) in message
    assert type(given).__name__ in message


@pytest.mark.parametrize(("given", "meant"), [("gpu", "cuda"), ("GPU", "cuda"), ("host", "cpu")])
def test_check_device_suggests_the_right_name(given, meant):
    with pytest.raises(ValueError, match=f"Did you mean '{meant}'"):
        check_device(given)


def test_check_device_cuda_without_gpu_or_simulator_says_how_to_fix(monkeypatch):
    _no_cuda(monkeypatch)
    with pytest.raises(RuntimeError) as info:
        check_device("cuda")
    message = str(info.value)
    assert "device='cuda'" in message
    assert "diffsci[cuda]" in message
    assert "NUMBA_ENABLE_CUDASIM=1" in message
    assert check_device("cpu") == "cpu"  # cpu never needs a GPU


# ---------------------------------------------------------------- cuda_simulator_active


@pytest.mark.parametrize(
    ("value", "expected"),
    [("1", True), (" 1 ", True), ("2", True), ("0", False), ("", False), ("yes", False)],
)
def test_simulator_flag_from_environment_before_numba_is_imported(monkeypatch, value, expected):
    monkeypatch.delitem(sys.modules, "numba.core.config", raising=False)
    monkeypatch.setenv("NUMBA_ENABLE_CUDASIM", value)
    assert cuda_simulator_active() is expected


def test_simulator_flag_unset(monkeypatch):
    monkeypatch.delitem(sys.modules, "numba.core.config", raising=False)
    monkeypatch.delenv("NUMBA_ENABLE_CUDASIM", raising=False)
    assert cuda_simulator_active() is False


@pytest.mark.parametrize(("flag", "expected"), [(1, True), (0, False)])
def test_simulator_flag_from_numba_config_once_numba_is_imported(monkeypatch, flag, expected):
    # numba reads the variable when it is imported; from then on its config decides.
    fake_config = types.SimpleNamespace(ENABLE_CUDASIM=flag)
    monkeypatch.setitem(sys.modules, "numba.core.config", fake_config)
    monkeypatch.setenv("NUMBA_ENABLE_CUDASIM", "0" if flag else "1")
    assert cuda_simulator_active() is expected


def test_simulator_flag_matches_numba_config():
    from numba.core import config

    assert cuda_simulator_active() is bool(config.ENABLE_CUDASIM)


# ---------------------------------------------------------------- cuda_available, device_info


def test_cuda_available_is_false_on_the_simulator(monkeypatch):
    monkeypatch.setattr(devices, "cuda_simulator_active", lambda: True)
    assert devices.cuda_available() is False


def _fake_numba_cuda(monkeypatch, *, available=True, error=None, name=b"Fake GPU"):
    def is_available():
        if error is not None:
            raise error
        return available

    device = types.SimpleNamespace(name=name)
    fake = types.SimpleNamespace(is_available=is_available, get_current_device=lambda: device)
    monkeypatch.setitem(sys.modules, "numba.cuda", fake)
    monkeypatch.setattr(devices, "cuda_simulator_active", lambda: False)


def test_cuda_available_swallows_errors_from_numba_cuda(monkeypatch):
    _fake_numba_cuda(monkeypatch, error=OSError("CUDA driver library cannot be found"))
    assert devices.cuda_available() is False
    info = device_info()
    assert info["cuda_available"] is False
    assert info["cuda_error"] == "OSError: CUDA driver library cannot be found"


def test_cuda_available_and_gpu_name_from_a_real_looking_gpu(monkeypatch):
    _fake_numba_cuda(monkeypatch, available=True, name=b"NVIDIA H200")
    assert devices.cuda_available() is True
    info = device_info()
    assert info["cuda_available"] is True
    assert info["gpu_name"] == "NVIDIA H200"
    assert info["cuda_error"] is None


def test_cuda_available_without_a_gpu(monkeypatch):
    _fake_numba_cuda(monkeypatch, available=False)
    assert devices.cuda_available() is False
    assert device_info()["gpu_name"] is None


def test_device_info_keys_and_types():
    info = device_info()
    assert set(info) == {
        "numba_version",
        "cuda_available",
        "cuda_simulator_active",
        "gpu_name",
        "cuda_error",
    }
    import numba

    assert info["numba_version"] == numba.__version__
    assert isinstance(info["cuda_available"], bool)
    assert info["cuda_simulator_active"] is cuda_simulator_active()


def test_simulator_runs_a_kernel_when_switched_on():
    """With the simulator on (conftest sets it where there is no GPU), device='cuda' works."""
    if not cuda_simulator_active():
        pytest.skip("CUDA simulator is off (a real GPU is present)")
    assert devices.cuda_available() is False
    assert check_device("cuda") == "cuda"


# ---------------------------------------------------------------- GpuCheck


def _ok_fields(**overrides):
    fields = dict(
        package="diffsci",
        name="axpy",
        make_inputs=lambda rng, size: (),
        cpu_fn=abs,
        cuda_fn=abs,
        reference_fn=abs,
    )
    fields.update(overrides)
    return fields


def test_gpu_check_defaults_and_frozen():
    check = GpuCheck(**_ok_fields())
    assert (check.size, check.sim_size, check.rtol) == (1 << 20, 64, 1e-12)
    with pytest.raises(AttributeError):
        check.size = 3


@pytest.mark.parametrize(
    ("overrides", "match"),
    [
        ({"package": ""}, r"GpuCheck.package must be a non-empty str; got ''"),
        ({"name": 3}, r"GpuCheck.name must be a non-empty str; got 3"),
        ({"cuda_fn": None}, r"GpuCheck.cuda_fn of diffsci.axpy must be callable; got None"),
        ({"size": 0}, r"GpuCheck.size of diffsci.axpy must be a positive int; got 0"),
        ({"sim_size": 2.0}, r"GpuCheck.sim_size of diffsci.axpy must be a positive int; got 2.0"),
        ({"rtol": -1.0}, r"GpuCheck.rtol of diffsci.axpy must be a positive number; got -1.0"),
    ],
)
def test_gpu_check_validates_its_fields(overrides, match):
    with pytest.raises(ValueError, match=match):
        GpuCheck(**_ok_fields(**overrides))
