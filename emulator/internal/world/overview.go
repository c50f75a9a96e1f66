package world

import (
	"github.com/hostemu/hostemu/emulator/internal/state"
)

// ProjectOverview is a project with its newest deployments and its domains, as the
// dashboard shows them (GET /_emulator/projects).
type ProjectOverview struct {
	Project     state.Project
	Deployments []state.Deployment
	// MoreDeployments says the project has more than the deployments listed.
	MoreDeployments bool
	Domains         []state.Domain
}

// overviewDomains bounds the domains listed per project.
const overviewDomains = 100

// Overview lists up to maxProjects projects, newest first, each with up to
// perProject of its newest deployments and its domains, read after the due
// transitions ran. It is read-only.
func (w *World) Overview(maxProjects, perProject int) []ProjectOverview {
	w.fireDue()
	projects, _ := w.store.Projects(nil, maxProjects)
	out := make([]ProjectOverview, 0, len(projects))
	for _, p := range projects {
		deps, next, _ := w.store.Deployments(state.DeploymentQuery{ProjectID: p.ID, Limit: perProject})
		doms, _, _ := w.store.Domains(p.ID, nil, overviewDomains)
		out = append(out, ProjectOverview{Project: p, Deployments: deps, MoreDeployments: next != nil, Domains: doms})
	}
	return out
}
