"""The sample client of hostemu mutate's pytest test (python/mutate_test.go): one
function swallows its errors, one lets them reach its caller. (test_client.py also has
a test of a world of its own process, testkit.start(), a test of a shared world, never
armed, and one without a world: the last two have no mutants.)"""

import json
import urllib.request
from typing import Any, Dict, Optional

# never a proxy of the environment: hostemu is on loopback
_opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))


class Client:
    def __init__(self, base_url: str, token: str) -> None:
        self.base = base_url + "/v1"
        self.token = token

    def _call(self, method: str, path: str, body: Optional[Dict[str, Any]] = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base + path, data=data, method=method)
        req.add_header("Authorization", "Bearer " + self.token)
        if data is not None:
            req.add_header("Content-Type", "application/json")
        with _opener.open(req, timeout=10) as res:
            return json.loads(res.read() or b"null")

    def project_count(self) -> int:
        """Swallows every error: a 503 or a reset connection reads as "no projects"."""
        try:
            return len(self._call("GET", "/projects")["projects"])
        except Exception:
            return 0

    def deploy(self, project: str) -> Dict[str, Any]:
        """Lets every error reach the caller."""
        d: Dict[str, Any] = self._call("POST", "/deployments", {"project_id": project, "files": {}})
        return d
