"""Coverage reports added up, as hostemu's own merge (emulator/internal/coverage, Merge)
adds them: the counts of the same operation, answer, lifecycle edge and fault action are
summed and the totals computed again. The pytest plugin merges the coverage of every
test's world (a namespace each, deleted at the test's end) into the session's."""

import math
from typing import Any, Dict, List, Optional

from ._types import Coverage, CoverageTotal


def _percent(seen: int, total: int) -> float:
    if total == 0:
        return 100.0
    return math.floor(seen * 1000 / total) / 10  # one decimal, never rounded up to a pass


def _tally(seen: int, total: int) -> CoverageTotal:
    return {"seen": seen, "total": total, "percent": _percent(seen, total)}


def merge_coverage(*reports: Optional[Coverage]) -> Coverage:
    """The sum of coverage reports (None ones skipped), with its totals computed again.
    The reports need not come from one hostemu version: an operation or an answer only
    one of them lists is kept as it is."""
    ops: List[Dict[str, Any]] = []
    trans: List[Dict[str, Any]] = []
    faults: List[Dict[str, Any]] = []
    op_at: Dict[str, int] = {}
    tr_at: Dict[str, int] = {}
    f_at: Dict[str, int] = {}
    other = 0
    for r in reports:
        if r is None:
            continue
        other += int(r.get("other_undocumented", 0) or 0)
        for o in r["operations"]:
            k = o["method"] + " " + o["path"]
            i = op_at.get(k)
            if i is None:
                i = op_at[k] = len(ops)
                ops.append({"method": o["method"], "path": o["path"], "seen": 0, "responses": []})
            dst = ops[i]
            dst["seen"] += o["seen"]
            if o.get("ignored") and not dst.get("ignored"):
                dst["ignored"] = o["ignored"]
            for a in o["responses"]:
                undoc = bool(a.get("undocumented", False))
                for b in dst["responses"]:
                    if b["status"] == a["status"] and (b["code"] or "") == (a["code"] or "") and bool(b.get("undocumented", False)) == undoc:
                        b["seen"] += a["seen"]
                        if a.get("ignored") and not b.get("ignored"):
                            b["ignored"] = a["ignored"]
                        break
                else:
                    dst["responses"].append(dict(a))
        for t in r["transitions"]:
            k = " ".join((t["resource"], t["from"], t["to"], t.get("via", "")))
            i = tr_at.get(k)
            if i is None:
                tr_at[k] = len(trans)
                trans.append(dict(t))
            else:
                trans[i]["seen"] += t["seen"]
                if t.get("ignored") and not trans[i].get("ignored"):
                    trans[i]["ignored"] = t["ignored"]
        for f in r["faults"]:
            i = f_at.get(f["action"])
            if i is None:
                f_at[f["action"]] = len(faults)
                faults.append(dict(f))
            else:
                faults[i]["seen"] += f["seen"]
    # an undocumented answer is not counted, nor an ignored row (counted in "ignored")
    n_ops = n_ops_seen = n_resp = n_resp_seen = n_tr = n_tr_seen = n_ignored = 0
    for op in ops:
        if op.get("ignored"):
            n_ignored += 1
        else:
            n_ops += 1
            n_ops_seen += op["seen"] > 0
        for resp in op["responses"]:
            if resp.get("undocumented"):
                continue
            if resp.get("ignored"):
                n_ignored += 1
                continue
            n_resp += 1
            n_resp_seen += resp["seen"] > 0
    for tr in trans:
        if tr.get("ignored"):
            n_ignored += 1
            continue
        n_tr += 1
        n_tr_seen += tr["seen"] > 0
    out: Dict[str, Any] = {
        "operations": ops,
        "transitions": trans,
        "faults": faults,
        "totals": {
            "operations": _tally(n_ops_seen, n_ops),
            "responses": _tally(n_resp_seen, n_resp),
            "transitions": _tally(n_tr_seen, n_tr),
            "percent": _percent(n_ops_seen + n_resp_seen + n_tr_seen, n_ops + n_resp + n_tr),
        },
    }
    if n_ignored:
        out["totals"]["ignored"] = n_ignored
    if other:
        out["other_undocumented"] = other
    return out  # type: ignore[return-value]
