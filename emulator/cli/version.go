package cli

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// Build is what the linker stamped into the binary; see cmd/hostemu.
type Build struct {
	Version string // "dev" when not stamped
	Commit  string // "none" when not stamped
}

// stamped is the Build that Main was given; tests run with the defaults.
var stamped = Build{Version: "dev", Commit: "none"}

// buildVersion is the version and commit, falling back to what the Go toolchain
// recorded (a module version from go install, vcs.revision from a checkout).
func buildVersion() (ver, rev string) {
	ver, rev = stamped.Version, stamped.Commit
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return ver, rev
	}
	if ver == "dev" && info.Main.Version != "" && info.Main.Version != "(devel)" {
		ver = info.Main.Version
	}
	if rev == "none" || rev == "unknown" || rev == "" {
		var vcsRev string
		dirty := false
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				vcsRev = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
		if vcsRev != "" {
			rev = vcsRev
			if dirty {
				rev += "-dirty"
			}
		}
	}
	return ver, rev
}

func printVersion(w io.Writer) {
	ver, rev := buildVersion()
	fmt.Fprintf(w, "hostemu %s\ncommit: %s\ngo: %s %s/%s\n", ver, rev, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
