package world

import (
	"github.com/hostemu/hostemu/emulator/internal/edge"
	"github.com/hostemu/hostemu/emulator/internal/state"
)

// Edge is what the edge asks the world, as an edge.Lookup: every answer read at one
// instant, after the transitions due by now.
func (w *World) Edge() edge.Lookup { return edgeLookup{w} }

// Files is the store of uploaded contents the edge serves.
func (w *World) Files() *edge.FileStore { return w.files }

// EdgeDomain is the domain deployment hosts live under.
func (w *World) EdgeDomain() string {
	if w.edgeDomain == "" {
		return state.DefaultEdgeDomain
	}
	return w.edgeDomain
}

// URLForm is the scheme and port deployment URLs are written with.
func (w *World) URLForm() state.URLForm { return w.urlForm }

// Namespace is the world's namespace label, "" for the default world.
func (w *World) Namespace() string { return w.namespace }

// URLDomain is the domain under which the world's deployment URLs live: the edge
// domain, after the namespace label in a namespace.
func (w *World) URLDomain() string {
	if w.namespace == "" {
		return w.edgeDomain // "" stays "": state.DeploymentURL's default
	}
	return w.namespace + "." + w.EdgeDomain()
}

type edgeLookup struct{ w *World }

func (l edgeLookup) DeploymentByName(name edge.EdgeName) (edge.Deployment, bool) {
	if name.Namespace != l.w.namespace && !l.w.answersFor(name.Namespace) {
		return edge.Deployment{}, false // another namespace's host
	}
	l.w.fireDue()
	d, ok := l.w.store.DeploymentByLabel(name.Label)
	if !ok {
		return edge.Deployment{}, false
	}
	return edgeDeployment(&d), true
}

func (l edgeLookup) Domain(hostname string) (edge.Domain, bool) {
	l.w.fireDue()
	ed, ok := l.w.store.EdgeDomain(hostname)
	if !ok {
		return edge.Domain{}, false
	}
	if ed.Detached {
		return edge.Domain{Hostname: hostname, Detached: true}, true
	}
	out := edge.Domain{Hostname: ed.Domain.Hostname, Status: ed.Domain.Status, RedirectTo: ed.Domain.RedirectTo}
	if ed.Production != nil {
		prod := edgeDeployment(ed.Production)
		out.Production = &prod
	}
	return out, true
}

func edgeDeployment(d *state.Deployment) edge.Deployment {
	return edge.Deployment{ID: d.ID, Status: d.Status, EverReady: d.EverReady(), Files: d.Files}
}

// EdgeRoutes lists the hosts the edge answers now (GET /_emulator/edge).
func (w *World) EdgeRoutes() []state.Route {
	w.fireDue()
	return w.store.EdgeRoutes()
}

// RateLimitsOff reports whether --rate-limits off turned the world's limits off.
func (w *World) RateLimitsOff() bool { return w.rateLimitsOff }
