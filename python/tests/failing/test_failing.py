"""One passing and one failing test: the failing one must leave exactly one bundle,
with its assertion message in failure.txt."""


def test_passes(hostemu) -> None:
    assert hostemu.now()


def test_fails(hostemu) -> None:
    hostemu.faults.add({"match": {"path": "/v1/projects"}, "status": 500, "times": 1})
    wanted = "the deployment the test expected"
    assert wanted == "what the emulator said", "hostemu-failure-marker"
