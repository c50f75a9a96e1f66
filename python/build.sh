#!/usr/bin/env bash
# Builds hostemu's Python wheels, the way ruff and uv ship a native binary: one wheel per
# platform holding its static binary, and a pure-Python fallback wheel without one.
#
#   python/build.sh OUT_DIR [PLATFORM...|all]    PLATFORM: linux-x64 linux-arm64 darwin-x64
#                                                darwin-arm64 win32-x64 (npm's names), or
#                                                all (default: this machine's)
#
# Writes into OUT_DIR hostemu-VERSION-py3-none-TAGS.whl per platform (TAGS: the
# platform tags pip matches, e.g. manylinux_2_17_x86_64.manylinux2014_x86_64.
# musllinux_1_1_x86_64) and hostemu-VERSION-py3-none-any.whl. `pip install --no-index
# --find-links OUT_DIR hostemu` installs the one for this machine, offline.
#
# The binaries are the npm packages' (cmd/hostemu/binaries.sh builds both); with
# HOSTEMU_BINARIES=DIR, an earlier cmd/hostemu/binaries.sh DIR run's binaries are
# packed instead of compiling them again. VERSION is hostemu's (binaries.sh: the tag, or
# git describe) spelled for PEP 440 (python/wheel.py: 1.2.3, 1.2.3rc1, 1.2.3.devN+gSHA).
# The wheels are reproducible: every timestamp is SOURCE_DATE_EPOCH, by default the
# commit's time. Needs python3 (the standard library) and, without HOSTEMU_BINARIES, Go.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)

[ $# -ge 1 ] || { echo "usage: python/build.sh OUT_DIR [PLATFORM...|all]" >&2; exit 2; }
mkdir -p "$1"
out=$(cd "$1" && pwd)
shift
platforms=("$@")
[ ${#platforms[@]} -gt 0 ] && [ "${platforms[0]}" = all ] && platforms=(linux-x64 linux-arm64 darwin-x64 darwin-arm64 win32-x64)

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
bins=${HOSTEMU_BINARIES:-}
if [ -z "$bins" ]; then
  bins=$stage/binaries
  "$root/cmd/hostemu/binaries.sh" "$bins" "${platforms[@]}"
fi
if [ ${#platforms[@]} -eq 0 ]; then # this machine's: the one binaries.sh built
  platforms=()
  for d in "$bins"/*/; do platforms+=("$(basename "$d")"); done
  [ ${#platforms[@]} -eq 1 ] || { echo "python/build.sh: name the platforms of HOSTEMU_BINARIES=$bins" >&2; exit 2; }
fi
version=$(cat "$bins/VERSION")
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git -C "$root" log -1 --format=%ct 2>/dev/null || echo 315532800)}
py=${PYTHON:-python3}

echo "hostemu wheels $version -> $out"
for p in "${platforms[@]}"; do
  bin=$bins/$p/hostemu
  [ "$p" = win32-x64 ] && bin=$bin.exe
  [ -f "$bin" ] || { echo "python/build.sh: no binary $bin (HOSTEMU_BINARIES=$bins lacks $p)" >&2; exit 2; }
  "$py" "$here/wheel.py" "$out" "$version" "$p" "$bin" >/dev/null
done
"$py" "$here/wheel.py" "$out" "$version" any >/dev/null
ls -l "$out"/*.whl
