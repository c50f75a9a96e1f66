"""Under a mutant, one test hangs and one finishes: the run goes over mutate's
--timeout, and the finished test's result still counts (python/mutate_test.go)."""

import time

from client import Client


def test_retries(hostemu):
    c = Client(hostemu.url, hostemu.tokens["read"])
    for _ in range(100):
        try:
            c._call("GET", "/projects")
            return
        except Exception:
            time.sleep(0.01)  # the mutant fires once: the retry passes
    raise AssertionError("no answer in 100 tries")


def test_hangs_on_error(hostemu):
    c = Client(hostemu.url, hostemu.tokens["read"])
    try:
        c._call("GET", "/projects")
    except Exception:
        time.sleep(3600)  # waits for what never comes, as a poll without a deadline
