"""The pytest plugin of hostemu (loaded through the ``pytest11`` entry point).

- The ``hostemu`` fixture: each test its own world, a namespace of the hostemu at
  ``--hostemu-url`` / ``HOSTEMU_URL``, else of one hostemu this session starts (under
  pytest-xdist, one per worker). ``@pytest.mark.hostemu(scenario=..., clock=...,
  seed=..., clock_start=..., fixtures=..., scenarios=...)`` shapes it, on the test, its
  class or its module (``pytestmark``); the closest marker wins per key.
- When a test fails, its world's failure bundle is written as
  ``$HOSTEMU_ARTIFACTS/<test>.hostemu.tgz`` with the failure's message inside
  (``failure.txt``), and the session's summary prints the replay command.
- ``--hostemu-coverage-min PCT``: the coverage of every test's world, added up (across
  xdist workers too), fails the session under PCT.
- Under ``hostemu mutate`` (``HOSTEMU_MUTANT`` set): the testkit learns from here which
  test is running (its node id), each test's JUnit entry gets a ``hostemu_nodeid``
  property, no failure bundles are saved, ``--hostemu-only FILE`` narrows a run to the
  node ids FILE lists and ``--hostemu-outcomes FILE`` appends each test phase's outcome
  as it ends. See docs/mutate.md.

Nothing happens in a session whose tests do not ask for the fixture.
"""

from __future__ import annotations

import difflib
import json
import os
import shlex
from typing import Any, Callable, Dict, Generator, List, Optional, TypeVar, cast

import pytest

from . import _mutant, testkit
from ._coverage import merge_coverage
from ._types import Coverage

# The marker's keywords: connect()'s options of a world.
_MARKER_KEYS = ("scenario", "clock", "seed", "clock_start", "fixtures", "scenarios")
# failure.txt is cut to this many characters (the head: the message comes first).
_FAILURE_MAX = 16 * 1024
#: The JUnit property of a test's node id under hostemu mutate: JUnit's classname and
#: name cannot give it back exactly (parameters with dots or "::", nested classes).
NODEID_PROPERTY = "hostemu_nodeid"

_F = TypeVar("_F", bound=Callable[..., Any])


def _hookimpl(**kw: Any) -> Callable[[_F], _F]:
    """pytest.hookimpl, typed (some pluggy releases ship no types: mypy --strict would
    call the hooks untyped)."""
    return cast(Callable[[_F], _F], pytest.hookimpl(**kw))


_failure_key = pytest.StashKey[str]()
_bundle_key = pytest.StashKey[str]()
_state_key = pytest.StashKey["_State"]()


class _State:
    """The session's: the coverage added up so far and the bundles written, for the
    summary."""

    def __init__(self, coverage_min: Optional[float]) -> None:
        self.coverage_min = coverage_min
        self.coverage: Optional[Coverage] = None
        self.worlds = 0
        self.bundles: List[str] = []
        self.coverage_message = ""

    def add_coverage(self, c: Optional[Coverage], worlds: int = 1) -> None:
        self.coverage = merge_coverage(self.coverage, c)
        self.worlds += worlds


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("hostemu", "hostemu (the hosting service emulator)")
    group.addoption(
        "--hostemu-url",
        metavar="URL",
        default=None,
        help="a running hostemu (e.g. a CI service container) whose namespaces the hostemu fixture uses; "
        "default $HOSTEMU_URL, else the session starts one",
    )
    group.addoption(
        "--hostemu-control-token",
        metavar="TOKEN",
        default=None,
        help="the control token of --hostemu-url's hostemu (default $HOSTEMU_CONTROL_TOKEN)",
    )
    group.addoption(
        "--hostemu-coverage-min",
        metavar="PCT",
        type=float,
        default=None,
        help="fail the session when the coverage of the tests' hostemu worlds, added up, is under PCT percent",
    )
    group.addoption(
        "--hostemu-only",
        metavar="FILE",
        default=None,
        help="run only the tests whose node ids FILE lists, one a line (hostemu mutate narrows its runs with it); "
        "the others are deselected",
    )
    group.addoption(
        "--hostemu-outcomes",
        metavar="FILE",
        default=None,
        help="append each test phase's outcome to FILE as it ends, a JSON line (hostemu mutate reads it when a run "
        "is stopped before pytest writes its JUnit report)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "hostemu(scenario=None, clock=None, seed=None, clock_start=None, fixtures=None, scenarios=None): "
        "the options of the test's hostemu world (see docs/python.md)",
    )
    config.stash[_state_key] = _State(config.getoption("hostemu_coverage_min"))
    _mutant.set_plugin()


def pytest_collection_modifyitems(config: pytest.Config, items: List[pytest.Item]) -> None:
    """--hostemu-only FILE: the listed node ids run, the others are deselected (exact, where
    node ids as arguments are relative to the invocation directory and -k matches
    substrings)."""
    path = config.getoption("hostemu_only")
    if not path:
        return
    try:
        with open(path, encoding="utf-8") as f:
            wanted = {line.rstrip("\r\n") for line in f if line.strip()}
    except OSError as err:
        raise pytest.UsageError(f"--hostemu-only: {err}") from None
    keep = [i for i in items if i.nodeid in wanted]
    gone = [i for i in items if i.nodeid not in wanted]
    if gone:
        config.hook.pytest_deselected(items=gone)
        items[:] = keep


@_hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: Optional[pytest.Item]) -> Generator[None, None, None]:
    """The running test, setup to teardown, for the worlds made meanwhile (hostemu mutate)."""
    if _mutant.active():
        item.user_properties.append((NODEID_PROPERTY, item.nodeid))
    prev = _mutant.set_current(item.nodeid)
    try:
        yield
    finally:
        _mutant.set_current(prev)


@_hookimpl(hookwrapper=True)
def pytest_fixture_setup(fixturedef: Any, request: pytest.FixtureRequest) -> Generator[None, None, None]:
    """A world a fixture of a wider scope than the function makes (a session's, a
    module's) belongs to no one test: it is made while no test is recorded."""
    if getattr(fixturedef, "scope", "function") == "function":
        yield
        return
    prev = _mutant.set_current(None)
    try:
        yield
    finally:
        _mutant.set_current(prev)


def _url(config: pytest.Config) -> str:
    return str(config.getoption("hostemu_url") or os.environ.get("HOSTEMU_URL") or "")


def _control_token(config: pytest.Config) -> Optional[str]:
    return config.getoption("hostemu_control_token") or os.environ.get("HOSTEMU_CONTROL_TOKEN") or None


@pytest.fixture(scope="session")
def hostemu_url(pytestconfig: pytest.Config) -> Generator[str, None, None]:
    """The base URL of the hostemu the session's worlds live in: --hostemu-url or
    HOSTEMU_URL, else one this session starts (and stops at its end)."""
    url = _url(pytestconfig)
    if url:
        yield url
        return
    with _mutant.outside():  # the session's server: its default namespace is no test's world
        emu = testkit.start()
    try:
        yield emu.url
    finally:
        emu.close()


def _marker_options(item: pytest.Item) -> Dict[str, Any]:
    """The marker's keywords, the closest marker's winning per key."""
    out: Dict[str, Any] = {}
    for m in item.iter_markers("hostemu"):
        if m.args:
            pytest.fail(f"@pytest.mark.hostemu takes keywords only ({', '.join(_MARKER_KEYS)}), got {m.args!r}", pytrace=False)
        for k, v in m.kwargs.items():
            if k not in _MARKER_KEYS:
                close = difflib.get_close_matches(k, _MARKER_KEYS, n=1)
                hint = f' (did you mean "{close[0]}"?)' if close else ""
                pytest.fail(f"@pytest.mark.hostemu: unknown option {k!r}{hint}; known: {', '.join(_MARKER_KEYS)}", pytrace=False)
            out.setdefault(k, v)
    return out


@pytest.fixture
def hostemu(request: pytest.FixtureRequest, hostemu_url: str) -> Generator[testkit.Emulator, None, None]:
    """A world of this test's own (a namespace): ``hostemu.url``, ``hostemu.tokens``,
    ``hostemu.advance()``, ``hostemu.await_()``, ``hostemu.faults``… (an
    :class:`hostemu.testkit.Emulator`). Deleted at the test's end; its bundle is saved
    first when the test failed."""
    item = request.node
    state = request.config.stash[_state_key]
    emu = testkit.connect(hostemu_url, control_token=_control_token(request.config), **_marker_options(item))
    try:
        yield emu
    finally:
        try:
            failure = item.stash.get(_failure_key, None)
            # Under hostemu mutate a failure is what a mutant is for: no bundles.
            if failure is not None and not _mutant.active():
                _save_bundle(item, emu, failure)
            if state.coverage_min is not None:
                state.add_coverage(emu.coverage())
        finally:
            emu.close()


def _save_bundle(item: pytest.Item, emu: testkit.Emulator, failure: str) -> None:
    try:
        path = emu.save_bundle(item.nodeid, failure=failure[:_FAILURE_MAX])
    except (OSError, testkit.HostemuError) as err:
        # The test failed already; a bundle that cannot be had is said, not a second error.
        item.stash[_bundle_key] = f"{item.nodeid}: this test's world could not be saved: {err}"
        return
    lines = [f"{item.nodeid}: this test's world is saved in {path}; open it where it stood with:", f"    hostemu replay {shlex.quote(path)}"]
    if not emu.bundle_has_failure:
        lines.append("    (this hostemu takes no failure message: POST /_emulator/bundle is missing, so the bundle has no failure.txt)")
    item.stash[_bundle_key] = "\n".join(lines)


@_hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, None]:
    outcome = yield
    rep: pytest.TestReport = outcome.get_result()
    if rep.when in ("setup", "call") and rep.failed and _failure_key not in item.stash:
        # What failed, for the bundle's failure.txt: the test, the exception's own line
        # (the assertion, as pytest rewrote it), then pytest's whole report of it.
        message = call.excinfo.exconly() if call.excinfo is not None else ""
        item.stash[_failure_key] = f"{item.nodeid} failed ({rep.when})\n\n{message}\n\n{rep.longreprtext}\n"
    if rep.when == "teardown" and _bundle_key in item.stash:
        # Sections travel with the report (to the xdist controller too): the summary
        # prints them.
        rep.sections.append(("hostemu failure bundle", item.stash[_bundle_key]))


# _OUTCOME_MAX bounds the failure text of one line of --hostemu-outcomes.
_OUTCOME_MAX = 8 * 1024


def _write_outcome(report: pytest.TestReport) -> None:
    """--hostemu-outcomes: the phase's outcome as a JSON line, flushed at once (the run may
    be killed at any moment); written by the process that reports (xdist's controller,
    which receives every worker's reports), never by a worker."""
    config = _config
    if config is None or _is_worker(config):
        return
    path = config.getoption("hostemu_outcomes")
    if not path:
        return
    line: Dict[str, Any] = {"nodeid": report.nodeid, "when": report.when, "outcome": report.outcome}
    if report.failed:
        line["text"] = report.longreprtext[-_OUTCOME_MAX:]
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(line) + "\n")


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    _write_outcome(report)
    if report.when != "teardown":
        return
    for name, text in report.sections:
        if name == "hostemu failure bundle":
            _session_state().bundles.append(text)


_config: Optional[pytest.Config] = None


def _session_state() -> _State:
    assert _config is not None
    return _config.stash[_state_key]


@_hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    global _config
    _config = session.config


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


@_hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    """pytest-xdist: a worker's coverage joins the controller's."""
    out = getattr(node, "workeroutput", None) or {}
    raw = out.get("hostemu_coverage")
    if raw:
        data = json.loads(raw)
        _session_state().add_coverage(data["coverage"], data["worlds"])


def pytest_sessionfinish(session: pytest.Session) -> None:
    config = session.config
    state = config.stash[_state_key]
    if _is_worker(config) and state.coverage_min is not None:
        config.workeroutput["hostemu_coverage"] = json.dumps({"coverage": state.coverage, "worlds": state.worlds})  # type: ignore[attr-defined]


@_hookimpl(hookwrapper=True)
def pytest_runtestloop(session: pytest.Session) -> Generator[None, None, None]:
    yield
    config = session.config
    state = config.stash[_state_key]
    if state.coverage_min is None or _is_worker(config):
        return
    c = state.coverage
    if c is None:
        state.coverage_message = f"hostemu coverage: no test used the hostemu fixture; the minimum is {state.coverage_min:g}%: FAIL"
        session.testsfailed += 1
        return
    t = c["totals"]
    figures = ", ".join(f"{k} {t[k]['seen']}/{t[k]['total']}" for k in ("operations", "responses", "transitions"))  # type: ignore[literal-required]
    verdict = "ok" if t["percent"] >= state.coverage_min else "FAIL"
    state.coverage_message = (
        f"hostemu coverage of {state.worlds} test worlds: {t['percent']:g}% ({figures}); minimum {state.coverage_min:g}%: {verdict}"
    )
    if verdict == "FAIL":
        session.testsfailed += 1


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    state = config.stash[_state_key]
    if state.bundles:
        terminalreporter.write_sep("-", "hostemu failure bundles")
        for text in state.bundles:
            terminalreporter.write_line(text)
    if state.coverage_message:
        terminalreporter.write_sep("-", "hostemu coverage")
        terminalreporter.write_line(state.coverage_message)
