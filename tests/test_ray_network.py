"""``--engine ray`` starts a local cluster that makes no network lookup beyond loopback.

Every Python process of the cluster (driver, dashboard, raylet's workers and agents) loads a
``sitecustomize`` that records, and refuses, any name lookup or connection that is not loopback.
Ray's dashboard process used to probe the cloud metadata services (``169.254.169.254``,
``metadata.google.internal``) at every start, usage statistics off or not.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

# find_spec, not importorskip: importing ray here would fix its auth mode for the whole test session
# before tests/test_scale_ray.py sets the token mode its cluster needs.
if importlib.util.find_spec("ray") is None:
    pytest.skip("ray is not installed (the 'ray' extra)", allow_module_level=True)
ROOT = Path(__file__).resolve().parents[1]

GUARD = '''
import os, socket, sys

_LOG = os.environ["EF_NET_GUARD_LOG"]


def _outside(host):
    host = host.decode() if isinstance(host, bytes) else str(host)
    return not (host in ("localhost", "::1", "0.0.0.0", "", "None") or host.startswith(("127.", "/")))


def _note(kind, host):
    with open(_LOG, "a") as log:
        log.write(f"{kind} {host} in {' '.join(sys.argv)[:100]}\\n")


_getaddrinfo = socket.getaddrinfo


def getaddrinfo(host, *args, **kwargs):
    if _outside(host):
        _note("lookup", host)
        raise socket.gaierror(socket.EAI_NONAME, "refused by the test's network guard")
    return _getaddrinfo(host, *args, **kwargs)


_connect = socket.socket.connect


def connect(self, address):
    if isinstance(address, tuple) and _outside(address[0]):
        _note("connect", address[0])
        raise OSError(101, "refused by the test's network guard")
    return _connect(self, address)


socket.getaddrinfo = getaddrinfo
socket.socket.connect = connect
'''

SCRIPT = '''
import socket, time
try:
    socket.getaddrinfo("guard-check.invalid", 80)  # the guard is on in this process
except socket.gaierror:
    pass
from ef.source_manager._ray import ray_session
with ray_session(None, num_cpus=1) as ray:
    print("task", ray.get(ray.remote(lambda: 41).remote()) + 1)
    print("dashboard process", "dashboard" in ray._private.worker.global_worker.node.all_processes)
    time.sleep(3)  # the dashboard's probes came within a second or two of its start
'''


def test_a_local_ray_cluster_looks_up_nothing_but_loopback(tmp_path: Path) -> None:
    (tmp_path / "sitecustomize.py").write_text(textwrap.dedent(GUARD))
    log = tmp_path / "lookups.log"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT / "src")]),
        "EF_NET_GUARD_LOG": str(log),
    }
    env.pop("RAY_ADDRESS", None)
    done = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=150)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines() == ["task 42", "dashboard process False"]
    lines = log.read_text().splitlines()
    assert lines[0] == "lookup guard-check.invalid in -c"  # the guard worked
    assert lines[1:] == []  # and nothing else looked beyond loopback
