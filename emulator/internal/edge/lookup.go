package edge

// Deployment is what the edge needs of one deployment, read at one instant.
type Deployment struct {
	// ID is the deployment's id ("dpl_…"), sent back in X-Hostemu-Deployment.
	ID string
	// Status is queued, building, ready or error, as package state spells them.
	Status string
	// EverReady is true once the deployment has been ready: an error after ready keeps
	// it served, as the real service keeps serving the build.
	EverReady bool
	// Files is the deployment's map of path → SHA-256, as created. The edge only reads it.
	Files map[string]string
}

// Domain is a custom domain as the edge routes it, read at one instant, together with its
// project's production deployment read in the same call: the one read that makes a
// promote atomic for the edge.
type Domain struct {
	// Hostname is the domain as added: "shop.example.test" or "*.example.test".
	Hostname string
	// Status is pending, verifying, active or error, as package state spells them.
	Status string
	// RedirectTo is the hostname an active domain answers 308 to; "" for none.
	RedirectTo string
	// Production is the project's production deployment, nil if it has none.
	Production *Deployment
	// Detached is true for a domain deleted and detached from the edge: the lookup may
	// keep such a tombstone so the edge answers 404 unknown_host rather than handing the
	// host to the APIs. A deleted domain not yet detached is returned as it was.
	Detached bool
}

// Lookup is what the edge asks the world, once per request. Implementations must be safe
// for concurrent use and return values that later writes do not change (a deployment's
// Files map is immutable once created).
type Lookup interface {
	// DeploymentByName returns the deployment whose host is name, as ParseEdgeHost split
	// it. An implementation serving one namespace answers false for another's Namespace.
	DeploymentByName(name EdgeName) (Deployment, bool)
	// Domain returns the domain attached at exactly hostname (the edge asks for
	// "*.<parent>" to find a wildcard), with its project's production deployment.
	Domain(hostname string) (Domain, bool)
}
