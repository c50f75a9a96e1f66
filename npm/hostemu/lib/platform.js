"use strict";
// Which binary runs hostemu here: the one HOSTEMU_BINARY names, else the one in this
// platform's package (@hostemu/<platform>-<arch>), installed by npm as an optional
// dependency of hostemu. Shared by bin/hostemu and hostemu/testkit.

// The platform packages, by Node's process.platform and process.arch. build.sh builds
// the same list; a platform missing here has no binary on npm.
const PACKAGES = {
  "linux x64": "@hostemu/linux-x64",
  "linux arm64": "@hostemu/linux-arm64",
  "darwin x64": "@hostemu/darwin-x64",
  "darwin arm64": "@hostemu/darwin-arm64",
  "win32 x64": "@hostemu/win32-x64",
};

// IMAGE is the container image, the way out where no package fits.
const IMAGE = "ghcr.io/hostemu/hostemu";

// packageFor names the platform package of platform/arch, or null when npm has none.
function packageFor(platform, arch) {
  return PACKAGES[platform + " " + arch] || null;
}

// binaryName is the binary's path inside its platform package.
function binaryName(platform) {
  return platform === "win32" ? "hostemu.exe" : "bin/hostemu";
}

// binaryPath finds the binary, or throws an Error whose message says why and what to do.
// Its argument is for tests; by default it reads this process's environment and platform
// and resolves packages from this file.
function binaryPath(opts) {
  const o = opts || {};
  const env = o.env || process.env;
  const platform = o.platform || process.platform;
  const arch = o.arch || process.arch;
  const resolve = o.resolve || require.resolve;
  if (env.HOSTEMU_BINARY) return env.HOSTEMU_BINARY;
  const pkg = packageFor(platform, arch);
  const where = platform + "-" + arch;
  if (!pkg) {
    throw new Error(
      `hostemu: there is no hostemu binary on npm for this platform (${where}); ` +
        `the packages cover ${Object.keys(PACKAGES).map((k) => k.replace(" ", "-")).join(", ")}.\n` +
        `Run hostemu in its container instead:\n` +
        `  docker run --rm -p 4700:4700 -p 4743:4743 ${IMAGE}\n` +
        `and give the testkit's connect() its URL (http://127.0.0.1:4700), or build the binary ` +
        `with Go (go build ./cmd/hostemu) and set HOSTEMU_BINARY to its path.`,
    );
  }
  try {
    return resolve(pkg + "/" + binaryName(platform));
  } catch (err) {
    throw new Error(
      `hostemu: the package ${pkg}, which holds the binary for this platform (${where}), is not installed.\n` +
        `npm installs it as an optional dependency of hostemu: reinstall without --omit=optional ` +
        `(or --no-optional), and if a lockfile made on another platform left it out, delete ` +
        `node_modules and the lockfile and install again.\n` +
        `Or run hostemu in its container (docker run --rm -p 4700:4700 ${IMAGE}), or set ` +
        `HOSTEMU_BINARY to a hostemu binary.\n(${err && err.code ? err.code : err})`,
    );
  }
}

module.exports = { PACKAGES, IMAGE, packageFor, binaryName, binaryPath };
