"""hostemu for Python: the emulator's binary, a testkit and a pytest plugin.

``pip install hostemu`` puts this platform's hostemu binary on ``PATH`` as ``hostemu``
(``python -m hostemu`` runs it too); :mod:`hostemu.testkit` starts or connects to one
from tests; the pytest plugin (:mod:`hostemu.pytest_plugin`, loaded by pytest through
its ``pytest11`` entry point) gives each test a world of its own through the ``hostemu``
fixture. See docs/python.md.
"""

from ._build import VERSION as __version__
from ._find import BinaryNotFound, find_hostemu_bin

__all__ = ["BinaryNotFound", "__version__", "find_hostemu_bin"]
