#!/usr/bin/env bash
# Cross-compiles hostemu's release binaries, the ones the npm packages (npm/build.sh) and
# the Python wheels (python/build.sh) ship, so that both carry the same bytes:
#
#   cmd/hostemu/binaries.sh OUT_DIR [PLATFORM...|all]
#
# PLATFORM is linux-x64 linux-arm64 darwin-x64 darwin-arm64 win32-x64 (Node's names, which
# npm's packages use), or all; by default this machine's. Writes
# OUT_DIR/PLATFORM/hostemu (hostemu.exe on Windows) and OUT_DIR/VERSION (the version,
# semver). The packaging scripts call this themselves; give them the directory in
# HOSTEMU_BINARIES to package binaries built once (.ci/run does, for npm and Python).
#
# VERSION must be semver (npm's rule): $HOSTEMU_VERSION if set (a leading v dropped: the
# release workflow passes the tag), else from `git describe --tags --match 'v*'`: a tag
# v1.2.3 on HEAD gives 1.2.3, commits after it 1.2.3-dev.N.gSHA, no tag at all
# 0.0.0-dev.N.gSHA (N: commits, SHA: HEAD), with .dirty for uncommitted changes; outside
# a git checkout 0.0.0-dev. The binary is stamped with v$VERSION and the commit, so
# `hostemu version` names the package's version. (`hostemu version` itself cannot be
# the source: an unstamped binary says "dev".)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

[ $# -ge 1 ] || { echo "usage: cmd/hostemu/binaries.sh OUT_DIR [PLATFORM...|all]" >&2; exit 2; }
mkdir -p "$1"
out=$(cd "$1" && pwd)
shift

all=(linux-x64 linux-arm64 darwin-x64 darwin-arm64 win32-x64)
platforms=("$@")
if [ ${#platforms[@]} -eq 0 ]; then
  case "$(uname -s)-$(uname -m)" in
    Linux-x86_64) platforms=(linux-x64) ;;
    Linux-aarch64 | Linux-arm64) platforms=(linux-arm64) ;;
    Darwin-x86_64) platforms=(darwin-x64) ;;
    Darwin-arm64) platforms=(darwin-arm64) ;;
    MINGW*-x86_64 | MSYS*-x86_64 | CYGWIN*-x86_64) platforms=(win32-x64) ;;
    *) echo "cmd/hostemu/binaries.sh: no release platform for $(uname -s) $(uname -m); name one of ${all[*]}" >&2; exit 2 ;;
  esac
elif [ "${platforms[0]}" = all ]; then
  platforms=("${all[@]}")
fi

version=${HOSTEMU_VERSION:-}
version=${version#v}
if [ -z "$version" ] && ! git -C "$root" rev-parse HEAD >/dev/null 2>&1; then
  version=0.0.0-dev # not a git checkout: nothing to describe
fi
if [ -z "$version" ]; then
  cd "$root"
  sha=$(git rev-parse --short=7 HEAD)
  dirty=""
  [ -z "$(git status --porcelain --untracked-files=no 2>/dev/null)" ] || dirty=.dirty
  if tag=$(git describe --tags --match 'v[0-9]*' --abbrev=0 2>/dev/null); then
    n=$(git rev-list --count "$tag..HEAD")
    if [ "$n" = 0 ]; then version=${tag#v}; [ -z "$dirty" ] || version+="-dev.0.g$sha$dirty"
    else version="${tag#v}-dev.$n.g$sha$dirty"; fi
  else
    version="0.0.0-dev.$(git rev-list --count HEAD).g$sha$dirty"
  fi
fi
semver='^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$'
[[ $version =~ $semver ]] || { echo "cmd/hostemu/binaries.sh: version $version is not semver" >&2; exit 2; }
commit=$(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)

for p in "${platforms[@]}"; do
  case $p in
    linux-x64) goos=linux goarch=amd64 ;;
    linux-arm64) goos=linux goarch=arm64 ;;
    darwin-x64) goos=darwin goarch=amd64 ;;
    darwin-arm64) goos=darwin goarch=arm64 ;;
    win32-x64) goos=windows goarch=amd64 ;;
    *) echo "cmd/hostemu/binaries.sh: unknown platform $p (known: ${all[*]})" >&2; exit 2 ;;
  esac
  bin=$out/$p/hostemu
  [ "$goos" = windows ] && bin=$bin.exe
  mkdir -p "$out/$p"
  (cd "$root" && CGO_ENABLED=0 GOOS=$goos GOARCH=$goarch go build -trimpath -tags nomsgpack \
    -ldflags "-s -w -X main.version=v$version -X main.commit=$commit" -o "$bin" ./cmd/hostemu)
done
printf '%s\n' "$version" >"$out/VERSION"
