package edge

import (
	"strings"

	"github.com/hostemu/hostemu/emulator/internal/state"
)

// Action is what the edge does with a request.
type Action int

// Actions of a Decision.
const (
	// ActionError answers an edge error page with Decision.Code.
	ActionError Action = iota
	// ActionServe serves Decision.Deployment's files.
	ActionServe
	// ActionRedirect answers 308 to https://<Decision.RedirectTo><path>?<query>.
	ActionRedirect
)

// Route kinds of a Decision, as GET /_emulator/edge names them.
const (
	KindDeployment = "deployment"
	KindDomain     = "domain"
	KindRedirect   = "redirect"
)

// Decision is the edge's answer to a host, decided before anything is written.
type Decision struct {
	// Action says what to answer.
	Action Action
	// Claimed is true when the host belongs to the edge: a host under the edge domain, a
	// domain the lookup knows (detached tombstones included), or any proxy request. A
	// router hands unclaimed requests to the APIs.
	Claimed bool
	// Host is the normalised host the request was for.
	Host string
	// Proxy is true for an absolute-form (proxy) request.
	Proxy bool
	// Kind is KindDeployment, KindDomain or KindRedirect for a routed host, "" otherwise.
	Kind string
	// Domain is the matched custom domain's hostname ("*.example.test" for a wildcard).
	Domain string
	// Deployment is the deployment answering (ActionServe, and the building and failed
	// errors); its ID is "" when none.
	Deployment Deployment
	// RedirectTo is the redirect's target hostname (ActionRedirect).
	RedirectTo string
	// Code is the edge error code (ActionError).
	Code string
	// NotVouched marks a proxy request for a real name the proxy does not serve (see
	// --proxy-domains): unknown_host, with a message naming the flag.
	NotVouched bool
	// Namespace is the namespace a namespace_not_found error names.
	Namespace string
}

// Decide routes host (normalised, see RequestHost) through lk: a pure decision, with the
// world read once. Hosts under edgeDomain are deployment hosts; other hosts are custom
// domains, an exact one winning over the wildcard "*.<parent>" of a single-label
// subdomain.
func Decide(host string, proxy bool, lk Lookup, edgeDomain string) Decision {
	return decide(host, proxy, lk, NormalizeHost(edgeDomain))
}

// decide is Decide with edgeDomain already normalised.
func decide(host string, proxy bool, lk Lookup, edgeDomain string) Decision {
	d := Decision{Host: host, Proxy: proxy, Claimed: proxy}
	if name, under, ok := parseEdgeHost(host, edgeDomain); under {
		d.Claimed, d.Kind = true, KindDeployment
		dep, found := Deployment{}, false
		if ok {
			dep, found = lk.DeploymentByName(name)
		}
		if !found {
			d.Code = CodeDeploymentNotFound
			return d
		}
		return serveable(d, dep)
	}
	dom, found := domainFor(host, lk)
	if !found {
		d.Code = CodeUnknownHost
		return d
	}
	d.Claimed, d.Domain = true, dom.Hostname
	switch {
	case dom.Detached:
		d.Code = CodeUnknownHost
	case dom.Status != state.StatusActive:
		d.Kind, d.Code = KindDomain, CodeDomainNotActive
	case dom.RedirectTo != "":
		d.Kind, d.Action, d.RedirectTo = KindRedirect, ActionRedirect, dom.RedirectTo
	case dom.Production == nil:
		d.Kind, d.Code = KindDomain, CodeNoProductionDeployment
	default:
		d.Kind = KindDomain
		return serveable(d, *dom.Production)
	}
	return d
}

// domainFor finds the domain attached at host: the exact one unless it is detached, else
// the wildcard of host's parent for a single-label subdomain. A detached domain, exact
// or wildcard, is still returned when nothing live covers the host, so that a host the
// edge served stays claimed (a tombstone): it is never handed to the APIs, where a page
// it served could otherwise share an origin with them.
func domainFor(host string, lk Lookup) (Domain, bool) {
	if host == "" || strings.IndexByte(host, '*') >= 0 {
		return Domain{}, false // "*.example.test" is a domain's name, never a host asked for
	}
	exact, found := lk.Domain(host)
	if found && !exact.Detached {
		return exact, true
	}
	if _, parent, ok := strings.Cut(host, "."); ok && parent != "" {
		if wild, ok := lk.Domain("*." + parent); ok && (!wild.Detached || !found) {
			return wild, true
		}
	}
	return exact, found
}

// serveable decides what a deployment answers in its status.
func serveable(d Decision, dep Deployment) Decision {
	d.Deployment = dep
	switch {
	case dep.Status == state.StatusReady || dep.EverReady:
		d.Action = ActionServe
	case dep.Status == state.StatusError:
		d.Code = CodeDeploymentFailed
	default:
		d.Code = CodeDeploymentBuilding
	}
	return d
}
