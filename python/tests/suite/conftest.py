"""A stand-in for the code under test: a small hosting-API client on urllib."""

import json
import urllib.error
import urllib.request
from typing import Any, Dict, Optional, Tuple, cast

import pytest

from hostemu.testkit import Emulator


class Client:
    def __init__(self, emu: Emulator, scope: str = "deploy") -> None:
        self.base = emu.url + "/v1"
        self.token = emu.tokens[scope]
        # never a proxy of the environment: hostemu is on loopback
        self.opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))

    def call(self, method: str, path: str, body: Optional[Dict[str, Any]] = None) -> Tuple[int, Any]:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base + path, data=data, method=method)
        req.add_header("Authorization", "Bearer " + self.token)
        if data is not None:
            req.add_header("Content-Type", "application/json")
        try:
            with self.opener.open(req, timeout=10) as res:
                return res.status, json.loads(res.read() or b"null")
        except urllib.error.HTTPError as err:
            return err.code, json.loads(err.read() or b"null")

    def deploy(self, project: str = "prj_demo", **extra: Any) -> Dict[str, Any]:
        status, d = self.call("POST", "/deployments", {"project_id": project, "files": {}, **extra})
        assert status == 201, d
        return cast(Dict[str, Any], d)


@pytest.fixture
def client(hostemu: Emulator) -> Client:
    return Client(hostemu)
