"""Checked with mypy --strict by python_test.go (not run): the testkit's types as a
user meets them."""

from typing import List

from hostemu.testkit import AwaitResult, Coverage, Emulator, FaultSpec, JournalEntry, NearMiss, RequestFilter, connect, start


def workflow(emu: Emulator) -> float:
    spec: FaultSpec = {"match": {"method": "POST", "path": "/v1/deployments"}, "status": 503, "times": 1, "for": "5m"}
    fid: str = emu.faults.add(spec)
    hits: int = emu.faults.hits(fid)
    missed: List[NearMiss] = emu.faults.near_misses(fid) + emu.request_near_misses(method="POST", path="/v1/deployment")
    flt: RequestFilter = {"method": "POST", "status": 503}
    entries: List[JournalEntry] = emu.requests(flt)
    more: List[JournalEntry] = emu.requests(path="/v1/*", limit=5)
    res: AwaitResult = emu.await_({"requests": {"method": "POST"}, "count": 1, "timeout": "1m"})
    now: str = res["now"]
    cov: Coverage = emu.coverage()
    deploy: str = emu.tokens["deploy"]
    assert now and deploy and hits >= 0 and len(missed) >= 0 and len(entries) <= len(more) + 1
    return cov["totals"]["percent"]


def worlds() -> None:
    with start(scenario="instant", seed=2) as emu, connect(emu.url, clock="manual") as ns:
        for e in (emu, ns):
            e.advance("1m")
