import os

import pytest

from client import Client
from hostemu import testkit


def test_project_count(hostemu):
    c = Client(hostemu.url, hostemu.tokens["read"])
    assert c.project_count() >= 0  # passes whatever the client swallowed


class TestDeploy:
    @pytest.mark.parametrize("project", ["prj_demo"])
    def test_deploy(self, hostemu, project):
        assert not os.environ.get("MUTATE_SAMPLE_FAIL"), "MUTATE_SAMPLE_FAIL is set"
        c = Client(hostemu.url, hostemu.tokens["deploy"])
        assert c.deploy(project)["status"] == "queued"


def test_no_world():
    assert 1 + 1 == 2  # no hostemu: no mutants, and nothing asked of the coordinator


def test_shared_world(hostemu_url):
    # the default namespace, shared by every test: never armed for one of them
    with testkit.connect(hostemu_url, shared=True) as emu:
        assert Client(emu.url, emu.tokens["read"]).project_count() >= 0


def test_started_world():
    # a hostemu process of the test's own: it takes part as the fixture's namespaces do
    with testkit.start() as emu:
        assert Client(emu.url, emu.tokens["deploy"]).deploy("prj_demo")["status"] == "queued"
