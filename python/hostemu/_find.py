"""Which hostemu binary runs here, the way ruff's ``find_ruff_bin`` finds its own.

Order: ``HOSTEMU_BINARY``; the binary this package's platform wheel installed in the
scripts directory of its environment (or of the user scheme, or ``bin/`` beside the
package for ``pip install --target``); else a ``hostemu`` on ``PATH`` that is not this
package's own launcher. A clear :class:`BinaryNotFound` says what to do otherwise.
"""

import os
import shutil
import sys
import sysconfig
from typing import List, Optional

from . import _build

#: The container image, the way out where no wheel fits.
IMAGE = "ghcr.io/hostemu/hostemu"


class BinaryNotFound(FileNotFoundError):
    """No hostemu binary: the message says where it looked and what to do."""


def _exe() -> str:
    return "hostemu" + (sysconfig.get_config_var("EXE") or (".exe" if os.name == "nt" else ""))


def _user_scheme() -> str:
    if sys.version_info >= (3, 10):
        return sysconfig.get_preferred_scheme("user")
    if os.name == "nt":
        return "nt_user"
    if sys.platform == "darwin" and getattr(sys, "_framework", None):
        return "osx_framework_user"
    return "posix_user"


def _scripts_dirs() -> List[str]:
    """The directories pip puts a wheel's scripts in for this interpreter."""
    dirs = [sysconfig.get_path("scripts")]
    try:
        dirs.append(sysconfig.get_path("scripts", scheme=_user_scheme()))
    except KeyError:
        pass
    # pip install --target DIR puts the scripts in DIR/bin, beside the package.
    dirs.append(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bin"))
    return dirs


def _same_dir(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.normcase(os.path.abspath(a)) == os.path.normcase(os.path.abspath(b))


def _on_path(skip: List[str]) -> Optional[str]:
    """A hostemu on PATH outside skip (this package's scripts directories, where the
    fallback wheel's own launcher lives: finding it would run ourselves)."""
    for d in os.get_exec_path():
        if not d or any(_same_dir(d, s) for s in skip):
            continue
        found = shutil.which("hostemu", path=d)
        if found:
            return found
    return None


def find_hostemu_bin() -> str:
    """The path of the hostemu binary to run; raises BinaryNotFound saying why not."""
    env = os.environ.get("HOSTEMU_BINARY", "")
    if env:
        if not os.path.isfile(env):
            raise BinaryNotFound(f"hostemu: HOSTEMU_BINARY names {env}, which is not a file")
        return env
    scripts = _scripts_dirs()
    if _build.BUNDLED:
        for d in scripts:
            p = os.path.join(d, _exe())
            if os.path.isfile(p):
                return p
    found = _on_path(scripts)
    if found:
        return found
    if _build.BUNDLED:
        why = (
            "hostemu: the hostemu wheel for this platform is installed, but its binary is "
            f"not in {' or '.join(scripts)}; reinstall it (pip install --force-reinstall hostemu)"
        )
    else:
        why = (
            "hostemu: this is the hostemu wheel without a binary (py3-none-any: pip found no "
            f"wheel for this platform, {sys.platform} {_machine()}; the wheels cover Linux "
            "x86-64 and arm64, macOS x86-64 and arm64, Windows x86-64), and there is no "
            "hostemu on PATH."
        )
    raise BinaryNotFound(
        why + "\nSet HOSTEMU_BINARY to a hostemu binary (go build ./cmd/hostemu builds one), "
        "put one on PATH, or run hostemu in its container:\n"
        f"  docker run --rm -p 4700:4700 -p 4743:4743 {IMAGE}\n"
        "and give hostemu.testkit.connect() (or pytest --hostemu-url) its URL, http://127.0.0.1:4700."
    )


def _machine() -> str:
    import platform

    return platform.machine() or "unknown"
