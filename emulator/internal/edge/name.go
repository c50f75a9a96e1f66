package edge

import (
	"strings"

	"github.com/hostemu/hostemu/emulator/internal/state"
)

// DefaultEdgeDomain is the domain deployment hosts live under when none is given: the
// default of --edge-domain. Browsers, curl and most resolvers send *.localhost to
// loopback, so a deployment's URL opens with no DNS set-up.
const DefaultEdgeDomain = state.DefaultEdgeDomain

// DeploymentHost returns the host of a deployment: "<project-slug>-<id suffix>.<edge
// domain>", with "<namespace label>." before the edge domain when namespaceLabel is not
// empty (a namespace's id without "ns_"). The id suffix is the id without "dpl_"; one
// that is not lowercase letters and digits, or is longer than 40 characters, is replaced
// by a digest of the id, and the slug is cut so that the label stays a valid one of at
// most 63 characters (empty slugs become "app"): state.DeploymentLabel.
func DeploymentHost(projectName, deploymentID, namespaceLabel, edgeDomain string) string {
	host := state.DeploymentLabel(projectName, deploymentID)
	if namespaceLabel != "" {
		host += "." + namespaceLabel
	}
	return host + "." + edgeDomain
}

// EdgeName is a host under the edge domain, split: "<Label>.<Namespace>.<edge domain>",
// or "<Label>.<edge domain>" in the default namespace.
type EdgeName struct {
	// Label is the deployment's label, "<project-slug>-<id suffix>".
	Label string
	// Namespace is the namespace's label (its id without "ns_"), "" for the default one.
	Namespace string
}

// ParseEdgeHost splits host (normalised, as from RequestHost) into its deployment label and
// namespace label, given the edge domain. under reports whether host lies strictly under
// the edge domain, so belongs to the edge whatever its shape; ok whether it also has the
// shape of a deployment host: one or two labels, each a valid DNS label, the first
// holding a hyphen.
func ParseEdgeHost(host, edgeDomain string) (name EdgeName, under, ok bool) {
	return parseEdgeHost(host, NormalizeHost(edgeDomain))
}

func parseEdgeHost(host, edgeDomain string) (name EdgeName, under, ok bool) {
	if edgeDomain == "" || len(host) <= len(edgeDomain)+1 ||
		!strings.HasSuffix(host, edgeDomain) || host[len(host)-len(edgeDomain)-1] != '.' {
		return EdgeName{}, false, false
	}
	rest := host[:len(host)-len(edgeDomain)-1]
	label, ns, two := strings.Cut(rest, ".")
	if !state.ValidLabel(label) || strings.IndexByte(label, '-') <= 0 || (two && !state.ValidLabel(ns)) {
		return EdgeName{}, true, false
	}
	return EdgeName{Label: label, Namespace: ns}, true, true
}
