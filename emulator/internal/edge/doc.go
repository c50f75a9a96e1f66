// Package edge is hostemu's data plane: it serves what the hosting API only stores.
// A deployment answers at its own host, <project-slug>-<id suffix>.<edge domain>; a custom
// domain answers with its project's production deployment, or a 308 to its redirect_to.
//
// The package knows nothing of the world that holds deployments and domains. It asks a
// Lookup, which the world implements, and reads the project's production deployment once
// per request, so that a promote (one pointer swap in the world) switches whole
// responses and never mixes two deployments. Uploaded bytes live in a FileStore,
// content-addressed by SHA-256.
//
// A router puts the edge in front of the APIs by host:
//
//	e := edge.New(edge.Options{Lookup: world, Files: store, EdgeDomain: domain, DocsBase: base})
//	...
//	if d := e.Decide(r); d.Claimed {
//		e.Serve(w, r, d) // the edge's answer, from the one read Decide made
//		return
//	}
//	api.ServeHTTP(w, r)
package edge
