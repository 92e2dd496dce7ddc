"""gridcast for Python: broadcast files, bytes and NumPy arrays to every node of a cluster.

A :class:`Cluster` talks to the ``gridcastd`` daemons named by a cluster file (the one
``gridcast netgrid up --daemons`` or ``gridcast cluster init`` writes). Bytes never pass through
this process's sockets: the source daemon reads a path, or a copy of a buffer written into its
data directory, and the daemons move it among themselves; a member's verified copy is read
back from its daemon's directory. So a buffer is sent, and a copy received, by a process on
the same host as that daemon (as an MPI rank next to its node's daemon).

Every call that waits releases the GIL; Ctrl-C during :meth:`Cluster.send` cancels the
broadcast at every member and raises :class:`KeyboardInterrupt`. Failures raise
:class:`Error` subclasses carrying the command line's messages. See docs/python.md.
"""

from __future__ import annotations

import builtins
import dataclasses
import json
import operator
import os
import time
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

from . import _gridcast

__all__ = [
    "ArgumentError",
    "Broadcast",
    "BroadcastError",
    "Cluster",
    "ConnectionError",
    "Control",
    "Error",
    "MemberResult",
    "PlanInfo",
    "Progress",
    "SendResult",
    "parse_size",
    "plan",
    "simulate",
]

# How often a waiting call looks at its broadcast, so that Ctrl-C is seen this quickly.
_WAIT_SLICE_S = 0.1
# How often `progress` is called.
_PROGRESS_PERIOD_S = 1.0
# After a cancel (Ctrl-C, a failing progress callback), how long to wait for the members to stop.
_CANCEL_SETTLE_S = 30.0


class Error(Exception):
    """A gridcast failure. ``code`` is the status code's name (``"UNAVAILABLE"``, ...)."""

    def __init__(self, message: str, code: str = "UNKNOWN") -> None:
        super().__init__(message)
        self.message = message
        self.code = code


class ArgumentError(Error, ValueError):
    """Bad arguments or input files: what the command line exits 2 for."""


class ConnectionError(Error, builtins.ConnectionError):  # noqa: A001 - gridcast.ConnectionError by design
    """A daemon could not be reached (down, the wrong address, a firewall)."""


class BroadcastError(Error):
    """A broadcast ended without every member holding a verified copy.

    ``result`` is its :class:`SendResult` (each member's state and error), or None when the
    source refused it before making a plan.
    """

    def __init__(self, message: str, code: str, result: Optional["SendResult"]) -> None:
        super().__init__(message, code)
        self.result = result


# StatusCode values (include/gridcast/status.h) the command line exits 2 for, and the one
# that says a daemon was not reached.
_ARGUMENT_CODES = {3, 5}  # INVALID_ARGUMENT, NOT_FOUND
_UNAVAILABLE = 14


def _error_from(code: int, code_name: str, message: str) -> Error:
    if code in _ARGUMENT_CODES:
        return ArgumentError(message, code_name)
    if code == _UNAVAILABLE:
        return ConnectionError(message, code_name)
    return Error(message, code_name)


def _native(call: Callable[..., Any], *args: Any) -> Any:
    """Calls into _gridcast, raising its StatusError as this package's exception classes."""
    try:
        return call(*args)
    except _gridcast.StatusError as e:
        raise _error_from(*e.args) from None


@dataclasses.dataclass(frozen=True)
class Progress:
    """Where a broadcast stands, summed over its members."""

    fraction: float  #: chunks delivered over chunks to deliver, 0 to 1
    members_done: int
    members: int
    slowest_member: Optional[str]  #: among those still receiving: the one with the fewest chunks
    slowest_chunks: int
    chunks_done: int
    chunks_total: int
    elapsed_s: float


@dataclasses.dataclass(frozen=True)
class MemberResult:
    """One member's end of a broadcast."""

    name: str
    state: str  #: "done", "failed", "stopped", "lost", "unreachable", ...
    error: Optional[str]  #: why, when it failed or was stopped
    digest_ok: bool  #: the digests of the chunks it stored are the source's
    finished_s: float


@dataclasses.dataclass(frozen=True)
class PlanInfo:
    """The plan a broadcast ran: the algorithm the source chose and why."""

    id: str
    algorithm: str
    rationale: str
    mode: str  #: "push", "pull" or "hybrid"
    chunk_bytes: int
    lanes: int


@dataclasses.dataclass(frozen=True)
class Control:
    """What the control plane cost at the source."""

    rpcs: int
    bytes: int
    first_byte_s: Optional[float]  #: from the request to the first payload byte sent
    started_s: Optional[float]  #: from the request to the broadcast's start


@dataclasses.dataclass(frozen=True)
class SendResult:
    """How a broadcast ended: ``to_dict()`` is the document ``gridcast send --json`` prints."""

    completion_s: float  #: from the request until the last member held a verified copy
    bound_s: Optional[float]  #: the physical lower bound, when the cluster's topology is known
    efficiency: Optional[float]  #: bound_s / completion_s
    verified: bool  #: every member's copy verified
    digest: str  #: the chunk digest: "sha256" or "xxh3"
    sha256: str  #: the whole payload's SHA-256 (hex), as the source computed it
    size_bytes: int
    plan: PlanInfo
    members: List[MemberResult]
    control: Optional[Control]
    _document: Dict[str, Any] = dataclasses.field(repr=False, compare=False)

    @classmethod
    def from_dict(cls, document: Dict[str, Any]) -> "SendResult":
        members = []
        for m in document.get("members", []):
            state = m.get("state", "unknown")
            members.append(MemberResult(name=m["name"], state=state.split(":", 1)[0], error=m.get("error"),
                                        digest_ok=bool(m.get("digest_ok", False)),
                                        finished_s=float(m.get("finished_s", 0.0))))
        control = document.get("control")
        return cls(
            completion_s=float(document.get("completion_s", 0.0)),
            bound_s=document.get("bound_s"),
            efficiency=document.get("efficiency"),
            verified=bool(document.get("verified", False)),
            digest=document.get("digest", ""),
            sha256=document.get("sha256", ""),
            size_bytes=int(document.get("size_bytes", 0)),
            plan=PlanInfo(id=document.get("plan_id", ""), algorithm=document.get("algorithm", ""),
                          rationale=document.get("rationale", ""), mode=document.get("mode", ""),
                          chunk_bytes=int(document.get("chunk_bytes", 0)), lanes=int(document.get("lanes", 0))),
            members=members,
            control=None if control is None else Control(
                rpcs=int(control["rpcs_at_source"]), bytes=int(control["bytes_at_source"]),
                first_byte_s=control.get("first_byte_s"), started_s=control.get("started_s")),
            _document=document,
        )

    def to_dict(self) -> Dict[str, Any]:
        """The document ``gridcast send --json`` prints for this broadcast (a copy)."""
        return json.loads(json.dumps(self._document))


def _size(value: Union[int, str], what: str) -> int:
    """A size in bytes from an integer (a NumPy one too) or a string such as "256MiB"."""
    if isinstance(value, str):
        return int(_native(_gridcast.parse_size, value))
    try:
        if isinstance(value, bool):
            raise TypeError
        size = operator.index(value)
    except TypeError:
        raise ArgumentError(f"{what}: expected a size in bytes or a string such as '1MiB', not {value!r}",
                            "INVALID_ARGUMENT") from None
    if size < 0:
        raise ArgumentError(f"{what}: must not be negative", "INVALID_ARGUMENT")
    return size


def _chunk(value: Union[int, str, None]) -> int:
    """A chunk size; 0 (the planner's choice) for None."""
    if value is None:
        return 0
    chunk = _size(value, "chunk")
    if chunk == 0:
        raise ArgumentError("chunk: must be positive", "INVALID_ARGUMENT")
    return chunk


def parse_size(text: str) -> int:
    """A size as the command line reads it ("4096", "256KiB", "1.5GiB") in bytes."""
    return _size(text, "size")


def _is_url(source: str) -> bool:
    return source[:8].lower() == "https://" or source[:7].lower() == "http://"


class Broadcast:
    """A broadcast under way (:meth:`Cluster.send_async`).

    Used as a context manager, leaving the block cancels it when it has not ended; so does
    dropping the last reference to the handle of an unfinished broadcast.
    """

    def __init__(self, native: Any, progress: Optional[Callable[[Progress], Any]] = None) -> None:
        self._native = native
        self._progress = progress
        self._result: Optional[SendResult] = None

    def poll(self) -> Progress:
        """Where the broadcast stands now (does not wait)."""
        return self._snapshot()[0]

    @property
    def done(self) -> bool:
        """Whether the broadcast has ended, successfully or not."""
        return self._snapshot()[1]

    def cancel(self) -> None:
        """Asks the source to stop the broadcast at every member; returns once it was asked
        (within 5 s), from any thread.

        :meth:`wait` then raises :class:`BroadcastError` (members "stopped").
        """
        self._native.cancel()

    def wait(self, timeout: Optional[float] = None) -> SendResult:
        """Waits for the end and returns the result.

        Raises :class:`BroadcastError` when not every member verified its copy,
        :class:`TimeoutError` when ``timeout`` seconds pass first (the broadcast goes on).
        A Ctrl-C meanwhile cancels the broadcast and raises :class:`KeyboardInterrupt`.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        next_report = time.monotonic() + _PROGRESS_PERIOD_S
        try:
            while True:
                now = time.monotonic()
                slice_s = _WAIT_SLICE_S if deadline is None else max(0.0, min(_WAIT_SLICE_S, deadline - now))
                if self._native.wait_for(slice_s):
                    break
                now = time.monotonic()
                if self._progress is not None and now >= next_report:
                    next_report = now + _PROGRESS_PERIOD_S
                    self._progress(self.poll())
                if deadline is not None and now >= deadline:
                    raise TimeoutError(f"the broadcast did not end in {timeout} s")
        except TimeoutError:
            raise
        except BaseException:  # Ctrl-C, the progress callback's exception
            self._cancel_and_settle()
            raise
        return self._outcome()

    def __enter__(self) -> "Broadcast":
        return self

    def __exit__(self, *exc: Any) -> None:
        if not self.done:
            self._cancel_and_settle()

    def _snapshot(self) -> Tuple[Progress, bool]:
        p = self._native.poll()
        total = p["chunks_total"]
        fraction = 1.0 if p["ended"] and total == 0 else (p["chunks_done"] / total if total else 0.0)
        progress = Progress(fraction=min(1.0, fraction), members_done=p["members_done"], members=p["members"],
                            slowest_member=p["slowest_member"] or None, slowest_chunks=p["slowest_chunks"],
                            chunks_done=p["chunks_done"], chunks_total=total, elapsed_s=p["elapsed_s"])
        return progress, bool(p["ended"])

    def _cancel_and_settle(self) -> None:
        self._native.cancel()
        deadline = time.monotonic() + _CANCEL_SETTLE_S
        while not self._native.wait_for(_WAIT_SLICE_S) and time.monotonic() < deadline:
            pass

    def _outcome(self) -> SendResult:
        if self._result is None:
            code, code_name, message, summary = self._native.outcome()
            document = json.loads(summary) if summary else {}
            result = SendResult.from_dict(document) if document.get("plan_id") else None
            if code != 0 or result is None or not result.verified:
                if code in _ARGUMENT_CODES and result is None:
                    raise ArgumentError(message, code_name)
                if code == _UNAVAILABLE and result is None:
                    raise ConnectionError(message, code_name)
                raise BroadcastError(message or document.get("error") or "not every member verified its copy",
                                     code_name, result)
            self._result = result
        return self._result


class Cluster:
    """The daemons of one cluster file (default: the one ``GRIDCAST_CLUSTER`` names, as for the
    command line and the MPI shim).

    ``source`` names the member a send starts at (default: the member on this host, else the
    topology's source, else the first); ``tls_ca`` a PEM file when the daemons serve TLS
    (default: the cluster file's).
    """

    def __init__(self, path: Union[str, "os.PathLike[str]", None] = None, *, source: Optional[str] = None,
                 tls_ca: Optional[str] = None) -> None:
        if path is None:
            path = os.environ.get("GRIDCAST_CLUSTER")
            if not path:
                raise ArgumentError("no cluster file: pass its path or set GRIDCAST_CLUSTER", "INVALID_ARGUMENT")
        self.path = os.fspath(path)
        self._client = _native(_gridcast.Client, self.path, source or "", tls_ca or "")

    def send(self, source: Any, *, name: Optional[str] = None, algo: str = "auto", mode: Optional[str] = "push",
             digest: Optional[str] = None, chunk: Union[int, str, None] = None, in_memory: bool = False,
             timeout: Optional[float] = None, progress: Optional[Callable[[Progress], Any]] = None,
             members: Optional[Sequence[str]] = None, headers: Sequence[str] = (),
             sha256: Optional[str] = None) -> SendResult:
        """Broadcasts ``source`` to every member (or ``members``) and waits for the end.

        ``source``: a path (file or directory) the source daemon can read, an http(s) URL it
        fetches (``headers``, ``sha256`` apply), or ``bytes``/``bytearray``/``memoryview``/a
        C-contiguous NumPy array (any dtype; its bytes as they lie in memory), which needs
        ``name``. ``mode``: "push", "pull", "hybrid", or None for the source daemon's choice.
        ``digest``: "sha256" or "xxh3" (default: the cluster file's). ``chunk``: bytes or a
        size such as "1MiB" (default: the planner's). ``in_memory``: members keep it in memory.
        ``timeout``: seconds for the whole broadcast (default: from the size).
        ``progress``: called with a :class:`Progress` about once a second.

        Raises :class:`BroadcastError` (with the result) unless every member verified its
        copy; Ctrl-C cancels the broadcast everywhere and raises :class:`KeyboardInterrupt`.
        """
        broadcast = self.send_async(source, name=name, algo=algo, mode=mode, digest=digest, chunk=chunk,
                                    in_memory=in_memory, timeout=timeout, progress=progress, members=members,
                                    headers=headers, sha256=sha256)
        try:
            return broadcast.wait()
        except BaseException:
            if not broadcast.done:  # a Ctrl-C just before wait() began
                broadcast._cancel_and_settle()
            raise

    def send_async(self, source: Any, *, name: Optional[str] = None, algo: str = "auto",
                   mode: Optional[str] = "push", digest: Optional[str] = None, chunk: Union[int, str, None] = None,
                   in_memory: bool = False, timeout: Optional[float] = None,
                   progress: Optional[Callable[[Progress], Any]] = None, members: Optional[Sequence[str]] = None,
                   headers: Sequence[str] = (), sha256: Optional[str] = None) -> Broadcast:
        """Starts a broadcast as :meth:`send` does and returns its :class:`Broadcast` at once.

        A buffer is copied to the source daemon before this returns; ``progress`` is called
        from :meth:`Broadcast.wait`.
        """
        options = {
            "algorithm": algo,
            "chunk_bytes": _chunk(chunk),
            "timeout_s": float(timeout or 0),
            "name": name or "",
            "in_memory": bool(in_memory),
            "members": list(members or []),
            "digest": digest or "",
            "no_reuse": False,
            "mode": 0 if mode is None else _native(_gridcast.mode_value, mode),
        }
        if isinstance(source, (str, os.PathLike)):
            path = os.fspath(source)
            if not isinstance(path, str):
                raise ArgumentError("source: a path as str, not bytes", "INVALID_ARGUMENT")
            if _is_url(path):
                return Broadcast(_native(self._client.start_send_url, path, options, list(headers), "", sha256 or ""),
                                 progress)
            if headers or sha256:
                raise ArgumentError("headers and sha256 are for a payload at an http(s) URL", "INVALID_ARGUMENT")
            if not (os.path.isfile(path) or os.path.isdir(path)):
                raise ArgumentError(f"payload {path} is not a readable file or directory", "INVALID_ARGUMENT")
            return Broadcast(_native(self._client.start_send_file, os.path.abspath(path), options), progress)
        if headers or sha256:
            raise ArgumentError("headers and sha256 are for a payload at an http(s) URL", "INVALID_ARGUMENT")
        view = _memory_of(source, "source")
        if not name:
            raise ArgumentError("name: a buffer or an array needs the name members store it under",
                                "INVALID_ARGUMENT")
        return Broadcast(_native(self._client.start_send_buffer, view, name, options), progress)

    def receive(self, name: str, into: Any = None, member: Optional[str] = None, *, timeout: float = 600.0,
                remove_in_memory: bool = True) -> Any:
        """A member's verified copy of payload ``name``, once it holds it complete.

        Returns ``bytes``, or fills ``into`` (a writable buffer or a C-contiguous NumPy array of
        exactly the payload's size) and returns it. ``member``: default ``GRIDCAST_MEMBER``, else
        the member whose address is on this host. A copy sent in memory is removed from the
        member's memory once read unless ``remove_in_memory`` is False. Raises
        :class:`TimeoutError` when no complete copy is there within ``timeout`` seconds.
        """
        member = member or self.local_member()
        target = None if into is None else _memory_of(into, "into", writable=True)
        deadline = time.monotonic() + timeout
        pause = 0.02  # a copy that is already there is read at once; one on its way, soon after it is
        while True:
            size = self._complete_size(member, name)
            if size is not None:
                break
            if time.monotonic() >= deadline:
                raise TimeoutError(f"'{name}' did not arrive complete at {member} in {timeout} s")
            time.sleep(min(pause, max(0.0, deadline - time.monotonic())))
            pause = min(2 * pause, 0.5)
        remaining = max(1.0, deadline - time.monotonic())
        if target is None:
            return _native(self._client.receive_bytes, member, name, size, remaining, remove_in_memory)
        if target.nbytes != size:
            raise ArgumentError(f"payload '{name}' has {size} bytes; the buffer has {target.nbytes}",
                                "INVALID_ARGUMENT")
        _native(self._client.receive_into, member, name, target, remaining, remove_in_memory)
        return into

    def status(self, member: Optional[str] = None) -> Dict[str, Any]:
        """``gridcast status --json``: every member's plans and serves (or its "error")."""
        return json.loads(_native(self._client.status_json, member or ""))

    def list(self, verify: bool = False, member: Optional[str] = None) -> Dict[str, Any]:
        """``gridcast list --json``: every member's payloads (or its "error"); with ``verify``
        every complete payload is re-hashed ("verify", "bad_chunks")."""
        return json.loads(_native(self._client.list_json, member or "", bool(verify)))

    def local_member(self) -> str:
        """The member of this host: ``GRIDCAST_MEMBER``, else the one with an address here."""
        return str(_native(self._client.local_member))

    def _complete_size(self, member: str, name: str) -> Optional[int]:
        for entry in self.list(member=member)["members"]:
            if "error" in entry:
                error = entry["error"]
                raise ConnectionError(error, "UNAVAILABLE") if "unreachable" in error else Error(error)
            for payload in entry["payloads"]:
                if payload["name"] == name and payload["complete"]:
                    return int(payload["size_bytes"])
        return None


def _memory_of(source: Any, what: str, writable: bool = False) -> memoryview:
    """The bytes of a buffer, as one C-contiguous run; a clear error for anything else."""
    dtype = getattr(source, "dtype", None)
    if dtype is not None and getattr(dtype, "hasobject", False):
        raise ArgumentError(f"{what}: an array of Python objects has no bytes to send (dtype object)",
                            "INVALID_ARGUMENT")
    flags = getattr(source, "flags", None)
    if dtype is not None and flags is not None and hasattr(source, "view") and hasattr(source, "reshape"):
        # A NumPy array of any dtype, as its bytes: the buffer protocol has no format for some
        # (datetime64, timedelta64), and its bytes are what travels.
        if not flags.c_contiguous:
            raise ArgumentError(f"{what}: the array is not C-contiguous (numpy.ascontiguousarray makes a copy "
                                "that is)", "INVALID_ARGUMENT")
        if writable and not flags.writeable:
            raise ArgumentError(f"{what}: the array is read-only", "INVALID_ARGUMENT")
        source = source.reshape(-1).view("u1")
    try:
        view = memoryview(source)
    except TypeError:
        raise ArgumentError(f"{what}: expected a path, bytes, bytearray, memoryview or a NumPy array, "
                            f"not {type(source).__name__}", "INVALID_ARGUMENT") from None
    except ValueError as e:
        raise ArgumentError(f"{what}: {e}", "INVALID_ARGUMENT") from None
    # An array of Python objects holds references (addresses in this process), not data.
    if view.format == "O":
        raise ArgumentError(f"{what}: an array of Python objects has no bytes to send (dtype object)",
                            "INVALID_ARGUMENT")
    if not view.c_contiguous:
        raise ArgumentError(f"{what}: the array is not C-contiguous (numpy.ascontiguousarray makes a copy that is)",
                            "INVALID_ARGUMENT")
    if writable and view.readonly:
        raise ArgumentError(f"{what}: the buffer is read-only", "INVALID_ARGUMENT")
    return view


def plan(topology: Union[str, "os.PathLike[str]"], size: Union[int, str], algo: str = "auto", *,
         chunk: Union[int, str, None] = None, source: Optional[str] = None) -> Dict[str, Any]:
    """``gridcast plan --json``: the plan ``algo`` makes for ``size`` bytes on a topology file."""
    return json.loads(_native(_gridcast.plan_json, os.fspath(topology), _size(size, "size"), algo,
                              _chunk(chunk), source or ""))


def simulate(topology: Union[str, "os.PathLike[str]"], size: Union[int, str], algo: str = "all", *,
             chunk: Union[int, str, None] = None, source: Optional[str] = None,
             goodput: float = 1.0) -> Dict[str, Any]:
    """``gridcast simulate --json``: predicted times of ``algo`` ("all": every broadcast
    planner) and auto's pick, against the physical bound."""
    return json.loads(_native(_gridcast.simulate_json, os.fspath(topology), _size(size, "size"), algo,
                              _chunk(chunk), source or "", float(goodput)))

