"""Nine workflows, each in a world of its own (the hostemu fixture's namespace), so
that they may run in parallel (pytest -n) against one hostemu; and the testkit against
an older hostemu (a namespace of its own through a proxy)."""

import pytest

from hostemu import testkit
from hostemu.testkit import Emulator, HostemuError


def test_deploy_and_await(hostemu: Emulator, client) -> None:
    d = client.deploy()
    assert d["status"] == "queued"
    res = hostemu.await_(deployment=d["id"], status="ready")
    assert res["status"] == "ready"
    status, got = client.call("GET", "/deployments/" + d["id"])
    assert (status, got["status"]) == (200, "ready")


def test_fault_then_retry(hostemu: Emulator, client) -> None:
    fid = hostemu.faults.add({"match": {"method": "POST", "path": "/v1/deployments"}, "status": 503, "times": 1})
    status, body = client.call("POST", "/deployments", {"project_id": "prj_demo", "files": {}})
    assert status == 503 and body["error"]["code"] == "service_unavailable"
    client.deploy()  # the retry passes: the fault fired its one time
    assert hostemu.faults.hits(fid) == 1
    assert [f["id"] for f in hostemu.faults.list()] == [fid]
    hostemu.faults.remove(fid)
    assert hostemu.faults.list() == []
    with pytest.raises(HostemuError) as e:
        hostemu.faults.remove(fid)
    assert e.value.code == "fault_not_found"


@pytest.mark.hostemu(scenario="failing-builds")
def test_scenario_marker(hostemu: Emulator, client) -> None:
    d = client.deploy()
    res = hostemu.await_({"deployment": d["id"], "status": "error"})
    _, got = client.call("GET", "/deployments/" + d["id"])
    assert got["error"]["code"] == "build_failed", res


@pytest.mark.hostemu(clock_start="2030-06-01T12:00:00Z")
def test_clock(hostemu: Emulator) -> None:
    assert hostemu.now().startswith("2030-06-01T12:00:00")
    assert hostemu.advance("90s").startswith("2030-06-01T12:01:30")
    assert hostemu.advance(30).startswith("2030-06-01T12:02:00")  # seconds


@pytest.mark.hostemu(clock="auto")
def test_auto_clock(hostemu: Emulator, client) -> None:
    # an app that polls with sleeps, no advance: the auto clock jumps to each step
    import time

    d = client.deploy()
    for _ in range(600):
        _, got = client.call("GET", "/deployments/" + d["id"])
        if got["status"] == "ready":
            break
        time.sleep(0.05)  # longer than --auto-idle (20 ms): the world goes idle between polls
    assert got["status"] == "ready"
    # the clock jumped to the transitions' instants: 1 s queued, 5 s building
    assert got["timings"]["ready_at"].startswith("2026-01-01T00:00:06"), got


def test_journal(hostemu: Emulator, client) -> None:
    client.deploy()
    client.call("GET", "/projects")
    posts = hostemu.requests(method="POST", path="/v1/deployments")
    assert [(r["method"], r["path"], r["status"]) for r in posts] == [("POST", "/v1/deployments", 201)]
    assert len(hostemu.requests({"path": "/v1/*"})) == 2
    with pytest.raises(HostemuError) as e:
        hostemu.requests(metod="POST")
    assert e.value.status == 400 and '"method"' in e.value.message
    # what almost matched: an await that times out names it, typed and in its message
    with pytest.raises(HostemuError) as e:
        hostemu.await_(requests={"method": "DELETE", "path": "/v1/projects"}, timeout="10ms")
    assert e.value.code == "await_timeout"
    assert e.value.near_misses is not None and [n["differs"] for n in e.value.near_misses] == [{"method": "GET"}]
    assert 'differs in {"method":"GET"}' in e.value.message
    # a journal query that selects nothing, and a fault that never fired, say it too
    assert [n["differs"] for n in hostemu.request_near_misses(method="GET", path="/v1/project")] == [{"path": "/v1/projects"}]
    assert hostemu.request_near_misses({"method": "GET", "path": "/v1/projects"}) == []
    fid = hostemu.faults.add({"match": {"method": "DELETE", "path": "/v1/projects"}, "status": 503})
    assert [n["differs"] for n in hostemu.faults.near_misses(fid)] == [{"method": "GET"}]
    hostemu.faults.remove(fid)
    with pytest.raises(HostemuError) as e:
        hostemu.faults.near_misses(fid)
    assert e.value.code == "fault_not_found"
    # hits and near_misses fetch the one fault (GET /_emulator/faults/{id}), not the listing
    fired = hostemu.faults.add({"match": {"method": "GET", "path": "/v1/projects"}, "status": 503, "times": 1})
    assert hostemu.faults.hits(fired) == 0
    assert isinstance(hostemu.faults.near_misses(fired), list)  # no hits: its near misses, maybe none
    hostemu.reset()
    for ask in (hostemu.faults.hits, hostemu.faults.near_misses):
        with pytest.raises(HostemuError) as e:
            ask(fired)
        assert (e.value.status, e.value.code, e.value.method) == (404, "fault_not_found", "GET")
        assert e.value.path.endswith("/faults/" + fired)  # under its namespace, if any
    hostemu.clear_requests()
    assert hostemu.requests() == []


def test_coverage(hostemu: Emulator, client) -> None:
    client.deploy()
    cov = hostemu.coverage()
    op = next(o for o in cov["operations"] if (o["method"], o["path"]) == ("POST", "/v1/deployments"))
    assert op["seen"] == 1
    assert 0 < cov["totals"]["percent"] < 100
    assert testkit.merge_coverage(cov, cov)["totals"] == cov["totals"]
    # rows ignored stay out of the totals when reports are added up, as hostemu's own merge
    ign = hostemu.coverage(ignore="internal_error")
    assert ign["totals"]["ignored"] > 0
    assert testkit.merge_coverage(ign, ign)["totals"] == ign["totals"]


@pytest.mark.hostemu(seed=7)
def test_seeded_worlds_are_equal(hostemu: Emulator, hostemu_url: str) -> None:
    with testkit.connect(hostemu_url, seed=7) as twin:
        assert twin.namespace != hostemu.namespace
        assert twin.state()["projects"] == hostemu.state()["projects"]


def test_worlds_are_apart(hostemu: Emulator, client, hostemu_url: str) -> None:
    d = client.deploy()
    hostemu.use_scenario("instant")
    with testkit.connect(hostemu_url) as other:
        assert other.tokens["deploy"] != hostemu.tokens["deploy"]
        assert other.requests() == []
        assert all(x["id"] != d["id"] for x in other.state().get("deployments", []))
    hostemu.reset()
    assert hostemu.requests() == []


def test_fault_hits_on_an_older_hostemu(hostemu_url: str) -> None:
    """faults.hits and near_misses read the listing on a hostemu from before
    GET /_emulator/faults/{id}, which answers it 405 (the route had DELETE alone)."""
    import http.server
    import re
    import threading
    import urllib.error
    import urllib.request

    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))

    class Older(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def _relay(self) -> None:
            if self.command == "GET" and re.match(r"^/_emulator/(namespaces/[^/]+/)?faults/[^/?]+", self.path):
                body = b'{"error":{"code":"method_not_allowed","message":"GET is not allowed here"}}'
                self.send_response(405)
                self.send_header("Allow", "DELETE")
                self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                return
            n = int(self.headers.get("Content-Length") or 0)
            data = self.rfile.read(n) if n else None
            req = urllib.request.Request(hostemu_url + self.path, data=data, method=self.command)
            for k in ("Authorization", "Content-Type", "X-Hostemu-Control-Token"):
                if self.headers.get(k):
                    req.add_header(k, self.headers[k])
            try:
                res = opener.open(req, timeout=10)
                status, out, ctype = res.status, res.read(), res.headers.get("Content-Type", "")
            except urllib.error.HTTPError as e:
                status, out, ctype = e.code, e.read(), e.headers.get("Content-Type", "")
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)

        do_GET = do_POST = do_PUT = do_DELETE = _relay

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Older)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        with testkit.connect(f"http://127.0.0.1:{srv.server_address[1]}") as emu:
            missed = emu.faults.add({"match": {"method": "DELETE", "path": "/v1/projects"}, "status": 503})
            fired = emu.faults.add({"match": {"method": "GET", "path": "/v1/projects"}, "status": 503})
            req = urllib.request.Request(emu.url + "/v1/projects", headers={"Authorization": "Bearer " + emu.tokens["read"]})
            with pytest.raises(urllib.error.HTTPError) as got:
                opener.open(req, timeout=10)
            assert got.value.code == 503
            assert emu.faults.hits(fired) == 1
            assert emu.faults.hits(missed) == 0
            assert [n["method"] for n in emu.faults.near_misses(missed)] == ["GET"]
            emu.faults.remove(missed)
            with pytest.raises(HostemuError) as e:
                emu.faults.hits(missed)
            assert (e.value.status, e.value.code) == (404, "fault_not_found")
    finally:
        srv.shutdown()
        srv.server_close()

