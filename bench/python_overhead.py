"""What the Python binding costs (docs/python.md, docs/performance.md "Python").

On a netgrid of TOPOLOGY (default two-sites) with a daemon per node: SIZE (default 256 MiB) of
random bytes sent RUNS times (default 3) by `gridcast send FILE --json`, by
gridcast.Cluster.send of a NumPy array holding the same bytes, and by gridcast.Cluster.send of
the same FILE (the binding alone, on the command's own work), one after the other in each run,
the page cache dropped before each. Both push, both with the automatic planner, each under a
name of its own (nothing reused). Times are wall clock around each whole call: the command
(process start to exit) and `cluster.send` (the copy of the array to the source daemon
included). The array is read from the file once, before the first run: its pages are
reused memory in every run.

Prints one JSON line per run and a summary line: python_s / cli_s for the array
(python_over_cli: the issue asks at most 1.02) and for the file (file_over_cli), and each
against the physical bound (payload / bottleneck rate).

Usage (root, from the repository, after building gridcast, gridcastd and gridcast_python):
  PYTHONPATH=build/python /usr/bin/python3 bench/python_overhead.py [--runs 3] [--size 256MiB]
      [--topology deploy/topologies/two-sites.yaml] [--out python-overhead.jsonl]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

import gridcast

REPO = Path(__file__).resolve().parents[1]
GRIDCAST = str(REPO / "build/bin/gridcast")


def drop_caches():
    os.sync()
    Path("/proc/sys/vm/drop_caches").write_text("1\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--size", default="256MiB")
    parser.add_argument("--topology", default=str(REPO / "deploy/topologies/two-sites.yaml"))
    parser.add_argument("--state", default="/tmp/gridcast-python-overhead")
    parser.add_argument("--out", default="python-overhead.jsonl")
    args = parser.parse_args()
    size = gridcast.parse_size(args.size)

    subprocess.run([GRIDCAST, "netgrid", "down", "--state", args.state], capture_output=True)
    subprocess.run([GRIDCAST, "netgrid", "up", args.topology, "--daemons", "--state", args.state], check=True,
                   capture_output=True)
    try:
        state = Path(args.state)
        payload = state / "payloads" / "overhead.bin"
        with open(payload, "wb") as f:
            f.write(np.random.default_rng(0).integers(0, 256, size=size, dtype=np.uint8).tobytes())
        array = np.fromfile(payload, dtype=np.uint8)
        cluster = gridcast.Cluster(state / "cluster.yaml")
        pairs = []
        for run in range(args.runs):
            drop_caches()
            started = time.monotonic()
            cli = json.loads(subprocess.run([GRIDCAST, "send", str(payload), "--cluster", str(state / "cluster.yaml"),
                                             "--name", f"cli-{run}.bin", "--mode", "push", "--json"],
                                            check=True, capture_output=True, text=True).stdout)
            cli_s = time.monotonic() - started
            drop_caches()
            started = time.monotonic()
            result = cluster.send(array, name=f"python-{run}.bin", mode="push")
            python_s = time.monotonic() - started
            drop_caches()
            started = time.monotonic()
            from_file = cluster.send(payload, name=f"file-{run}.bin", mode="push")
            file_s = time.monotonic() - started
            assert cli["verified"] and result.verified and from_file.verified
            assert result.sha256 == cli["sha256"] == from_file.sha256
            bound_s = cli["bound_s"]
            line = {"run": run, "size_bytes": size, "bound_s": bound_s,
                    "cli_s": cli_s, "cli_completion_s": cli["completion_s"], "cli_algorithm": cli["algorithm"],
                    "python_s": python_s, "python_completion_s": result.completion_s,
                    "python_algorithm": result.plan.algorithm,
                    "file_s": file_s, "file_completion_s": from_file.completion_s,
                    "python_over_cli": python_s / cli_s, "file_over_cli": file_s / cli_s,
                    "cli_over_bound": cli_s / bound_s, "file_over_bound": file_s / bound_s,
                    "python_over_bound": python_s / bound_s, "load_before": os.getloadavg()[0]}
            pairs.append(line)
            print(json.dumps(line), flush=True)
            with open(args.out, "a") as out:
                out.write(json.dumps(line) + "\n")
            for name in (f"cli-{run}.bin", f"python-{run}.bin", f"file-{run}.bin"):
                subprocess.run([GRIDCAST, "remove", name, "--cluster", str(state / "cluster.yaml")],
                               capture_output=True)
        summary = {"summary": True, "runs": len(pairs)}
        for key in ("python_over_cli", "file_over_cli", "cli_over_bound", "python_over_bound", "file_over_bound"):
            values = [p[key] for p in pairs]
            summary[key] = {"min": min(values), "median": statistics.median(values), "max": max(values)}
        print(json.dumps(summary))
    finally:
        subprocess.run([GRIDCAST, "netgrid", "down", "--state", args.state], capture_output=True)


if __name__ == "__main__":
    sys.exit(main())
