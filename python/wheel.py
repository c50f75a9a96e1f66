#!/usr/bin/env python3
"""Writes one hostemu wheel with the standard library alone (python/build.sh calls it).

    python3 python/wheel.py OUT_DIR VERSION PLATFORM [BINARY]

PLATFORM is one of PLATFORM_TAGS' keys (npm's names), or "any" for the pure-Python
fallback wheel, which has no binary. The wheel holds the package python/hostemu (its
_build.py written for this wheel), the binary as hostemu-VERSION.data/scripts/hostemu
(ruff's and uv's layout: pip installs it into the environment's scripts directory, so
the `hostemu` command is the binary itself), and the .dist-info (METADATA, WHEEL,
entry_points.txt, RECORD).

Reproducible: the same inputs give the same bytes. Members are sorted (the .dist-info
last, RECORD last of all, as the wheel spec recommends), every timestamp is
SOURCE_DATE_EPOCH (python/build.sh sets it to the commit's time), modes are 0644 and
0755 for the binary, compression is deflate at level 6.
"""

import base64
import hashlib
import os
import re
import sys
import time
import zipfile
from typing import Dict, List, Tuple

# The wheels' platform tags, by npm's platform names (cmd/hostemu/binaries.sh). The
# binaries are static (CGO_ENABLED=0), so the Linux ones run on any glibc or musl: one
# wheel carries both tag families, as uv's do. macOS 11 is the oldest Go 1.23+ supports.
PLATFORM_TAGS: Dict[str, List[str]] = {
    "linux-x64": ["manylinux_2_17_x86_64", "manylinux2014_x86_64", "musllinux_1_1_x86_64"],
    "linux-arm64": ["manylinux_2_17_aarch64", "manylinux2014_aarch64", "musllinux_1_1_aarch64"],
    "darwin-x64": ["macosx_11_0_x86_64"],
    "darwin-arm64": ["macosx_11_0_arm64"],
    "win32-x64": ["win_amd64"],
    "any": ["any"],
}

SUMMARY = "hostemu: an emulator of a hosting service's REST API, its edge and a decryption API, with a testkit and a pytest plugin"

README = """\
# hostemu

A local emulator of a hosting service's REST API (deployments, promote and roll back,
custom domains, scoped tokens, rate limits), its edge, and an envelope-decryption API,
with a testkit and a pytest plugin for Python tests.

```sh
pip install hostemu
hostemu                        # serves on http://127.0.0.1:4700; prints URLs and tokens
python -m hostemu version
```

```python
def test_deploys(hostemu):     # the pytest fixture: a world of this test's own
    hostemu.faults.add({"match": {"method": "POST", "path": "/v1/deployments"}, "status": 503, "times": 1})
    # ... the code under test calls hostemu.url + "/v1" with hostemu.tokens["deploy"] ...
    assert hostemu.requests(method="POST", path="/v1/deployments")
```

The wheel for Linux (x86-64, arm64), macOS (x86-64, arm64) and Windows (x86-64)
holds the static hostemu binary. Elsewhere pip installs the wheel without one, which
runs `HOSTEMU_BINARY` or a `hostemu` on `PATH`; or run the container image
`ghcr.io/hostemu/hostemu` and give the plugin `--hostemu-url`.

Documentation: https://github.com/hostemu/hostemu/blob/main/docs/python.md
"""


def pep440(semver: str) -> str:
    """hostemu's semver (npm's) as a PEP 440 version: 1.2.3 stays, a prerelease
    -alpha.N/-beta.N/-rc.N becomes aN/bN/rcN, the builds between tags
    (-dev.N.gSHA[.dirty]) become .devN+gSHA[.dirty]."""
    m = re.fullmatch(r"(\d+\.\d+\.\d+)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?", semver)
    if not m:
        raise SystemExit(f"python/wheel.py: version {semver} is not semver")
    base, pre = m.group(1), m.group(2)
    if not pre:
        return base
    d = re.fullmatch(r"dev\.(\d+)(?:\.(g[0-9a-f]+(?:\.dirty)?))?", pre)
    if d:
        return f"{base}.dev{d.group(1)}" + (f"+{d.group(2)}" if d.group(2) else "")
    p = re.fullmatch(r"(alpha|a|beta|b|rc)\.?(\d+)", pre)
    if p:
        short = {"alpha": "a", "a": "a", "beta": "b", "b": "b", "rc": "rc"}[p.group(1)]
        return f"{base}{short}{p.group(2)}"
    raise SystemExit(f"python/wheel.py: the prerelease {pre!r} of {semver} has no PEP 440 spelling (use -alpha.N, -beta.N or -rc.N)")


def record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def main() -> None:
    if len(sys.argv) not in (4, 5):
        raise SystemExit("usage: python/wheel.py OUT_DIR VERSION PLATFORM [BINARY]")
    out_dir, semver, platform = sys.argv[1:4]
    binary = sys.argv[4] if len(sys.argv) == 5 else ""
    if platform not in PLATFORM_TAGS:
        raise SystemExit(f"python/wheel.py: unknown platform {platform} (known: {', '.join(PLATFORM_TAGS)})")
    if (platform == "any") != (binary == ""):
        raise SystemExit("python/wheel.py: a binary goes with a platform wheel, and only there")
    version = pep440(semver)
    bundled = platform != "any"
    tags = [f"py3-none-{p}" for p in PLATFORM_TAGS[platform]]
    here = os.path.dirname(os.path.abspath(__file__))
    epoch = int(os.environ.get("SOURCE_DATE_EPOCH", "315532800"))
    stamp = time.gmtime(max(epoch, 315532800))[:6]  # zip cannot say before 1980

    files: List[Tuple[str, bytes, int]] = []  # name, data, mode
    pkg = os.path.join(here, "hostemu")
    for name in sorted(os.listdir(pkg)):
        if name == "_build.py" or not (name.endswith(".py") or name == "py.typed"):
            continue
        with open(os.path.join(pkg, name), "rb") as f:
            files.append((f"hostemu/{name}", f.read(), 0o644))
    build = (
        "# Written by python/build.sh for this wheel.\n\n"
        f"#: The package's version (PEP 440), from hostemu's v{semver}.\n"
        f"VERSION = {version!r}\n"
        "#: Whether this wheel carries the hostemu binary in its scripts directory.\n"
        f"BUNDLED = {bundled!r}\n"
    )
    files.append(("hostemu/_build.py", build.encode(), 0o644))
    data_dir = f"hostemu-{version}.data"
    if bundled:
        exe = "hostemu.exe" if platform.startswith("win32") else "hostemu"
        with open(binary, "rb") as f:
            files.append((f"{data_dir}/scripts/{exe}", f.read(), 0o755))
    files.sort(key=lambda x: x[0])

    dist = f"hostemu-{version}.dist-info"
    metadata = "\n".join(
        [
            "Metadata-Version: 2.1",
            "Name: hostemu",
            f"Version: {version}",
            f"Summary: {SUMMARY}",
            "Home-page: https://github.com/hostemu/hostemu",
            "Project-URL: Documentation, https://github.com/hostemu/hostemu/blob/main/docs/python.md",
            "Project-URL: Source, https://github.com/hostemu/hostemu",
            "License: See the hostemu repository",
            "Keywords: emulator,testing,pytest,mock,hosting",
            "Classifier: Framework :: Pytest",
            "Classifier: Programming Language :: Python :: 3",
            "Classifier: Topic :: Software Development :: Testing",
            "Classifier: Typing :: Typed",
            "Requires-Python: >=3.9",
            "Description-Content-Type: text/markdown",
            "",
            README,
        ]
    )
    wheel = "\n".join(
        ["Wheel-Version: 1.0", "Generator: hostemu python/wheel.py", f"Root-Is-Purelib: {'false' if bundled else 'true'}"]
        + [f"Tag: {t}" for t in tags]
    ) + "\n"
    entry_points = "[pytest11]\nhostemu = hostemu.pytest_plugin\n"
    if not bundled:
        # The platform wheels' `hostemu` is the binary itself; this one's is a launcher.
        entry_points = "[console_scripts]\nhostemu = hostemu.__main__:main\n\n" + entry_points
    meta = [
        (f"{dist}/METADATA", metadata.encode(), 0o644),
        (f"{dist}/WHEEL", wheel.encode(), 0o644),
        (f"{dist}/entry_points.txt", entry_points.encode(), 0o644),
        (f"{dist}/top_level.txt", b"hostemu\n", 0o644),
    ]
    members = files + meta
    record = "".join(f"{n},{record_hash(d)},{len(d)}\n" for n, d, _ in members) + f"{dist}/RECORD,,\n"
    members.append((f"{dist}/RECORD", record.encode(), 0o644))

    name = f"hostemu-{version}-py3-none-{'.'.join(PLATFORM_TAGS[platform])}.whl"
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, name)
    tmp = path + ".tmp"
    with zipfile.ZipFile(tmp, "w") as z:
        for n, d, mode in members:
            info = zipfile.ZipInfo(n, date_time=stamp)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.create_system = 3  # Unix, so that the mode below is read
            info.external_attr = (0o100000 | mode) << 16
            z.writestr(info, d, compress_type=zipfile.ZIP_DEFLATED, compresslevel=6)
    os.replace(tmp, path)
    print(path)


if __name__ == "__main__":
    main()
