"""Started by python_test.go's SIGKILL test: start()s a hostemu, prints its pid, and
waits to be killed. With "pipe-only", PR_SET_PDEATHSIG is off, so that only the stdin
pipe (HOSTEMU_WATCH_STDIN) can end the child."""

import sys
import time

from hostemu import _process, testkit

if sys.argv[1:] == ["pipe-only"]:
    _process.PDEATHSIG = False
emu = testkit.start()
print(emu.pid, flush=True)
time.sleep(600)
