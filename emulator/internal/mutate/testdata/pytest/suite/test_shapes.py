"""The shapes of tests whose JUnit entries runner_pytest.go reads (regenerate the
junit-*.xml beside this directory with gen.sh)."""

import pytest


def test_plain():
    print("plain says hi")


def test_fails():
    assert 1 == 2, "one is not two"


@pytest.mark.parametrize("v", ["a.b", "x::y", "sp ace"])
def test_param(v):
    assert v != "x::y"


class TestOuter:
    def test_method(self):
        pass

    class TestInner:
        def test_deep(self):
            pass


@pytest.fixture
def broken_setup():
    raise RuntimeError("setup breaks")


def test_setup_error(broken_setup):
    pass


@pytest.fixture
def broken_teardown():
    yield
    raise RuntimeError("teardown breaks")


def test_call_and_teardown_fail(broken_teardown):
    assert False, "call fails too"


def test_teardown_only_fails(broken_teardown):
    pass


@pytest.mark.skip(reason="not today")
def test_skipped():
    pass


@pytest.mark.xfail(reason="known")
def test_xfail():
    assert False


@pytest.mark.xfail(reason="strict", strict=True)
def test_xpass_strict():
    pass
