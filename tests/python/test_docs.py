"""docs/python.md's scripts, run as written against real daemons on a netgrid."""
import os
import re
import shutil
import subprocess
import sys

import pytest

from conftest import REPO

BLOCKS = dict(re.findall(r"<!-- test: (\w+) -->\n```python\n(.*?)```", (REPO / "docs/python.md").read_text(), re.S))


def run_script(name, workdir, grid, *args, command=None):
    script = workdir / f"{name}.py"
    script.write_text(BLOCKS[name])
    env = dict(os.environ, GRIDCAST_CLUSTER=str(grid.cluster_file))
    done = subprocess.run((command or [sys.executable]) + [str(script), *map(str, args)], capture_output=True,
                          text=True, env=env, timeout=300)
    assert done.returncode == 0, f"{name}.py exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def test_the_docs_hold_three_scripts():
    assert set(BLOCKS) == {"stage", "array", "mpi"}


def test_the_staging_script_prints_a_table_of_members(grid, workdir):
    dataset = grid.payloads / "dataset"
    dataset.mkdir(exist_ok=True)
    for i in range(3):
        (dataset / f"part-{i}.bin").write_bytes(os.urandom(300_000 + i))
    out = run_script("stage", workdir, grid, dataset).splitlines()
    assert out[0].split() == ["MEMBER", "STATE", "DIGESTS", "FINISHED", "ERROR"]
    rows = [line.split() for line in out[1:4]]
    assert sorted(r[0] for r in rows) == ["lyon-1", "nancy-0", "nancy-1"]
    assert all(r[1] == "done" and r[2] == "ok" for r in rows)
    assert "of the physical bound" in out[4]


def test_the_array_script_checks_every_members_copy(grid, workdir):
    assert "4000000 bytes at 3 members" in run_script("array", workdir, grid)


@pytest.mark.skipif(shutil.which("mpirun") is None, reason="Open MPI is not installed")
def test_the_mpi4py_program_broadcasts_through_gridcast(grid, workdir):
    pytest.importorskip("mpi4py")
    members = " ".join(grid.nodes)  # rank r is the r-th member (the source first)
    rank_member = f'GRIDCAST_MEMBER=$(echo {members} | cut -d" " -f$((OMPI_COMM_WORLD_RANK+1))) exec "$0" "$@"'
    command = ["mpirun", "--allow-run-as-root", "--oversubscribe", "-np", str(len(grid.nodes)), "sh", "-c",
               rank_member, sys.executable]
    out = run_script("mpi", workdir, grid, command=command)
    # (mpirun passes the ranks' output on in pieces: lines may come interleaved.)
    assert sorted(re.findall(r"rank \d+: ok", out)) == [f"rank {r}: ok" for r in range(len(grid.nodes))], out
