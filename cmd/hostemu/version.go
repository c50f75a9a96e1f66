package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// Set at build time: go build -ldflags "-X main.version=v1.2.3 -X main.commit=abc1234".
var (
	version = "dev"
	commit  = "none"
)

// buildVersion is the version and commit, falling back to what the Go toolchain
// recorded (a module version from go install, vcs.revision from a checkout).
func buildVersion() (ver, rev string) {
	ver, rev = version, commit
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
