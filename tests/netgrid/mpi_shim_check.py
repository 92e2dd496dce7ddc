"""An ordinary mpi4py program: MPI_Bcast, MPI_Ibcast and MPI_Allgather of numpy arrays, checked on
every rank.

mpi_shim_e2e_test runs it under mpirun on a netgrid twice, without and with libgridcast-mpi.so
preloaded; it must pass both ways. Nothing in it knows about gridcast.

Usage: mpi_shim_check.py checks           the broadcasts and gathers below
       mpi_shim_check.py mismatch         one rank's buffer is shorter (a broadcast, then an
                                          allgather): every rank must see an error
       mpi_shim_check.py kill PID         PID (a daemon) is killed mid-broadcast: every rank must
                                          see an error, none may keep wrong data as good
       mpi_shim_check.py kill-allgather PID   the same mid-allgather

Rank 0 prints one line: RESULT {"ok": ..., "checks": N, "failures": [...]}.
"""
import json
import os
import signal
import sys
import threading

import numpy as np
from mpi4py import MPI

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
failures = []
checks = 0


def check(condition, what):
    global checks
    checks += 1
    if not condition:
        failures.append(f"rank {rank}: {what}")


def pattern(count, seed, dtype):
    values = np.random.default_rng(seed).integers(0, 1 << 30, size=count)
    return values.astype(dtype)


def bcast_case(communicator, count, dtype, root, seed):
    me = communicator.Get_rank()
    data = pattern(count, seed, dtype) if me == root else np.zeros(count, dtype)
    communicator.Bcast(data, root=root)
    check(np.array_equal(data, pattern(count, seed, dtype)),
          f"Bcast of {count} {np.dtype(dtype).name} from root {root} of {communicator.Get_size()}")


def allgather_case(communicator, count, dtype, seed, in_place):
    me, n = communicator.Get_rank(), communicator.Get_size()
    parts = [pattern(count, seed + r, dtype) for r in range(n)]
    gathered = np.zeros(count * n, dtype)
    if in_place:
        gathered[me * count:(me + 1) * count] = parts[me]
        communicator.Allgather(MPI.IN_PLACE, gathered)
    else:
        communicator.Allgather(parts[me], gathered)
    check(np.array_equal(gathered, np.concatenate(parts)),
          f"Allgather{' in place' if in_place else ''} of {count} {np.dtype(dtype).name} x {n}")


def error_class(call):
    try:
        call()
    except MPI.Exception as error:
        return error.Get_error_class()
    return MPI.SUCCESS


def checks_case():
    # Awkward sizes (not multiples of a page or of each other), roots other than 0.
    bcast_case(comm, 1_000_003, np.float64, size - 1, 1)
    bcast_case(comm, 262_147, np.int32, 1 % size, 2)
    bcast_case(comm, 3_000_001, np.uint8, 2 % size, 3)
    bcast_case(comm, 10, np.int64, 0, 4)  # small: MPI's own
    # A sub-communicator: even and odd ranks, in reverse order; its rank 1 is the root.
    sub = comm.Split(color=rank % 2, key=-rank)
    bcast_case(sub, 777_777, np.float32, 1 % sub.Get_size(), 5)
    allgather_case(sub, 100_003, np.int32, 60, in_place=False)
    sub.Free()
    allgather_case(comm, 250_001, np.float64, 10, in_place=False)
    allgather_case(comm, 123_457, np.int16, 20, in_place=True)
    allgather_case(comm, 3, np.uint8, 30, in_place=False)
    ibcast_case()


def ibcast_case():
    # Two broadcasts in flight on one communicator, waited for in the other order; one waited
    # for together with a point-to-point pair; one polled with Test while a barrier runs; one
    # waited for after an allgather.
    first = pattern(600_001, 40, np.int32) if rank == 0 else np.zeros(600_001, np.int32)
    second = pattern(900_007, 41, np.uint8) if rank == size - 1 else np.zeros(900_007, np.uint8)
    r1 = comm.Ibcast(first, root=0)
    r2 = comm.Ibcast(second, root=size - 1)
    r2.Wait()
    r1.Wait()
    check(np.array_equal(first, pattern(600_001, 40, np.int32)), "Ibcast waited for second")
    check(np.array_equal(second, pattern(900_007, 41, np.uint8)), "Ibcast waited for first")
    third = pattern(400_009, 42, np.float64) if rank == 1 % size else np.zeros(400_009, np.float64)
    ring_out = np.full(4, rank, np.int64)
    ring_in = np.zeros(4, np.int64)
    requests = [comm.Ibcast(third, root=1 % size),
                comm.Isend(ring_out, dest=(rank + 1) % size, tag=5),
                comm.Irecv(ring_in, source=(rank - 1) % size, tag=5)]
    MPI.Request.Waitall(requests)
    check(np.array_equal(third, pattern(400_009, 42, np.float64)), "Ibcast in a Waitall")
    check(np.all(ring_in == (rank - 1) % size), "point-to-point beside an Ibcast")
    fourth = pattern(300_007, 43, np.int16) if rank == 0 else np.zeros(300_007, np.int16)
    r4 = comm.Ibcast(fourth, root=0)
    comm.Barrier()
    while not r4.Test():
        pass
    check(np.array_equal(fourth, pattern(300_007, 43, np.int16)), "Ibcast polled with Test")
    # An allgather while a broadcast is still in flight on the same communicator.
    fifth = pattern(500_009, 44, np.uint8) if rank == 0 else np.zeros(500_009, np.uint8)
    r5 = comm.Ibcast(fifth, root=0)
    allgather_case(comm, 70_001, np.int32, 80, in_place=False)
    r5.Wait()
    check(np.array_equal(fifth, pattern(500_009, 44, np.uint8)), "Ibcast in flight across an Allgather")


def mismatch_case():
    count = 500_000 if rank != size - 1 else 499_999
    data = pattern(count, 7, np.uint8) if rank == 0 else np.zeros(count, np.uint8)
    code = error_class(lambda: comm.Bcast(data, root=0))
    check(code != MPI.SUCCESS, "a rank's shorter buffer was not an error")
    # The communicator still works afterwards.
    bcast_case(comm, 400_000, np.uint8, 0, 8)
    # The same for an allgather whose last rank gathers shorter blocks.
    block = 100_000 if rank != size - 1 else 99_999
    gathered = np.zeros(block * size, np.uint8)
    code = error_class(lambda: comm.Allgather(pattern(block, 10 + rank, np.uint8), gathered))
    check(code != MPI.SUCCESS, "a rank's shorter allgather blocks were not an error")
    allgather_case(comm, 100_000, np.uint8, 70, in_place=False)


def kill_in_flight(pid):
    """Kills the daemon `pid` 1.5 s after every rank is ready to call: while the payload moves
    (at 100mbit it takes 3 s and more), never before the call reached the daemons (a daemon
    already gone when a rank calls is no failure: the shim leaves that call to MPI)."""
    comm.Barrier()
    if rank == 0:
        threading.Timer(1.5, os.kill, (pid, signal.SIGKILL)).start()


def kill_case(pid):
    count = 48 << 20
    data = pattern(count, 9, np.uint8) if rank == 0 else np.zeros(count, np.uint8)
    kill_in_flight(pid)
    code = error_class(lambda: comm.Bcast(data, root=0))
    check(code != MPI.SUCCESS, "a broadcast whose member's daemon died did not fail")
    if rank != 0:
        # Ranks copy chunks as their daemon verifies them: a failed broadcast may leave some of
        # the root's bytes, never others.
        sent = pattern(count, 9, np.uint8)
        check(np.all((data == 0) | (data == sent)), "a failed broadcast left bytes not the root's in the buffer")


def kill_allgather_case(pid):
    block = 6 << 20
    gathered = np.zeros(block * size, np.uint8)
    mine = pattern(block, 11 + rank, np.uint8)
    kill_in_flight(pid)
    code = error_class(lambda: comm.Allgather(mine, gathered))
    check(code != MPI.SUCCESS, "an allgather whose member's daemon died did not fail")
    check(not np.any(gathered), "a failed allgather left bytes in the buffer")


mode = sys.argv[1] if len(sys.argv) > 1 else "checks"
if mode == "checks":
    checks_case()
elif mode == "mismatch":
    mismatch_case()
elif mode == "kill":
    kill_case(int(sys.argv[2]))
elif mode == "kill-allgather":
    kill_allgather_case(int(sys.argv[2]))
else:
    sys.exit(f"unknown mode {mode}")

all_failures = comm.gather(failures, root=0)
all_checks = comm.reduce(checks, op=MPI.SUM, root=0)
if rank == 0:
    flat = [f for per_rank in all_failures for f in per_rank]
    print("RESULT " + json.dumps({"ok": not flat, "checks": all_checks, "failures": flat}), flush=True)
