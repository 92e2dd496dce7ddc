"""Fixtures of the gridcast Python package's tests: real gridcastd daemons on netgrids (network
namespaces with real shaping, made by `gridcast netgrid up --daemons`), removed after the tests
even when one fails.

ctest (tests/python/CMakeLists.txt) sets GRIDCAST_CLI to the gridcast program it built and puts
the package it built first on PYTHONPATH. Needs root (namespaces); skipped otherwise.
"""
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

GRIDCAST = os.environ.get("GRIDCAST_CLI", "gridcast")
REPO = Path(__file__).resolve().parents[2]


def gridcast_cli(*args, check=True, timeout=600):
    """Runs the gridcast command; its CompletedProcess (stdout and stderr as text)."""
    done = subprocess.run([GRIDCAST, *map(str, args)], capture_output=True, text=True, timeout=timeout)
    if check and done.returncode != 0:
        raise AssertionError(f"gridcast {' '.join(map(str, args))} exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
    return done


class Netgrid:
    """A netgrid with a daemon per node: its state directory, cluster file and nodes."""

    def __init__(self, topology, state):
        self.state = Path(state)
        self.topology = Path(topology)
        self.down()  # and what an earlier run left: every test starts from empty data directories
        gridcast_cli("netgrid", "up", self.topology, "--daemons", "--state", self.state)
        self.cluster_file = self.state / "cluster.yaml"
        self.payloads = self.state / "payloads"
        listed = json.loads(gridcast_cli("netgrid", "list", "--state", self.state, "--json").stdout)
        self.nodes = {n["node"]: n for n in listed["nodes"]}

    def daemon_pids(self, node):
        """The gridcastd processes in `node`'s namespace."""
        out = subprocess.run(["ip", "netns", "pids", self.nodes[node]["netns"]], capture_output=True, text=True)
        pids = []
        for pid in out.stdout.split():
            try:
                if Path(f"/proc/{pid}/comm").read_text().strip() == "gridcastd":
                    pids.append(int(pid))
            except OSError:
                pass
        return pids

    def kill_daemon(self, node):
        pids = self.daemon_pids(node)
        assert pids, f"no gridcastd on {node}"
        for pid in pids:
            os.kill(pid, signal.SIGKILL)

    def down(self):
        gridcast_cli("netgrid", "down", "--state", self.state, check=False)
        shutil.rmtree(self.state, ignore_errors=True)


def require_root():
    if os.geteuid() != 0:
        pytest.skip("netgrids need root (network namespaces)")


@pytest.fixture(scope="session")
def workdir():
    with tempfile.TemporaryDirectory(prefix="gridcast-python-") as d:
        yield Path(d)


def _netgrid(topology, state):
    require_root()
    grid = Netgrid(topology, state)
    try:
        yield grid
    finally:
        grid.down()


@pytest.fixture(scope="session")
def grid():
    """two-sites-2x2: four members (lyon-0 the source), NICs of 100mbit, nancy's uplink 50mbit."""
    yield from _netgrid(REPO / "deploy/topologies/two-sites-2x2.yaml", "/tmp/gridcast-python-test/grid")


@pytest.fixture()
def doomed_grid():
    """two-sites-2x2 again, for a test that kills one of its daemons."""
    yield from _netgrid(REPO / "deploy/topologies/two-sites-2x2.yaml", "/tmp/gridcast-python-test/doomed")


@pytest.fixture(scope="session")
def fast_pair(workdir):
    """Two members on 10gbit NICs: a payload over 2 GiB in seconds, not minutes."""
    topology = workdir / "pair-10g.yaml"
    topology.write_text("name: pair-10g\nswitches:\n  - name: core\nnodes:\n  - switch: core\n    count: 2\n"
                        "    up: 10gbit\n    down: 10gbit\n")
    yield from _netgrid(topology, "/tmp/gridcast-python-test/pair")


@pytest.fixture()
def cluster(grid):
    import gridcast
    return gridcast.Cluster(grid.cluster_file)


def wait_until(condition, timeout_s, what):
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout_s} s: {what}")
        time.sleep(0.05)
