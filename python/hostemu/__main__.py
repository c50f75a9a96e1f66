"""``python -m hostemu`` (and the ``hostemu`` command of the fallback wheel): runs the
hostemu binary with this process's arguments.

On POSIX the binary replaces this process (``execv``), so signals reach it directly and
its exit code is the command's, with nothing in between to outlive. On Windows, which
has no exec, it runs as a child: Ctrl-C reaches the whole console group anyway, and the
child's exit code is returned.
"""

import os
import subprocess
import sys
from typing import List, Optional

from ._find import BinaryNotFound, find_hostemu_bin


def main(argv: Optional[List[str]] = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    try:
        binary = find_hostemu_bin()
    except BinaryNotFound as err:
        print(err, file=sys.stderr)
        return 1
    if sys.platform == "win32":
        try:
            return subprocess.call([binary, *args])
        except KeyboardInterrupt:
            return 130
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(binary, [binary, *args])
    return 1  # not reached: execv raises or does not return


if __name__ == "__main__":
    sys.exit(main())
