package state

import (
	"cmp"
	"slices"
)

// SortAsExport puts snap's lists in the order Store.Export gives them: tokens by scope
// then token, projects and deployments newest first (ties by id, descending), domains
// grouped by project in project order, each newest first, files by digest. A snapshot
// built in this order survives a Load and an Export unchanged.
func (snap *Snapshot) SortAsExport() {
	sortTokens(snap.Tokens)
	slices.SortFunc(snap.Projects, func(x, y Project) int { return keyOrder(keyOf(y.CreatedAt, y.ID), keyOf(x.CreatedAt, x.ID)) })
	rank := make(map[string]int, len(snap.Projects))
	for i, p := range snap.Projects {
		rank[p.ID] = i
	}
	slices.SortFunc(snap.Domains, func(x, y Domain) int {
		return cmp.Or(cmp.Compare(rank[x.ProjectID], rank[y.ProjectID]), keyOrder(keyOf(y.CreatedAt, y.Hostname), keyOf(x.CreatedAt, x.Hostname)))
	})
	snap.Deployments = sortDeployments(snap.Deployments)
	slices.Sort(snap.Files)
}

// sortDeployments orders deployments newest first by moving each once: a generated
// world holds 100,000, and sorting the structs themselves would copy each many times.
func sortDeployments(ds []Deployment) []Deployment {
	type key struct {
		k Key
		i int
	}
	keys := make([]key, len(ds))
	for i := range ds {
		keys[i] = key{keyOf(ds[i].CreatedAt, ds[i].ID), i}
	}
	slices.SortFunc(keys, func(x, y key) int { return keyOrder(y.k, x.k) })
	// Position j must receive ds[keys[j].i]; walk each cycle once, marking done with -1.
	for j := range keys {
		if keys[j].i < 0 || keys[j].i == j {
			continue
		}
		hold := ds[j]
		cur := j
		for {
			src := keys[cur].i
			keys[cur].i = -1
			if src == j {
				ds[cur] = hold
				break
			}
			ds[cur] = ds[src]
			cur = src
		}
	}
	return ds
}
