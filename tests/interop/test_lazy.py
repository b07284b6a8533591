"""``import diffsci`` (and ``diffsci.interop``) never imports torch or jax."""

import subprocess
import sys


def test_import_diffsci_loads_neither_torch_nor_jax():
    code = ("import sys, diffsci, diffsci.interop as i; "
            "assert callable(i.__getattr__); "
            "print('torch' in sys.modules, 'jax' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300, check=True)
    assert out.stdout.split() == ["False", "False"]
