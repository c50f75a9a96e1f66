#!/usr/bin/env bash
# Builds hostemu's npm packages, the way esbuild ships a Go binary: the package hostemu
# (launcher, testkit, types) and one package per platform holding its static binary.
#
#   npm/build.sh OUT_DIR [PLATFORM...]     PLATFORM: linux-x64 linux-arm64 darwin-x64
#                                          darwin-arm64 win32-x64, or all (default: this
#                                          machine's, as Node names it)
#
# Writes one `npm pack` tarball per package into OUT_DIR: hostemu-VERSION.tgz and
# hostemu-PLATFORM-VERSION.tgz. `npm install OUT_DIR/*.tgz` installs them in any project,
# offline. Nothing is written into the source tree: the packages are staged in a
# temporary directory.
#
# VERSION is npm's, so it must be semver: cmd/hostemu/binaries.sh, which cross-compiles
# the binaries, says where it comes from ($HOSTEMU_VERSION, else `git describe`). The
# binary is stamped with v$VERSION and the commit, so `hostemu version` and
# `npm ls hostemu` agree. With HOSTEMU_BINARIES=DIR, the binaries (and VERSION) of an
# earlier cmd/hostemu/binaries.sh DIR run are packed instead of compiling them again
# (.ci/run builds them once for npm and Python).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)

[ $# -ge 1 ] || { echo "usage: npm/build.sh OUT_DIR [PLATFORM...|all]" >&2; exit 2; }
mkdir -p "$1"
out=$(cd "$1" && pwd)
shift

all=(linux-x64 linux-arm64 darwin-x64 darwin-arm64 win32-x64)
platforms=("$@")
if [ ${#platforms[@]} -eq 0 ]; then
  platforms=("$(node -p 'process.platform + "-" + process.arch')")
elif [ "${platforms[0]}" = all ]; then
  platforms=("${all[@]}")
fi

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
bins=${HOSTEMU_BINARIES:-}
if [ -z "$bins" ]; then
  bins=$stage/binaries
  "$root/cmd/hostemu/binaries.sh" "$bins" "${platforms[@]}"
fi
version=$(cat "$bins/VERSION")

goos_goarch() {
  case $1 in
    linux-x64) echo linux amd64 ;;
    linux-arm64) echo linux arm64 ;;
    darwin-x64) echo darwin amd64 ;;
    darwin-arm64) echo darwin arm64 ;;
    win32-x64) echo windows amd64 ;;
    *) echo "npm/build.sh: unknown platform $1 (known: ${all[*]})" >&2; return 2 ;;
  esac
}

echo "hostemu npm packages $version -> $out"
for p in "${platforms[@]}"; do
  read -r goos goarch < <(goos_goarch "$p") || exit 2
  os=${p%-*} cpu=${p#*-}
  dir=$stage/$p
  bin=bin/hostemu
  [ "$os" = win32 ] && bin=hostemu.exe
  mkdir -p "$dir/$(dirname "$bin")"
  src=$bins/$p/$(basename "$bin")
  [ -f "$src" ] || { echo "npm/build.sh: no binary $src (HOSTEMU_BINARIES=$bins lacks $p)" >&2; exit 2; }
  cp "$src" "$dir/$bin"
  cat >"$dir/package.json" <<JSON
{
  "name": "@hostemu/$p",
  "version": "$version",
  "description": "The hostemu binary for $os $cpu; installed by the hostemu package",
  "repository": { "type": "git", "url": "git+https://github.com/hostemu/hostemu.git", "directory": "npm" },
  "os": ["$os"],
  "cpu": ["$cpu"],
  "files": ["$bin"],
  "preferUnplugged": true
}
JSON
  printf '# @hostemu/%s\n\nThe hostemu binary for %s %s. Install [hostemu](https://www.npmjs.com/package/hostemu) instead: it depends on this package on this platform.\n' "$p" "$os" "$cpu" >"$dir/README.md"
  (cd "$dir" && npm pack --silent --pack-destination "$out" >/dev/null)
done

# The main package, its version and its optional dependencies' set to this one.
mkdir -p "$stage/hostemu"
cp -R "$here/hostemu/bin" "$here/hostemu/lib" "$here/hostemu/testkit" "$here/hostemu/openapi" \
  "$here/hostemu/README.md" "$stage/hostemu/"
node -e '
  const fs = require("fs");
  const [src, dst, version] = process.argv.slice(1);
  const p = JSON.parse(fs.readFileSync(src, "utf8"));
  p.version = version;
  for (const k of Object.keys(p.optionalDependencies)) p.optionalDependencies[k] = version;
  fs.writeFileSync(dst, JSON.stringify(p, null, 2) + "\n");
' "$here/hostemu/package.json" "$stage/hostemu/package.json" "$version"
(cd "$stage/hostemu" && npm pack --silent --pack-destination "$out" >/dev/null)
ls -l "$out"/*.tgz
