package cli

import (
	"fmt"
	"net/netip"
	"net/url"
	"slices"
	"strings"

	"github.com/hostemu/hostemu/emulator"
	"github.com/hostemu/hostemu/emulator/internal/state"
)

// A failure bundle is a file from someone's CI, perhaps a fork's: replaying it never
// widens what this machine trusts. Which names the kept CA signs (every host under the
// edge domain) and which origins the APIs echo are decided by the command line and the
// defaults, never by a file. bundleTrust takes from a manifest only what widens
// nothing.

// bundleTrust is the flags that give the replay manifest m's edge domain and CORS
// origins where they widen nothing — an edge domain that is a test name
// (state.IsTestName), CORS origins that are all loopback origins — and a note for each
// left out, which the replay then serves with this process's own setting, own (the
// flags after FILE, the variables, the defaults; ownOK when they parse). A setting the
// command line gives is the user's choice: nothing is taken from the bundle for it and
// nothing said.
func bundleTrust(m emulator.BundleManifest, own Config, ownOK bool) (flags, notes []string) {
	given := func(name string) bool { return ownOK && own.origin[name] == "--"+name }
	if d := strings.TrimSpace(m.EdgeDomain); d != "" && !given("edge-domain") {
		h, ok := state.NormalizeHostname(d, false)
		switch {
		case ok && state.IsTestName(h):
			flags = append(flags, "--edge-domain", h)
		case ownOK && h == own.Options.EdgeDomain:
			// this process's own setting: nothing is widened by the bundle
		case ownOK:
			notes = append(notes, fmt.Sprintf("its edge domain %q is not a test name (under .localhost, .test, .example or .invalid, or example.com, .net or .org), "+
				"so the local CA would sign every name under it: replayed under this process's %s instead, where its deployments open at <project>-<suffix>.%s; "+
				"give --edge-domain %s after FILE to trust it", d, own.Options.EdgeDomain, hostsUnder(m, own.Options.EdgeDomain), d))
		}
	}
	if len(m.CORSOrigins) > 0 && !given("cors-origins") {
		switch {
		case allLoopback(m.CORSOrigins):
			flags = append(flags, "--cors-origins", strings.Join(m.CORSOrigins, ","))
		case ownOK && sameOrigins(m.CORSOrigins, own.Options.CORSOrigins):
			// this process's own setting
		case ownOK:
			list := strings.Join(m.CORSOrigins, ",")
			notes = append(notes, fmt.Sprintf("its CORS origins %q are not loopback origins: replayed with this process's (%s) instead; give --cors-origins %s after FILE to allow them",
				list, strings.Join(own.Options.CORSOrigins, ","), list))
		}
	}
	return flags, notes
}

// hostsUnder is the domain a bundle's deployment hosts have under edgeDomain: the
// namespace label's, when it was a namespace's.
func hostsUnder(m emulator.BundleManifest, edgeDomain string) string {
	if label, ok := strings.CutPrefix(m.Namespace, "ns_"); ok && label != "" {
		return label + "." + edgeDomain
	}
	return edgeDomain
}

// allLoopback reports whether every origin is one of this machine's pages: http(s) on
// localhost or a loopback address. Not "*", and not another *.localhost name: the edge
// serves deployments' pages there, a bundle's own among them.
func allLoopback(origins []string) bool {
	for _, o := range origins {
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Path != "" || u.User != nil {
			return false
		}
		h := strings.ToLower(u.Hostname())
		if ip, err := netip.ParseAddr(h); h != "localhost" && (err != nil || !ip.IsLoopback()) {
			return false
		}
	}
	return true
}

// sameOrigins reports whether a and b list the same origins, in any order and case.
func sameOrigins(a, b []string) bool {
	norm := func(l []string) []string {
		out := make([]string, len(l))
		for i, o := range l {
			out[i] = strings.ToLower(strings.TrimRight(o, "/"))
		}
		slices.Sort(out)
		return slices.Compact(out)
	}
	return slices.Equal(norm(a), norm(b))
}
