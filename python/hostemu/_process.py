"""The process of hostemu.testkit.start(): spawned so that it never outlives this one,
its JSON log read until it listens (and drained after), stopped cleanly.

The lifetime rule (docs/python.md, "The binary's lifetime"): the child's stdin is a pipe
only this process holds, and HOSTEMU_WATCH_STDIN=1 makes the binary exit at EOF on it,
which the kernel delivers when this process dies, even by SIGKILL; on Linux the child
also asks for SIGTERM at its parent's death (PR_SET_PDEATHSIG).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from typing import IO, Any, Callable, Dict, List, Mapping, Optional, Union

# STOP_TIMEOUT is how long close() lets the binary shut down before killing it.
STOP_TIMEOUT = 6.0

#: On Linux, spawn() also asks the kernel to SIGTERM the child when the thread that
#: started it dies (PR_SET_PDEATHSIG), besides the stdin pipe. Tests of the pipe alone
#: turn it off.
PDEATHSIG = True


def spawn(argv: List[str], env: Optional[Mapping[str, str]]) -> "subprocess.Popen[bytes]":
    """Starts the binary: stdin a pipe held here, stdout discarded (the banner), stderr
    (the JSON log) a pipe for wait_listening."""
    kw: Dict[str, Any] = {}
    if sys.platform == "win32":
        kw["creationflags"] = getattr(subprocess, "CREATE_NO_WINDOW", 0)
    else:
        kw["preexec_fn"] = preexec()
    try:
        return subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=child_env(env), **kw)
    except OSError as err:
        raise OSError(f"hostemu: start(): cannot run {argv[0]}: {err}") from err


def child_env(extra: Optional[Mapping[str, str]]) -> Dict[str, str]:
    """This process's environment without HOSTEMU_* variables, which would shape the
    emulator behind the options' back, plus extra, plus HOSTEMU_WATCH_STDIN=1: the
    binary exits at EOF on its stdin, which is when this process is gone."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("HOSTEMU_")}
    env.update(extra or {})
    env["HOSTEMU_WATCH_STDIN"] = "1"
    return env


def preexec() -> Optional[Callable[[], None]]:
    """On Linux, started from the main thread: PR_SET_PDEATHSIG, so that the kernel
    sends the child SIGTERM when this process dies. (It fires when the *thread* that
    forked dies, so not from another thread: a worker thread's end would kill it.)"""
    if not PDEATHSIG or not sys.platform.startswith("linux") or threading.current_thread() is not threading.main_thread():
        return None
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        prctl = libc.prctl
    except (OSError, AttributeError):
        return None
    parent = os.getpid()

    def set_pdeathsig() -> None:
        prctl(1, signal.SIGTERM, 0, 0, 0)  # PR_SET_PDEATHSIG
        if os.getppid() != parent:  # the parent died before the call: nobody will signal
            os._exit(1)

    return set_pdeathsig


def wait_listening(p: "subprocess.Popen[bytes]", bin_path: str, log: Union[bool, Callable[[str], None]], limit: float) -> Dict[str, Any]:
    """Reads the binary's JSON log until its "listening" record, which names the
    addresses it bound, and keeps draining it afterwards (a full pipe would stall the
    binary); raises with the log's tail if the binary stops or never listens."""
    sink: Optional[Callable[[str], None]]
    if callable(log):
        sink = log
    elif log:
        sink = lambda line: print(line, file=sys.stderr)  # noqa: E731
    else:
        sink = None
    found: Dict[str, Any] = {}
    listening = threading.Event()
    tail: List[str] = []

    def read() -> None:
        assert p.stderr is not None
        with p.stderr:  # closed here, at EOF (the binary gone): never under this loop
            _read_lines(p.stderr)

    def _read_lines(stream: IO[bytes]) -> None:
        for raw in stream:
            line = raw.decode("utf-8", "replace").rstrip("\n")
            if sink is not None:
                try:
                    sink(line)
                except Exception:
                    pass
            if listening.is_set():
                continue
            tail.append(line)
            del tail[:-40]
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            if isinstance(rec, dict) and rec.get("msg") == "listening" and isinstance(rec.get("url"), str):
                found.update(rec)
                listening.set()

    threading.Thread(target=read, name=f"hostemu-log-{p.pid}", daemon=True).start()
    deadline = time.monotonic() + limit
    while not listening.wait(0.02):
        code = p.poll()
        if code is not None:
            listening.wait(0.2)  # the reader may still hold the last lines
            if listening.is_set():
                break
            raise RuntimeError(f"hostemu: start(): {bin_path} stopped (exit code {code}) before listening" + _tail(tail))
        if time.monotonic() > deadline:
            raise RuntimeError(f"hostemu: start(): {bin_path} did not listen within {limit:g} s" + _tail(tail))
    return found


def _tail(lines: List[str]) -> str:
    return ("\n" + "\n".join(lines)) if lines else ""


def stop(p: "subprocess.Popen[bytes]") -> None:
    """Stops a started hostemu: EOF on its stdin and SIGTERM (a clean shutdown), then
    SIGKILL if it has not gone within STOP_TIMEOUT."""
    if p.poll() is None:
        try:
            p.terminate()
        except OSError:
            pass
    if p.stdin is not None:
        try:
            p.stdin.close()
        except OSError:
            pass
    try:
        p.wait(STOP_TIMEOUT)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
