"""Run autograd's own test suite against diffsci through an API-mapping shim.

    python -m benchmarks.autograd_suite.run [--version 1.9.1] [--json] [-k EXPR] [--show N]

The runner downloads autograd's source distribution from PyPI with pip (``pip download
autograd==<version> --no-deps --no-binary :all:``; nothing of it is kept in this repository),
unpacks its ``tests/`` into a cache folder and runs pytest on the suite files with
``benchmarks/autograd_suite/shim`` first on ``sys.path``: there a package named ``autograd``
maps autograd's API names onto diffsci (``autograd.numpy`` -> ``diffsci.numpy``,
``autograd.scipy`` -> ``diffsci.scipy``, ``grad``/``elementwise_grad``/``jacobian``/
``hessian``/``make_vjp``/... -> diffsci's operators, ``autograd.test_util.check_grads`` ->
``diffsci.testing.check_grads``).  The real autograd is never imported.

Which files: every test file that checks derivatives through autograd's public API.  Left out
are the files that test autograd's own machinery (``ALL_FILES - SUITE`` below, each with its
reason): they import internals with no diffsci counterpart (``vspace``, ``primitive_vjps``,
``const_graph``, ``Box`` dispatch) or time autograd itself.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SHIM = os.path.join(HERE, "shim")
DEFAULT_VERSION = "1.9.1"

SUITE = [
    "test_numpy.py", "test_linalg.py", "test_fft.py", "test_scipy.py", "test_systematic.py",
    "test_binary_ops.py", "test_scalar_ops.py", "test_complex.py", "test_truediv.py",
    "test_list.py", "test_tuple.py", "test_dict.py", "test_jacobian.py", "test_wrappers.py",
    "test_direct.py", "test_builtins.py",
]
LEFT_OUT = {
    "test_core.py": "autograd's own VJP/JVP nodes (imports autograd.core internals)",
    "test_vspaces.py": "autograd's VSpace classes",
    "test_graphs.py": "autograd's tape (imports autograd.core.primitive_vjps, const_graph)",
    "test_tests.py": "autograd's test_util itself",
    "test_logic.py": "autograd's rule table (imports autograd.core.primitive_vjps)",
    "test_misc.py": "autograd.misc (const_graph, flatten) internals",
    "test_ufunc_dispatch.py": "autograd's ArrayBox dispatch of np.* ufunc objects",
    "test_performance.py": "timings of autograd",
    "_test_complexity.py": "timings of autograd (not collected by pytest)",
}


def fetch(version, cache):
    """The unpacked ``tests/`` folder of autograd ``version`` (downloaded once into cache)."""
    root = os.path.join(cache, f"autograd-{version}")
    tests = os.path.join(root, "tests")
    if os.path.isdir(tests):
        return tests
    os.makedirs(cache, exist_ok=True)
    subprocess.run([sys.executable, "-m", "pip", "download", f"autograd=={version}",
                    "--no-deps", "--no-binary", ":all:", "-d", cache, "-q"], check=True)
    sdist = os.path.join(cache, f"autograd-{version}.tar.gz")
    if not os.path.exists(sdist):
        raise FileNotFoundError(f"pip download left no {sdist}")
    with tarfile.open(sdist) as t:
        members = [m for m in t.getmembers()
                   if m.name.startswith(f"autograd-{version}/tests/") and m.isfile()]
        if not members:
            raise RuntimeError(f"the sdist of autograd {version} has no tests/ folder")
        t.extractall(cache, members=members, filter="data")
    with open(os.path.join(tests, "pytest.ini"), "w") as f:  # isolate from this repo's config
        f.write("[pytest]\n")
    return tests


def run(tests, files, extra=()):
    xml = os.path.join(tests, "results.xml")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([SHIM, REPO, tests]))
    cmd = [sys.executable, "-m", "pytest", *files, "-q", "-p", "no:cacheprovider",
           "-W", "ignore", "--continue-on-collection-errors", f"--junitxml={xml}",
           "--tb=line", "-o", "junit_family=xunit1", *extra]
    proc = subprocess.run(cmd, cwd=tests, env=env, capture_output=True, text=True)
    if not os.path.exists(xml):
        raise RuntimeError(proc.stdout[-3000:] + proc.stderr[-3000:])
    return parse(xml)


def parse(xml):
    out = []
    for case in ET.parse(xml).getroot().iter("testcase"):
        status, message = "passed", ""
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                status = {"failure": "failed", "error": "error", "skipped": "skipped"}[child.tag]
                message = (child.get("message") or child.text or "").strip().splitlines()
                message = message[0][:200] if message else ""
        out.append({"file": case.get("file") or case.get("classname", "").split(".")[0] + ".py",
                    "test": case.get("name"), "status": status, "message": message})
    return out


def summary(results):
    files = {}
    for r in results:
        f = files.setdefault(r["file"], {"passed": 0, "failed": 0, "error": 0, "skipped": 0})
        f[r["status"]] += 1
    total = {k: sum(f[k] for f in files.values()) for k in ("passed", "failed", "error",
                                                            "skipped")}
    ran = total["passed"] + total["failed"] + total["error"]
    total["pass %"] = round(100 * total["passed"] / max(ran, 1), 1)
    return files, total


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--version", default=DEFAULT_VERSION, help="autograd release to test with")
    p.add_argument("--cache", default=os.path.join(os.path.expanduser("~"), ".cache",
                                                   "diffsci-autograd-suite"))
    p.add_argument("--json", action="store_true")
    p.add_argument("--show", type=int, default=200, help="list at most N failures")
    p.add_argument("-k", default=None, help="pytest -k expression")
    p.add_argument("files", nargs="*", help="suite files (default: SUITE)")
    a = p.parse_args(argv)
    tests = fetch(a.version, a.cache)
    results = run(tests, a.files or SUITE, ("-k", a.k) if a.k else ())
    files, total = summary(results)
    if a.json:
        print(json.dumps({"autograd": a.version, "files": files, "total": total,
                          "failures": [r for r in results if r["status"] in ("failed", "error")]},
                         indent=1))
        return 0
    for r in [r for r in results if r["status"] in ("failed", "error")][:a.show]:
        print(f"{r['status']:<7} {r['file']}::{r['test']}  {r['message']}"[:220])
    print()
    for f, c in sorted(files.items()):
        print(f"{f:<22} " + "  ".join(f"{k} {v:>3}" for k, v in c.items()))
    print(f"\nautograd {a.version}'s suite against diffsci: {total['passed']} of "
          f"{total['passed'] + total['failed'] + total['error']} pass ({total['pass %']} %), "
          f"{total['failed']} fail, {total['error']} errors, {total['skipped']} skipped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
