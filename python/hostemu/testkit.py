"""hostemu for Python tests, as the Go package testkit and the JS ``hostemu/testkit`` are.

:func:`start` runs the hostemu binary in a process of its own on a free loopback port;
:func:`connect` makes a namespace, a world of its own, on a hostemu that is already
running (a CI service container). Both return an :class:`Emulator` with the same
members, in Python spelling: ``url``, ``tokens``, ``cipher_key``, ``advance(by)``,
``await_(condition)``, ``faults.add/remove/clear/list``, ``requests(**filter)``,
``use_scenario(name)``, ``reset()``, ``state()``, ``bundle(path)``, ``coverage()``,
``close()``; an Emulator is a context manager.

The standard library only: control calls go through :mod:`http.client`, never through
a proxy of the environment. A process :func:`start` made never outlives this one: it
reads EOF on its standard input, a pipe this process holds, when this process dies,
even by SIGKILL (``HOSTEMU_WATCH_STDIN``), and on Linux the kernel also sends it
SIGTERM then (``PR_SET_PDEATHSIG``).
"""

from __future__ import annotations

import atexit
import http.client
import json
import os
import re
import subprocess
import sys
import threading
import time
import urllib.parse
from datetime import datetime, timedelta, timezone
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Union, cast, overload

from . import _mutant, _process
from ._coverage import merge_coverage
from ._find import find_hostemu_bin
from ._types import (
    AwaitRequest,
    AwaitResult,
    Coverage,
    CoverageTotal,
    FaultMatch,
    FaultSpec,
    FaultView,
    JournalEntry,
    NearMiss,
    RequestFilter,
    RequestsMatch,
)

__all__ = [
    "DEFAULT_CLOCK_START",
    "AwaitRequest",
    "AwaitResult",
    "Coverage",
    "CoverageTotal",
    "Duration",
    "Emulator",
    "FaultMatch",
    "FaultSpec",
    "FaultView",
    "Faults",
    "HostemuError",
    "JournalEntry",
    "NearMiss",
    "RequestFilter",
    "RequestsMatch",
    "Tokens",
    "artifact_path",
    "connect",
    "merge_coverage",
    "start",
]

#: Where a manual clock starts unless told: a fixed instant gives the same ids,
#: timestamps and generated fixtures on every run (the Go and JS testkits' too).
DEFAULT_CLOCK_START = "2026-01-01T00:00:00Z"

#: A duration: a string of the control API ("90s", "1h30m", "2d"), a timedelta, or a
#: number of seconds.
Duration = Union[str, timedelta, int, float]

# START_TIMEOUT bounds how long start() waits for the binary to listen, in seconds.
START_TIMEOUT = 10.0
# HEALTH_TIMEOUT is how long connect() waits for a starting hostemu to answer.
HEALTH_TIMEOUT = 5.0
# CALL_TIMEOUT bounds a control call that is not an await: a hung call fails the test.
CALL_TIMEOUT = 30.0
# AWAIT_GRACE is how much longer than its own timeout an await's call may take.
AWAIT_GRACE = 10.0


class Tokens(Dict[str, str]):
    """The world's hosting tokens, one per scope: ``tokens["read"]``, ``["deploy"]``,
    ``["admin"]`` (also as attributes: ``tokens.deploy``)."""

    @property
    def read(self) -> str:
        return self["read"]

    @property
    def deploy(self) -> str:
        return self["deploy"]

    @property
    def admin(self) -> str:
        return self["admin"]


class HostemuError(Exception):
    """An error answer of hostemu's control API: its status, and its envelope's code and
    message (``await_timeout``, ``fault_not_found``, ``scenario_not_found``…)."""

    def __init__(self, status: int, code: str, message: str, method: str, path: str, near_misses: Optional[List[NearMiss]] = None) -> None:
        super().__init__(f"{method} {path}: {status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.method = method
        self.path = path
        #: An await_timeout of a requests condition: the journaled requests that almost
        #: matched it (the message lists them too); None otherwise.
        self.near_misses = near_misses


def _duration(by: Duration) -> str:
    """The control API's duration string for by: strings pass as they are."""
    if isinstance(by, str):
        return by
    if isinstance(by, timedelta):
        by = by.total_seconds()
    if isinstance(by, bool) or not isinstance(by, (int, float)) or by < 0 or by != by:
        raise TypeError(f'hostemu: a duration is a string like "5m", a timedelta or a non-negative number of seconds, got {by!r}')
    return f"{round(by * 1000)}ms"


_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


def _seconds(d: str) -> Optional[float]:
    """A duration string read roughly, to size a call's timeout; None if it cannot."""
    total, end = 0.0, 0
    for m in re.finditer(r"(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h|d)", d):
        if m.start() != end:
            return None
        total += float(m.group(1)) * _UNITS[m.group(2)]
        end = m.end()
    return total if end == len(d) and end > 0 else None


def _rfc3339(t: Union[str, datetime]) -> str:
    if isinstance(t, datetime):
        if t.tzinfo is None:
            raise ValueError("hostemu: clock_start must be an aware datetime (tzinfo set)")
        return t.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")
    return str(t)


class _Remote:
    """What an Emulator needs to reach its hostemu: one HTTP exchange per call, a new
    connection each time (loopback makes that cheap, and an Emulator may be shared by
    threads)."""

    def __init__(self, url: str, control_token: Optional[str]) -> None:
        u = urllib.parse.urlsplit(url)
        if u.scheme not in ("http", "https") or not u.hostname:
            raise ValueError(f"hostemu: not an http(s) URL: {url!r}")
        self.url = url
        self.scheme = u.scheme
        self.host = u.hostname
        self.port = u.port
        self.prefix = u.path.rstrip("/")
        self.control_token = control_token or ""
        self.namespace = ""
        self.process: Optional[subprocess.Popen[bytes]] = None

    def control_path(self, p: str) -> str:
        """A control route's path in this world: under its namespace, if any."""
        if not self.namespace or not p.startswith("/_emulator/") or p.startswith("/_emulator/namespaces"):
            return p
        return "/_emulator/namespaces/" + self.namespace + p[len("/_emulator"):]

    def send(
        self, method: str, path: str, body: Optional[bytes], timeout: float, headers: Optional[Mapping[str, str]] = None
    ) -> "tuple[int, bytes]":
        h = dict(headers or {})
        if self.control_token and path.startswith("/_emulator/"):
            h["Authorization"] = "Bearer " + self.control_token
        conn: http.client.HTTPConnection
        if self.scheme == "https":
            conn = http.client.HTTPSConnection(self.host, self.port, timeout=timeout or None)
        else:
            conn = http.client.HTTPConnection(self.host, self.port, timeout=timeout or None)
        try:
            conn.request(method, self.prefix + path, body=body, headers=h)
            res = conn.getresponse()
            return res.status, res.read()
        finally:
            conn.close()

    def call(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        timeout: float = CALL_TIMEOUT,
        root: bool = False,
        raw: Optional[bytes] = None,
        content_type: str = "application/json",
    ) -> Any:
        """A control call: JSON in and out, an error answer raised as a HostemuError."""
        full = path if root else self.control_path(path)
        payload: Optional[bytes] = raw
        headers: Dict[str, str] = {}
        if raw is not None:
            headers["Content-Type"] = content_type
        elif body is not None:
            payload = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        try:
            status, data = self.send(method, full, payload, timeout, headers)
        except (OSError, http.client.HTTPException) as err:
            raise ConnectionError(f"hostemu: {method} {full} at {self.url}: {err}") from err
        if status < 200 or status > 299:
            raise _decode_error(status, data, method, full)
        return data

    def json(self, method: str, path: str, body: Any = None, **kw: Any) -> Any:
        data = self.call(method, path, body, **kw)
        if not data:
            return None
        try:
            return json.loads(data)
        except ValueError:
            raise ValueError(f"hostemu: {method} {path}: the answer is not JSON: {data[:200]!r}") from None


def _decode_error(status: int, data: bytes, method: str, path: str) -> HostemuError:
    try:
        env = json.loads(data)
        e = env.get("error") if isinstance(env, dict) else None
        if isinstance(e, dict) and isinstance(e.get("code"), str):
            near = e.get("near_misses")
            return HostemuError(status, e["code"], str(e.get("message", "")), method, path, near if isinstance(near, list) else None)
    except ValueError:
        pass
    return HostemuError(status, "(no error envelope)", data[:200].decode("utf-8", "replace"), method, path)


class Faults:
    """The faults of one emulator's world."""

    def __init__(self, remote: _Remote) -> None:
        self._r = remote

    def add(self, spec: FaultSpec) -> str:
        """Adds a fault (as ``POST /_emulator/faults`` takes it); returns its id. It stays
        until removed or reset."""
        return cast(str, self._r.json("POST", "/_emulator/faults", spec)["id"])

    def remove(self, id: str) -> None:
        """Removes the fault id (HostemuError ``fault_not_found`` if there is none)."""
        self._r.call("DELETE", "/_emulator/faults/" + urllib.parse.quote(id, safe=""))

    def clear(self) -> None:
        """Removes every fault added through the API (not the scenario's)."""
        self._r.call("DELETE", "/_emulator/faults")

    def list(self) -> List[FaultView]:
        """The faults in force, API-added and the active scenario's, with their hits."""
        return cast(List[FaultView], self._r.json("GET", "/_emulator/faults")["faults"])

    def hits(self, id: str) -> int:
        """How many times the fault id has fired; HostemuError fault_not_found once gone.
        Fetches this fault alone (``GET /_emulator/faults/{id}``)."""
        return self._get(id)["hits"]

    def near_misses(self, id: str) -> List[NearMiss]:
        """While the fault id has no hits, what almost matched it: up to 5 of the newest
        200 journaled requests that held all but one or two fields of its match, each with
        what it had in the fields that differed; ``[]`` once it has fired. HostemuError
        fault_not_found once gone. Fetches this fault alone: its near misses are weighed,
        not every fault's as ``list()`` does."""
        return list(self._get(id).get("near_misses") or [])

    def _get(self, id: str) -> FaultView:
        # the listing's element at one fault's cost; the server's 404 fault_not_found
        # is raised as a HostemuError. A hostemu from before that route (a service
        # container older than this package) answers 405 or 404 not_found: the fault
        # is then read from the listing.
        path = "/_emulator/faults/" + urllib.parse.quote(id, safe="")
        try:
            return cast(FaultView, self._r.json("GET", path))
        except HostemuError as err:
            if err.status != 405 and err.code != "not_found":
                raise
            for f in self.list():
                if f["id"] == id:
                    return f
            raise HostemuError(404, "fault_not_found", f"no fault has the id {id}: it was never added, or it was removed or gone with a reset", "GET", err.path) from None


# _live holds the emulators not yet closed: at exit, processes are stopped and
# namespaces deleted, so that a test that raised before close() leaks nothing.
_live: "set[Emulator]" = set()
_live_mu = threading.Lock()


def _close_all() -> None:
    with _live_mu:
        emus = list(_live)
    for e in emus:
        try:
            e.close()
        except Exception:  # at exit: the namespace expires after --namespace-ttl anyway
            pass


atexit.register(_close_all)


class Emulator:
    """One running hostemu, from :func:`start` or :func:`connect`. Every method raises
    :class:`HostemuError` when the control API answers an error."""

    #: The hosting service's base URL (paths start with /v1; the control API is under /_emulator).
    url: str
    #: The decryption service's base URL.
    cipher_url: str
    #: The HTTPS listener of ``start(tls=True)``, else "".
    tls_url: str
    #: The namespace of connect() ("ns_…"), else "".
    namespace: str
    #: The world's hosting tokens: a mapping with ``read``, ``deploy``, ``admin``.
    tokens: Tokens
    #: The world's decryption API key.
    cipher_key: str
    #: The world's faults.
    faults: Faults

    def __init__(self, remote: _Remote, tokens: Tokens, cipher_key: str, cipher_url: str = "", tls_url: str = "") -> None:
        self._r = remote
        self.url = remote.url
        self.cipher_url = cipher_url or remote.url
        self.tls_url = tls_url
        self.namespace = remote.namespace
        self.tokens = tokens
        self.cipher_key = cipher_key
        self.faults = Faults(remote)
        self._closed = False
        # The world's id at hostemu mutate's coordinator, when it asked for the coverage.
        self._mutant_world: Optional[str] = None
        self._close_mu = threading.Lock()
        with _live_mu:
            _live.add(self)

    def __repr__(self) -> str:
        what = f"namespace {self.namespace}" if self.namespace else ("process" if self._r.process else "shared")
        return f"<hostemu.testkit.Emulator {self.url} {what}{' closed' if self._closed else ''}>"

    def __enter__(self) -> "Emulator":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def pid(self) -> Optional[int]:
        """The process id of start()'s hostemu; None for connect()."""
        return self._r.process.pid if self._r.process else None

    def now(self) -> str:
        """The emulated time (RFC 3339)."""
        return cast(str, self._r.json("GET", "/_emulator/clock")["now"])

    def advance(self, by: Duration) -> str:
        """Moves a manual clock forward ("90s", "5m", "2d", a timedelta or seconds); returns
        the new time once every transition due by then has happened."""
        return cast(str, self._r.json("POST", "/_emulator/clock/advance", {"by": _duration(by)})["now"])

    def await_(self, condition: Optional[AwaitRequest] = None, /, **kw: Any) -> AwaitResult:
        """``POST /_emulator/await``: waits (on a manual clock, advances it) until the
        condition holds: ``{"deployment": id, "status": "ready"}``, ``{"domain": name,
        "status": s}``, ``{"requests": {"method", "path", …}, "count": n}``, with an
        optional ``timeout`` (emulated time on a manual clock, default 1 h, which costs
        nothing). Keywords work as well: ``await_(deployment=id, status="ready")``.
        HostemuError ``await_timeout`` if it does not hold in time."""
        c: Dict[str, Any] = dict(condition or {})
        c.update(kw)
        timeout = CALL_TIMEOUT
        if c.get("timeout") is not None:
            c["timeout"] = _duration(c["timeout"])
            s = _seconds(c["timeout"])
            # On a manual clock the timeout is emulated time and costs nothing; on a real
            # one the server waits that long: the call may take as long, and then some.
            timeout = CALL_TIMEOUT if s is None else max(CALL_TIMEOUT, s + AWAIT_GRACE)
        return cast(AwaitResult, self._r.json("POST", "/_emulator/await", c, timeout=timeout))

    def force_status(self, kind: str, id: str, status: str, error: Optional[Mapping[str, str]] = None) -> None:
        """Forces a deployment's or a domain's status now (kind "deployment" or
        "domain"); error ``{"code", "message"}`` is what a status "error" reports."""
        if kind not in ("deployment", "domain"):
            raise ValueError(f'hostemu: force_status takes "deployment" or "domain", got {kind!r}')
        body: Dict[str, Any] = {"status": status}
        if error:
            body["error"] = {"code": error["code"], "message": error["message"]}
        self._r.call("POST", f"/_emulator/{kind}s/{urllib.parse.quote(id, safe='')}/status", body)

    def requests(self, filter: Optional[RequestFilter] = None, /, **kw: Union[str, int]) -> List[JournalEntry]:
        """The journaled requests the filter selects, oldest first: ``method``, ``path``
        (``*`` wildcards), ``status``, ``service``, ``scope``, ``code``, ``since``,
        ``limit``, ``body``, ``header``, ``response_header``, as a mapping or keywords. An unknown key is a HostemuError
        naming the closest known one."""
        return cast(List[JournalEntry], self._query_requests(filter, kw)["requests"])

    def request_near_misses(self, filter: Optional[RequestFilter] = None, /, **kw: Union[str, int]) -> List[NearMiss]:
        """When the filter (as :meth:`requests` takes it) selects no journaled request,
        what almost matched it: the ``near_misses`` of ``GET /_emulator/requests``.
        ``[]`` when it selects a request, when nothing came close, and for a filter of
        only ``since`` and ``limit``."""
        return cast(List[NearMiss], self._query_requests(filter, kw).get("near_misses") or [])

    def _query_requests(self, filter: Optional[RequestFilter], kw: Mapping[str, Union[str, int]]) -> Dict[str, Any]:
        q: Dict[str, Any] = dict(filter or {})
        q.update(kw)
        params = {k: str(v) for k, v in q.items() if v is not None and v != ""}
        qs = urllib.parse.urlencode(params)
        return cast(Dict[str, Any], self._r.json("GET", "/_emulator/requests" + ("?" + qs if qs else "")))

    def clear_requests(self) -> None:
        """Empties the request journal."""
        self._r.call("DELETE", "/_emulator/requests")

    def token(self, scope: str) -> str:
        """Mints a hosting token of scope (read, deploy, admin) in this world."""
        return cast(str, self._r.json("POST", "/_emulator/tokens", {"scope": scope})["token"])

    def use_scenario(self, name: str) -> None:
        """Makes the named scenario active (HostemuError scenario_not_found)."""
        self._r.call("PUT", "/_emulator/scenarios/active", {"name": name})

    def reset(self) -> None:
        """Back to the start-up world: fixtures, scenario, no API faults, empty journal,
        the clock at its start."""
        self._r.call("POST", "/_emulator/reset")

    def state(self) -> Dict[str, Any]:
        """The whole state of the world (``GET /_emulator/state``)."""
        return cast(Dict[str, Any], self._r.json("GET", "/_emulator/state"))

    def set_state(self, state: Mapping[str, Any]) -> None:
        """Replaces the state of the world (validated first; a bad one changes nothing)."""
        self._r.call("PUT", "/_emulator/state", dict(state))

    @overload
    def bundle(self, path: None = None, *, failure: Optional[str] = None) -> bytes: ...

    @overload
    def bundle(self, path: "Union[str, os.PathLike[str]]", *, failure: Optional[str] = None) -> str: ...

    def bundle(self, path: "Union[str, os.PathLike[str], None]" = None, *, failure: Optional[str] = None) -> Union[bytes, str]:
        """The world's failure bundle (a gzipped tar): written to path, returning its
        absolute path, or with no path returned as bytes. With failure, the bundle holds
        that text as ``failure.txt`` (``POST /_emulator/bundle``); a hostemu too old for
        that gives the bundle without it (see :attr:`bundle_has_failure`)."""
        data = self._bundle_bytes(failure)
        if path is None:
            return data
        p = os.path.abspath(os.fspath(path))
        os.makedirs(os.path.dirname(p), exist_ok=True)
        fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        return p

    #: Whether the last bundle asked for with a failure holds it: False when this
    #: hostemu does not take POST /_emulator/bundle (older than failure.txt).
    bundle_has_failure: bool = False

    def _bundle_bytes(self, failure: Optional[str]) -> bytes:
        if failure is not None:
            try:
                data = cast(bytes, self._r.call("POST", "/_emulator/bundle", {"failure": failure}))
                self.bundle_has_failure = True
                return data
            except HostemuError as err:
                # a hostemu without POST /bundle answers 405, or 404 not_found: nothing
                # else is (a namespace that is gone, a bad body), as the JS and Go testkits
                if not (err.status == 405 or (err.status == 404 and err.code == "not_found")):
                    raise
            self.bundle_has_failure = False
        return cast(bytes, self._r.call("GET", "/_emulator/bundle"))

    def load_bundle(self, path_or_bytes: "Union[str, os.PathLike[str], bytes]") -> Dict[str, Any]:
        """Replaces the world with a failure bundle's (``PUT /_emulator/bundle``): a file's
        path, or the bundle's bytes. Returns what the server says it restored."""
        if isinstance(path_or_bytes, bytes):
            data = path_or_bytes
        else:
            with open(os.fspath(path_or_bytes), "rb") as f:
                data = f.read()
        out = self._r.call("PUT", "/_emulator/bundle", raw=data, content_type="application/gzip")
        return cast(Dict[str, Any], json.loads(out) if out else {})

    def save_bundle(self, name: str, failure: Optional[str] = None) -> str:
        """Writes the bundle as ``$HOSTEMU_ARTIFACTS/<name>.hostemu.tgz`` (default
        ``hostemu-artifacts/``), with failure as its failure.txt, and returns the path.
        The pytest plugin calls it when a test failed."""
        return self.bundle(artifact_path(name), failure=failure)

    def coverage(self, namespaces: Optional[str] = None, ignore: Optional[str] = None) -> Coverage:
        """Which parts of the API the world has seen (``GET /_emulator/coverage``);
        ``namespaces="all"`` for the union over every namespace of the server; ``ignore``
        the rows to leave out of the totals, as ``hostemu coverage --ignore`` takes them
        (``"internal_error,POST /v1/files"``)."""
        q = "" if ignore is None else "?ignore=" + urllib.parse.quote(ignore, safe=",")
        if namespaces is not None:
            if namespaces != "all":
                raise ValueError(f'hostemu: coverage(namespaces=...) takes "all", got {namespaces!r}')
            q = "?namespaces=all" + ("" if ignore is None else "&" + q[1:])
            return cast(Coverage, self._r.json("GET", "/_emulator/coverage" + q, root=True))
        return cast(Coverage, self._r.json("GET", "/_emulator/coverage" + q))

    def reset_coverage(self) -> None:
        """Starts counting the world's coverage afresh."""
        self._r.call("DELETE", "/_emulator/coverage")

    def close(self) -> None:
        """Stops start()'s process, or deletes connect()'s namespace; again, it does nothing."""
        with self._close_mu:
            if self._closed:
                return
            self._closed = True
        try:
            if self._mutant_world is not None:
                self._report_mutant()
            if self._r.process is not None:
                _process.stop(self._r.process)
            elif self._r.namespace:
                try:
                    self._r.call("DELETE", "/_emulator/namespaces/" + urllib.parse.quote(self._r.namespace, safe=""), timeout=5.0)
                except HostemuError as err:
                    if err.status != 404:  # gone already (expired): nothing is left to clean
                        raise
                except ConnectionError:
                    pass  # the server stopped: nothing is left to clean
        finally:
            with _live_mu:
                _live.discard(self)


    def _join_mutation(self) -> None:
        """Under hostemu mutate: says hello for this new world and arms the mutant's fault
        in it. A world that cannot be armed is closed and the call raises MutantError."""
        try:
            welcome = _mutant.hello()
            fault = welcome.get("fault")
            if fault is not None:
                try:
                    self.faults.add(cast(FaultSpec, fault))
                except (HostemuError, ConnectionError, ValueError) as err:
                    raise _mutant.MutantError(f"hostemu mutate: the mutant's fault {json.dumps(fault)} could not be armed in this world: {err}") from err
            if welcome.get("report"):
                self._mutant_world = str(welcome["world"])
        except BaseException:
            self.close()
            raise

    def _report_mutant(self) -> None:
        world, self._mutant_world = self._mutant_world, None
        assert world is not None
        try:
            cov: Any = self.coverage()
        except (HostemuError, ConnectionError, ValueError) as err:
            print(f"hostemu mutate: warning: world {world}'s coverage could not be read: {err}", file=sys.stderr)
            return
        _mutant.report(world, cov)


def artifact_path(name: str) -> str:
    """Where a test's bundle goes: ``$HOSTEMU_ARTIFACTS/<name>.hostemu.tgz`` (default
    ``hostemu-artifacts/`` in the working directory), the name made safe for every file
    system as the Go and JS testkits make it."""
    s = re.sub(r"[^A-Za-z0-9._-]+", "_", str(name))
    s = re.sub(r"^[_.]+|[_.]+$", "", s)[:180]
    return os.path.abspath(os.path.join(os.environ.get("HOSTEMU_ARTIFACTS") or "hostemu-artifacts", (s or "test") + ".hostemu.tgz"))


def _credentials(r: _Remote) -> "tuple[Tokens, str]":
    """The first token of each scope and the first decryption key of the world, as the
    banner shows them."""
    c = r.json("GET", "/_emulator/tokens")

    def first(scope: str) -> str:
        for t in c.get("tokens", []):
            if t.get("scope") == scope:
                return str(t["token"])
        return ""

    keys = c.get("cipher_api_keys") or [""]
    return Tokens(read=first("read"), deploy=first("deploy"), admin=first("admin")), str(keys[0])


def _health(r: _Remote, limit: float) -> None:
    """Polls GET /_emulator/health until it answers 200 {"status":"ok"}: a service
    container may still be starting, and there is nothing to wait on but the answer."""
    deadline = time.monotonic() + limit
    while True:
        try:
            status, data = r.send("GET", "/_emulator/health", None, 2.0)
            ok = False
            try:
                ok = status == 200 and json.loads(data).get("status") == "ok"
            except ValueError:
                pass
            if ok:
                return
            why = f'it answered {status}, not 200 {{"status":"ok"}}'
        except (OSError, http.client.HTTPException) as err:
            why = str(err)
        if time.monotonic() > deadline:
            raise ConnectionError(
                f"hostemu: no hostemu answers at {r.url}/_emulator/health within {limit:g} s: {why} "
                "(is it running, and is the URL the hosting service's base URL?)"
            )
        time.sleep(0.05)


def _start_args(
    scenario: Optional[str],
    seed: int,
    clock: str,
    clock_start: Union[str, datetime, None],
    control_token: Optional[str],
    fixtures: Optional[str],
    scenarios_dir: Optional[str],
    tls: bool,
    args: Sequence[str],
) -> List[str]:
    """serve's flags: a free loopback port, a manual clock at DEFAULT_CLOCK_START, seed
    1, a CA in memory, and no HTTPS listener unless asked."""
    a = ["serve", "--addr", "127.0.0.1:0", "--log-format", "json", "--ca-dir", ":memory:", "--seed", str(seed), "--clock", clock]
    if clock_start is not None:
        a += ["--clock-start", _rfc3339(clock_start)]
    elif clock in ("manual", "auto"):
        a += ["--clock-start", DEFAULT_CLOCK_START]
    a += ["--tls-addr", "127.0.0.1:0" if tls else ""]
    if scenario:
        a += ["--scenario", scenario]
    if scenarios_dir:
        a += ["--scenarios", os.fspath(scenarios_dir)]
    if fixtures:
        a += ["--fixtures", os.fspath(fixtures)]
    if control_token:
        a += ["--control-token", control_token]
    return a + list(args)


def start(
    *,
    scenario: Optional[str] = None,
    seed: int = 1,
    clock: str = "manual",
    clock_start: Union[str, datetime, None] = None,
    control_token: Optional[str] = None,
    fixtures: "Union[str, os.PathLike[str], None]" = None,
    scenarios_dir: "Union[str, os.PathLike[str], None]" = None,
    tls: bool = False,
    binary: Optional[str] = None,
    args: Sequence[str] = (),
    env: Optional[Mapping[str, str]] = None,
    log: Union[bool, Callable[[str], None]] = False,
    start_timeout: float = START_TIMEOUT,
) -> Emulator:
    """Starts hostemu in a process of its own on 127.0.0.1, on a free port, and returns
    once it is healthy. Unless told otherwise: the embedded fixtures and the default
    scenario, seed 1, a manual clock at 2026-01-01T00:00:00Z, no HTTPS listener, the CA
    in memory. ``fixtures`` is a file or directory (``--fixtures``), ``scenarios_dir``
    a directory of scenario YAML, ``args`` more serve flags, ``binary`` the binary to
    run (default: HOSTEMU_BINARY, else this platform's wheel's). ``log``: True prints
    the emulator's JSON log lines to stderr, a function receives them. HOSTEMU_*
    variables of this process are not passed on (the options decide). Under ``hostemu
    mutate`` (``HOSTEMU_MUTANT`` set) the world takes part in the run: see
    docs/mutate.md."""
    bin_path = binary or find_hostemu_bin()
    argv = [bin_path] + _start_args(scenario, seed, clock, clock_start, control_token, _opt_path(fixtures), _opt_path(scenarios_dir), tls, args)
    p = _process.spawn(argv, env)
    try:
        rec = _process.wait_listening(p, bin_path, log, start_timeout)
        r = _Remote(str(rec["url"]), control_token)
        r.process = p
        _health(r, HEALTH_TIMEOUT)
        tokens, key = _credentials(r)
        emu = Emulator(r, tokens, key, cipher_url=str(rec.get("cipher_url") or ""), tls_url=str(rec.get("tls_url") or ""))
    except BaseException:
        if p.poll() is None:
            p.kill()
        p.wait()
        if p.stdin is not None:
            p.stdin.close()
        raise
    if _mutant.active():
        emu._join_mutation()
    return emu


def _opt_path(p: "Union[str, os.PathLike[str], None]") -> Optional[str]:
    return None if p is None else os.fspath(p)


def _namespace_spec(
    scenario: Optional[str],
    seed: Optional[int],
    clock: str,
    clock_start: Union[str, datetime, None],
    fixtures: "Union[str, os.PathLike[str], Mapping[str, Any], None]",
    scenarios: Optional[Sequence[str]],
) -> Dict[str, Any]:
    """The POST /_emulator/namespaces body: a manual clock at DEFAULT_CLOCK_START unless told."""
    body: Dict[str, Any] = {"clock": clock}
    if clock_start is not None:
        body["clock_start"] = _rfc3339(clock_start)
    elif clock in ("manual", "auto"):
        body["clock_start"] = DEFAULT_CLOCK_START
    if seed is not None:
        body["seed"] = seed
    if scenario:
        body["scenario"] = scenario
    if scenarios is not None:
        if isinstance(scenarios, str) or not all(isinstance(s, str) for s in scenarios):
            raise TypeError("hostemu: connect()'s scenarios are scenario documents, a list of YAML strings")
        body["scenarios"] = list(scenarios)
    if fixtures is not None:
        if isinstance(fixtures, Mapping):
            body["fixtures"] = dict(fixtures)
        else:
            path = os.fspath(fixtures)
            if not path.lower().endswith(".json"):
                raise ValueError(
                    f"hostemu: connect() takes fixtures as a dict or a .json file ({path}): the testkit has no "
                    "YAML parser; convert it, or start() hostemu with it"
                )
            with open(path, encoding="utf-8") as f:
                body["fixtures"] = json.load(f)
    return body


def connect(
    url: str,
    *,
    scenario: Optional[str] = None,
    seed: Optional[int] = None,
    clock: str = "manual",
    clock_start: Union[str, datetime, None] = None,
    control_token: Optional[str] = None,
    fixtures: "Union[str, os.PathLike[str], Mapping[str, Any], None]" = None,
    scenarios: Optional[Sequence[str]] = None,
    shared: bool = False,
    cipher_url: Optional[str] = None,
    health_timeout: float = HEALTH_TIMEOUT,
) -> Emulator:
    """Drives the hostemu running at url (its base URL; a trailing /v1 is dropped) in a
    namespace of its own, a world with its own tokens on a manual clock at
    2026-01-01T00:00:00Z unless told, deleted by close(). ``fixtures`` is a fixture
    document (a dict, or a .json file); ``scenarios`` scenario documents (YAML strings)
    this namespace knows beside the server's. ``shared=True`` drives the default
    namespace instead (the well-known tokens; reset() is then everyone's). Under
    ``hostemu mutate`` (``HOSTEMU_MUTANT`` set) the world takes part in the run, unless
    shared: see docs/mutate.md."""
    if not isinstance(url, str) or not re.match(r"^https?://", url):
        raise ValueError(f"hostemu: connect() takes the hosting service's base URL, e.g. http://127.0.0.1:4700, got {url!r}")
    base = re.sub(r"/v1$", "", url.rstrip("/"))
    r = _Remote(base, control_token)
    _health(r, health_timeout)
    if shared:
        given = {"seed": seed, "clock_start": clock_start, "fixtures": fixtures, "scenarios": scenarios}
        for k, v in given.items():
            if v is not None:
                raise ValueError(f"hostemu: connect(): {k} does not apply with shared=True: the default namespace was configured when hostemu started")
        tokens, key = _credentials(r)
        emu = Emulator(r, tokens, key, cipher_url=cipher_url or "")
        if scenario:
            emu.use_scenario(scenario)
        # A world shared by every test cannot be armed for one of them: under hostemu
        # mutate it takes no part (as the Go testkit's Connect with Shared).
        return emu
    ns = r.json("POST", "/_emulator/namespaces", _namespace_spec(scenario, seed, clock, clock_start, fixtures, scenarios))
    r.namespace = str(ns["namespace"])
    t = ns["tokens"]
    emu = Emulator(r, Tokens(read=t["read"], deploy=t["deploy"], admin=t["admin"]), str(ns.get("cipher_key", "")), cipher_url=cipher_url or "")
    if _mutant.active():
        emu._join_mutation()
    return emu

