"""The testkit's part in ``hostemu mutate`` (docs/mutate.md, "How the testkits take part").

When ``HOSTEMU_MUTANT`` is set (mutate sets it for each run of the suite), every world
:func:`hostemu.testkit.start` or :func:`hostemu.testkit.connect` makes says hello to
``$HOSTEMU_MUTANT/world`` with the running test's pytest node id, arms the fault the
answer carries before the test gets the world, and at the world's end posts its
coverage to ``$HOSTEMU_MUTANT/coverage``. Outside a mutation run nothing of this
happens.

Which test is running: the pytest plugin records it (:func:`set_current`) around each
test's whole protocol, setup to teardown, and clears it while a fixture of a wider
scope than the function is set up (a session's world belongs to no one test). Without
the plugin (``-p no:hostemu``, or the testkit used outside pytest) the node id of
``PYTEST_CURRENT_TEST`` is the fallback, else the hello names no test.
"""

from __future__ import annotations

import contextlib
import contextvars
import http.client
import json
import os
import re
import sys
import threading
import urllib.parse
from typing import Any, Dict, Iterator, Optional, cast

#: The environment variable that tells the testkit where mutate's coordinator is.
ENV = "HOSTEMU_MUTANT"

# TIMEOUT bounds one exchange with the coordinator, which answers at once: 10 s, as in
# the Go and JS testkits.
TIMEOUT = 10.0

_mu = threading.Lock()
# _plugin: the pytest plugin is loaded and keeps _current up to date.
_plugin = False
# _current: the node id of the test running now (None between tests and while a fixture
# of a wider scope is set up).
_current: Optional[str] = None


class MutantError(RuntimeError):
    """mutate's mutant could not be armed in a world (or its coordinator could not be
    asked): the test fails, since a mutant never injected must not be reported as
    survived."""


def set_plugin() -> None:
    """The pytest plugin is loaded: its record of the running test is the one to trust."""
    global _plugin
    with _mu:
        _plugin = True


def set_current(nodeid: Optional[str]) -> Optional[str]:
    """Records the running test's node id (None: no test); returns the one before."""
    global _current
    with _mu:
        prev, _current = _current, nodeid
    return prev


def current_test() -> Optional[str]:
    """The node id of the test running now, or None."""
    with _mu:
        if _plugin:
            return _current
    # PYTEST_CURRENT_TEST is "NODEID (setup)", "(call)" or "(teardown)".
    v = os.environ.get("PYTEST_CURRENT_TEST", "")
    m = re.match(r"^(.*) \((?:setup|call|teardown)\)$", v)
    return m.group(1) if m else None


# _outside: worlds made now take no part (the pytest plugin's session hostemu, whose
# default namespace is no test's world); see outside().
_outside: "contextvars.ContextVar[bool]" = contextvars.ContextVar("hostemu_mutant_outside", default=False)


@contextlib.contextmanager
def outside() -> Iterator[None]:
    """Worlds made in this block take no part in hostemu mutate."""
    token = _outside.set(True)
    try:
        yield
    finally:
        _outside.reset(token)


def active() -> bool:
    """This process runs under hostemu mutate, and the world being made takes part."""
    return bool(os.environ.get(ENV)) and not _outside.get()


def _post(path: str, body: Dict[str, Any]) -> "tuple[int, bytes]":
    base = os.environ.get(ENV, "")
    u = urllib.parse.urlsplit(base)
    if u.scheme != "http" or not u.hostname:
        raise MutantError(f"hostemu mutate: {ENV}={base!r} is not the coordinator's http:// URL")
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=TIMEOUT)
    try:
        conn.request("POST", u.path.rstrip("/") + path, body=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
        res = conn.getresponse()
        return res.status, res.read()
    finally:
        conn.close()


def hello() -> Dict[str, Any]:
    """Says hello for a new world: ``{"world", "fault", "report"}``. MutantError when the
    coordinator cannot be asked or answers an error."""
    test = current_test()
    body: Dict[str, Any] = {} if not test else {"test": test}
    try:
        status, data = _post("/world", body)
    except (OSError, http.client.HTTPException) as err:
        raise MutantError(f"hostemu mutate: the coordinator at {os.environ.get(ENV)} cannot be reached: {err}") from err
    if status != 200:
        raise MutantError(f"hostemu mutate: the coordinator answered {status} to this world's hello: {data[:300].decode('utf-8', 'replace')}")
    try:
        w = json.loads(data)
    except ValueError:
        w = None
    if not isinstance(w, dict) or not isinstance(w.get("world"), str) or not (w.get("fault") is None or isinstance(w.get("fault"), dict)):
        raise MutantError(f"hostemu mutate: the coordinator's answer is not a welcome: {data[:300]!r}")
    return cast(Dict[str, Any], w)


def report(world: str, coverage: Any) -> None:
    """Posts a world's coverage at its end; a failure is a warning on stderr, not the
    test's failure."""
    try:
        status, data = _post("/coverage", {"world": world, "coverage": coverage})
        if status != 204:
            print(f"hostemu mutate: warning: the coordinator answered {status} to world {world}'s coverage: {data[:300].decode('utf-8', 'replace')}", file=sys.stderr)
    except (OSError, http.client.HTTPException, MutantError) as err:
        print(f"hostemu mutate: warning: world {world}'s coverage could not be posted: {err}", file=sys.stderr)
