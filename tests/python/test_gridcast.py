"""The gridcast Python package against real daemons on netgrids (see conftest.py).

Every entry point: send (path, bytes, NumPy arrays), send_async (poll, wait, cancel, the context
manager), receive (bytes, into a buffer, the default member), status, list, plan, simulate, and
the errors; a cancel from another thread, Ctrl-C during a send, a member killed mid-send, an
array over 2 GiB.
"""
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

import gridcast
from conftest import REPO, gridcast_cli, wait_until

MEMBERS = ["lyon-0", "lyon-1", "nancy-0", "nancy-1"]
RECEIVERS = MEMBERS[1:]


def random_bytes(size, seed):
    return np.random.default_rng(seed).integers(0, 256, size=size, dtype=np.uint8).tobytes()


def running_plans(cluster):
    """Plans any member still runs (or has prepared)."""
    return [(m["name"], p) for m in cluster.status()["members"] for p in m.get("plans", [])
            if p["state"] in ("prepared", "running", "resuming")]


# --- sending and receiving -------------------------------------------------------------------

def test_a_file_sent_from_python_gives_the_document_of_send_json(grid, cluster):
    payload = grid.payloads / "file.bin"
    payload.write_bytes(random_bytes(3 * 1024 * 1024 + 17, 1))

    result = cluster.send(payload, name="from-python.bin")
    assert result.verified
    assert sorted(m.name for m in result.members) == RECEIVERS
    assert all(m.state == "done" and m.error is None and m.digest_ok for m in result.members)
    assert result.size_bytes == payload.stat().st_size
    assert result.digest == "sha256" and len(result.sha256) == 64
    assert result.plan.algorithm and result.plan.rationale and result.plan.mode == "push"
    assert result.bound_s > 0 and result.completion_s > 0
    assert result.efficiency == pytest.approx(result.bound_s / result.completion_s)
    assert result.control.rpcs > 0 and result.control.bytes > 0

    cli = json.loads(gridcast_cli("send", payload, "--cluster", grid.cluster_file, "--name", "from-cli.bin",
                                  "--mode", "push", "--json").stdout)
    document = result.to_dict()
    assert document.keys() == cli.keys()
    for key in ("size_bytes", "sha256", "digest", "algorithm", "mode", "source", "verified", "bound_s"):
        assert document[key] == cli[key], key
    assert [m["name"] for m in document["members"]] == [m["name"] for m in cli["members"]]
    for m in RECEIVERS:
        assert cluster.receive("from-python.bin", member=m) == payload.read_bytes()


def test_bytes_of_an_awkward_size_reach_every_member(cluster):
    data = random_bytes(1_000_003, 2)
    result = cluster.send(data, name="awkward.bin", chunk="64KiB", digest="xxh3")
    assert result.verified and result.digest == "xxh3" and result.plan.chunk_bytes == 64 * 1024
    for m in RECEIVERS:
        assert cluster.receive("awkward.bin", member=m) == data
    # bytearray and memoryview are buffers too.
    assert cluster.send(bytearray(data[:4097]), name="ba.bin").verified
    assert cluster.send(memoryview(data)[10:5000], name="mv.bin").verified
    assert cluster.receive("mv.bin", member="nancy-1") == data[10:5000]


def test_an_array_of_a_non_native_dtype_arrives_equal_in_memory(cluster):
    array = np.random.default_rng(3).standard_normal((333, 777)).astype(">f8")  # big-endian: not this host's
    assert not array.dtype.isnative
    result = cluster.send(array, name="weights", in_memory=True)
    assert result.verified
    for m in RECEIVERS:
        out = np.empty_like(array)
        assert cluster.receive("weights", into=out, member=m) is out
        assert out.dtype == array.dtype and np.array_equal(out, array)
    # Read once, removed from the member's memory (the default): nothing left to list.
    held = cluster.list(member="nancy-0")["members"][0]["payloads"]
    assert not [p for p in held if p["name"] == "weights" and p["in_memory"]]


def test_arrays_of_any_dtype_are_their_bytes(cluster):
    records = np.array([(1, 2.5, b"ab"), (3, -1.0, b"cd")] * 1001, dtype=[("i", "<i4"), ("x", ">f4"), ("s", "S2")])
    assert cluster.send(records, name="records").verified
    out = np.zeros_like(records)
    cluster.receive("records", into=out, member="lyon-1")
    assert np.array_equal(out, records)
    assert cluster.send(np.array(7.25), name="scalar").verified  # zero-dimensional
    assert np.frombuffer(cluster.receive("scalar", member="nancy-1"), dtype=np.float64)[0] == 7.25
    # No buffer-protocol format exists for these: their bytes are sent all the same.
    times = np.arange("2026-01-01", "2026-12-31", dtype="datetime64[h]")
    assert cluster.send(times, name="times").verified
    out = np.empty_like(times)
    cluster.receive("times", into=out, member="lyon-1")
    assert np.array_equal(out, times)


def test_what_cannot_be_sent_or_received_into_is_refused_clearly(cluster):
    array = np.arange(1000, dtype=np.int64).reshape(10, 100)
    with pytest.raises(gridcast.ArgumentError, match="not C-contiguous"):
        cluster.send(array[:, ::2], name="strided")
    with pytest.raises(gridcast.ArgumentError, match="C-contiguous"):
        cluster.send(np.asfortranarray(array), name="fortran")
    with pytest.raises(gridcast.ArgumentError, match="Python objects"):
        cluster.send(np.array([object(), 1], dtype=object), name="objects")
    with pytest.raises(gridcast.ArgumentError, match="expected a path, bytes"):
        cluster.send(12345, name="number")
    with pytest.raises(gridcast.ArgumentError, match="needs the name"):
        cluster.send(b"abc")
    with pytest.raises(gridcast.ArgumentError, match="not a readable file or directory"):
        cluster.send("/nonexistent/payload.bin")
    with pytest.raises(gridcast.ArgumentError, match="push, pull, hybrid"):
        cluster.send(b"abc", name="x", mode="broadcast")
    with pytest.raises(gridcast.ArgumentError, match="chunk"):
        cluster.send(b"abc", name="x", chunk=0)

    assert cluster.send(array, name="ints").verified
    with pytest.raises(gridcast.ArgumentError, match="has 8000 bytes; the buffer has 7992"):
        cluster.receive("ints", into=np.empty(999, dtype=np.int64), member="lyon-1")
    with pytest.raises(gridcast.ArgumentError, match="read-only"):
        cluster.receive("ints", into=b"\0" * 8000, member="lyon-1")
    with pytest.raises(gridcast.ArgumentError, match="not C-contiguous"):
        cluster.receive("ints", into=np.empty((10, 200), dtype=np.int64)[:, ::2], member="lyon-1")
    with pytest.raises(gridcast.ArgumentError, match="'nobody' is not in the cluster"):
        cluster.receive("ints", member="nobody")
    with pytest.raises(TimeoutError):
        cluster.receive("never-sent", member="lyon-1", timeout=0.3)


def test_a_directory_is_sent_whole(grid, cluster):
    tree = grid.payloads / "tree"
    (tree / "sub").mkdir(parents=True, exist_ok=True)
    (tree / "a.txt").write_text("alpha\n")
    (tree / "sub" / "b.bin").write_bytes(random_bytes(70_000, 4))
    assert cluster.send(tree, name="tree").verified
    copy = grid.state / "data" / "nancy-1" / "tree"
    assert (copy / "a.txt").read_text() == "alpha\n"
    assert (copy / "sub" / "b.bin").read_bytes() == (tree / "sub" / "b.bin").read_bytes()


# --- progress, send_async, cancel, Ctrl-C ----------------------------------------------------

def test_progress_is_reported_about_once_a_second(cluster):
    seen = []
    data = random_bytes(24 * 1024 * 1024, 5)  # ~4 s past nancy's 50mbit uplink
    result = cluster.send(data, name="progress.bin", progress=seen.append)
    assert result.verified
    assert len(seen) >= 2, (seen, result)
    assert all(isinstance(p, gridcast.Progress) and 0 <= p.fraction <= 1 and p.members == 3 for p in seen)
    assert [p.fraction for p in seen] == sorted(p.fraction for p in seen)
    assert any(p.slowest_member in RECEIVERS for p in seen)


def test_send_async_polls_and_waits(cluster):
    data = random_bytes(8 * 1024 * 1024, 6)
    with cluster.send_async(data, name="async.bin", mode="hybrid") as broadcast:
        first = broadcast.poll()
        assert isinstance(first, gridcast.Progress)
        with pytest.raises(TimeoutError):
            broadcast.wait(timeout=0.05)
        result = broadcast.wait()
    assert broadcast.done and result.verified and result.plan.mode == "hybrid"
    assert broadcast.poll().fraction == 1.0
    assert broadcast.wait() is result  # the same result again


def test_leaving_the_with_block_or_dropping_the_handle_cancels_an_unfinished_broadcast(cluster):
    data = random_bytes(96 * 1024 * 1024, 7)  # ~16 s past nancy's uplink
    started = time.monotonic()
    with cluster.send_async(data, name="left.bin") as broadcast:
        wait_until(lambda: broadcast.poll().chunks_done > 0, 30, "the broadcast under way")
    assert broadcast.done and time.monotonic() - started < 12
    with pytest.raises(gridcast.BroadcastError) as failed:
        broadcast.wait()
    assert failed.value.result is not None and not failed.value.result.verified
    assert {m.state for m in failed.value.result.members} == {"stopped"}
    wait_until(lambda: not running_plans(cluster), 15, "no member still running it")

    dropped = cluster.send_async(data, name="dropped.bin")
    wait_until(lambda: dropped.poll().chunks_done > 0, 30, "the broadcast under way")
    started = time.monotonic()
    del dropped
    assert time.monotonic() - started < 10
    wait_until(lambda: not running_plans(cluster), 15, "no member still running it")
    for entry in cluster.list()["members"][1:]:
        assert not [p for p in entry["payloads"] if p["name"] == "dropped.bin" and p["complete"]], entry


def test_a_cancel_from_another_thread_stops_the_send(cluster):
    data = random_bytes(96 * 1024 * 1024, 8)  # ~16 s
    broadcast = cluster.send_async(data, name="cancelled.bin")
    threading.Timer(1.5, broadcast.cancel).start()
    started = time.monotonic()
    with pytest.raises(gridcast.BroadcastError) as failed:
        broadcast.wait()
    assert time.monotonic() - started < 10
    result = failed.value.result
    assert result is not None and not result.verified
    assert {m.state for m in result.members} == {"stopped"}, result.members
    assert all(m.error == "cancelled by the caller" for m in result.members), result.members
    wait_until(lambda: not running_plans(cluster), 15, "no member still running it")
    for entry in cluster.list()["members"][1:]:
        assert not [p for p in entry["payloads"] if p["name"] == "cancelled.bin" and p["complete"]], entry


def test_ctrl_c_cancels_the_send_and_raises_keyboard_interrupt(grid, cluster, workdir):
    script = workdir / "interrupted.py"
    script.write_text(textwrap.dedent(f"""
        import sys, gridcast
        cluster = gridcast.Cluster({str(grid.cluster_file)!r})
        try:
            cluster.send(bytes(64 * 1024 * 1024), name="interrupted.bin",
                         progress=lambda p: print("progress", p.fraction, flush=True))
        except KeyboardInterrupt:
            print("KeyboardInterrupt", flush=True)
            sys.exit(42)
        print("finished", flush=True)
    """))
    child = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True, env=os.environ)
    try:
        assert child.stdout.readline().startswith("progress")  # under way (or the child died: "")
        child.send_signal(signal.SIGINT)
        out, _ = child.communicate(timeout=60)
    finally:
        child.kill()
        child.wait()
    assert child.returncode == 42, out
    assert "KeyboardInterrupt" in out
    wait_until(lambda: not running_plans(cluster), 15, "no member still running it")
    for entry in cluster.list()["members"][1:]:
        assert not [p for p in entry["payloads"] if p["name"] == "interrupted.bin" and p["complete"]], entry


def test_a_member_killed_mid_send_is_reported_in_the_result(doomed_grid):
    cluster = gridcast.Cluster(doomed_grid.cluster_file)
    data = random_bytes(32 * 1024 * 1024, 9)  # ~5.5 s
    broadcast = cluster.send_async(data, name="killed.bin")
    wait_until(lambda: broadcast.poll().fraction > 0.2, 30, "a fifth delivered")
    doomed_grid.kill_daemon("nancy-1")
    with pytest.raises(gridcast.BroadcastError) as failed:
        broadcast.wait(timeout=120)
    result = failed.value.result
    assert result is not None and not result.verified
    states = {m.name: m.state for m in result.members}
    assert states["nancy-1"] in ("lost", "failed", "unreachable"), states
    assert all(states[m] == "done" for m in ("lyon-1", "nancy-0")), states
    for m in ("lyon-1", "nancy-0"):
        assert cluster.receive("killed.bin", member=m) == data
    # The dead member's daemon: named unreachable by status.
    entry = cluster.status(member="nancy-1")["members"][0]
    assert "unreachable" in entry["error"]


def test_an_array_over_2_gib_arrives_whole(fast_pair):
    cluster = gridcast.Cluster(fast_pair.cluster_file)
    count = (2 * 1024 ** 3 + 4096 + 8) // 8  # over 2 GiB: more than an MPI count of bytes (int) holds
    array = np.arange(count, dtype=np.uint64)
    array[::4097] ^= 0x5A5A5A5A5A5A5A5A
    out = np.empty_like(array)  # (allocating it holds the GIL: NumPy's, not ours)
    # Another thread runs all along: the calls that copy gigabytes and wait do not hold the GIL.
    ticks, stop = [], threading.Event()

    def tick():
        while not stop.is_set():
            ticks.append(time.monotonic())
            time.sleep(0.01)

    ticker = threading.Thread(target=tick)
    ticker.start()
    try:
        result = cluster.send(array, name="big", digest="xxh3", in_memory=True, timeout=900)
        assert result.verified and result.size_bytes == array.nbytes > 2 ** 31
        cluster.receive("big", into=out, member="core-1")
    finally:
        stop.set()
        ticker.join()
    assert np.array_equal(out, array)
    assert max(b - a for a, b in zip(ticks, ticks[1:])) < 1.0, "the GIL was held"


# --- status, list, plan, simulate, members -------------------------------------------------

def test_status_and_list_are_the_documents_of_the_command(grid, cluster):
    assert cluster.send(b"listed" * 1000, name="listed.bin").verified
    status = cluster.status()
    assert [m["name"] for m in status["members"]] == MEMBERS
    assert status == json.loads(gridcast_cli("status", "--cluster", grid.cluster_file, "--json").stdout)

    listed = cluster.list()
    assert [m["name"] for m in listed["members"]] == MEMBERS
    for entry in listed["members"][1:]:
        (held,) = [p for p in entry["payloads"] if p["name"] == "listed.bin"]
        assert held["complete"] and held["size_bytes"] == 6000 and len(held["sha256"]) == 64
    assert listed == json.loads(gridcast_cli("list", "--cluster", grid.cluster_file, "--json").stdout)

    verified = cluster.list(verify=True, member="nancy-0")
    (entry,) = verified["members"]
    checked = {p["name"]: (p["verify"], p["bad_chunks"]) for p in entry["payloads"] if p["complete"]}
    assert checked["listed.bin"] == ("ok", [])
    # Files unpacked from a directory payload have no chunk list of their own: not checkable.
    assert all(v == ("ok", []) or "/" in n for n, v in checked.items()), checked


def test_plan_and_simulate_are_the_documents_of_the_command():
    topology = REPO / "deploy/topologies/two-sites.yaml"
    planned = gridcast.plan(topology, "256MiB", "multilane")
    assert planned == json.loads(gridcast_cli("plan", "--topology", topology, "--size", "256MiB", "--algo",
                                              "multilane", "--json").stdout)
    assert planned["algorithm"].startswith("multilane") and planned["payload_bytes"] == 256 * 1024 ** 2
    assert gridcast.plan(topology, 1 << 20, "chain", chunk=65536, source="nancy-0")["members"][0] == "nancy-0"

    # (Every planner simulated twice: small enough to stay quick under the sanitizers.)
    simulated = gridcast.simulate(topology, 16 * 1024 ** 2)
    assert simulated == json.loads(gridcast_cli("simulate", "--topology", topology, "--size", "16MiB",
                                                "--json").stdout)
    assert simulated["bound_s"] > 0 and len(simulated["results"]) > 5 and simulated["auto"]["efficiency"] <= 1.0

    with pytest.raises(gridcast.ArgumentError, match="unknown node 'nowhere'"):
        gridcast.plan(topology, "1MiB", source="nowhere")
    with pytest.raises(gridcast.ArgumentError):
        gridcast.plan(topology, "1MiB", "no-such-planner")
    with pytest.raises(gridcast.ArgumentError, match="--size|size"):
        gridcast.plan(topology, "lots")
    with pytest.raises(gridcast.ArgumentError, match="missing.yaml"):
        gridcast.simulate(REPO / "missing.yaml", "1MiB")
    assert gridcast.parse_size("1.5KiB") == 1536


def test_receive_finds_this_hosts_member(grid, cluster, monkeypatch):
    assert cluster.send(b"mine" * 100, name="mine.bin").verified
    monkeypatch.delenv("GRIDCAST_MEMBER", raising=False)
    with pytest.raises(gridcast.ArgumentError, match="GRIDCAST_MEMBER"):
        cluster.receive("mine.bin")  # this namespace holds no member's address
    monkeypatch.setenv("GRIDCAST_MEMBER", "nancy-0")
    assert cluster.local_member() == "nancy-0"
    assert cluster.receive("mine.bin") == b"mine" * 100
    # Inside a member's namespace its address names it.
    monkeypatch.delenv("GRIDCAST_MEMBER")
    netns = grid.nodes["lyon-1"]["netns"]
    out = subprocess.run(["ip", "netns", "exec", netns, sys.executable, "-c",
                          "import gridcast, sys; c = gridcast.Cluster(sys.argv[1]); "
                          "print(c.local_member(), c.receive('mine.bin') == b'mine' * 100)", str(grid.cluster_file)],
                         capture_output=True, text=True, env=os.environ, timeout=60)
    assert out.stdout.split() == ["lyon-1", "True"], out.stderr


def test_errors_are_a_small_hierarchy_with_the_commands_messages(grid, workdir):
    with pytest.raises(gridcast.ArgumentError) as missing:
        gridcast.Cluster(workdir / "no-cluster.yaml")
    assert isinstance(missing.value, ValueError) and isinstance(missing.value, gridcast.Error)
    cli = gridcast_cli("status", "--cluster", workdir / "no-cluster.yaml", check=False)
    assert cli.returncode == 2 and missing.value.message in cli.stderr

    # The source's daemon is not there: ConnectionError, as the command's exit 1 says.
    text = grid.cluster_file.read_text()
    broken = workdir / "broken.yaml"
    broken.write_text(text.replace(str(grid.state / "run" / "lyon-0.sock"), str(workdir / "gone.sock")))
    broken.chmod(0o600)
    cluster = gridcast.Cluster(broken)
    with pytest.raises(gridcast.ConnectionError) as unreachable:
        cluster.send(b"abc", name="nowhere.bin")
    assert isinstance(unreachable.value, ConnectionError) and unreachable.value.code == "UNAVAILABLE"
    entry = cluster.status(member="lyon-0")["members"][0]
    assert "unreachable" in entry["error"]

    # A daemon that refuses (the command exits 1): a path outside its data directory and send roots.
    with pytest.raises(gridcast.BroadcastError, match="outside the data directory") as refused:
        gridcast.Cluster(grid.cluster_file).send("/etc/hostname", name="hostname")
    assert refused.value.code == "PERMISSION_DENIED" and refused.value.result is None
