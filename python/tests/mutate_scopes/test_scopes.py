"""Under hostemu mutate, a world made while a fixture of a wider scope than the
function is set up belongs to no one test: its hello names none (python/mutate_test.go)."""

import pytest

from hostemu import testkit


@pytest.fixture(scope="module")
def module_world(hostemu_url):
    with testkit.connect(hostemu_url) as emu:
        yield emu


def test_first(module_world, hostemu):
    # the module's world is set up during this test's setup, yet is not this test's
    assert module_world.now() and hostemu.now()


def test_second(module_world):
    assert module_world.now()
