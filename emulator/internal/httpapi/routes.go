package httpapi

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/hostemu/hostemu/emulator/internal/state"
)

// routes registers every route of every service on r. The front door (door.go) has
// decided a request's kind before it gets here, from the prefix each kind owns; every
// route below sits under its kind's prefix (TestRoutesAreClassifiedAsRegistered).
func (a *API) routes(r *gin.Engine) {
	a.hostingRoutes(r)
	a.cipherRoutes(r)
	a.controlRoutes(r)
	a.dashboardRoutes(r)
	a.docsRoutes(r)
}

// hostingRoutes registers the hosting service, one line a route.
func (a *API) hostingRoutes(r *gin.Engine) {
	read, deploy := a.need(state.ScopeRead), a.need(state.ScopeDeploy)
	a.publicRoute(r, "GET", "/v1/projects", read, paged(a.listProjects))
	a.publicRoute(r, "POST", "/v1/deployments", deploy, a.createDeployment)
	a.publicRoute(r, "GET", "/v1/deployments", read, paged(a.listDeployments, "project_id", "target", "status", "created_after", "created_before"))
	a.publicRoute(r, "GET", "/v1/deployments/:id", read, a.getDeployment)
	a.publicRoute(r, "GET", "/v1/deployments/:id/logs", read, paged(a.getBuildLogs))
	a.publicRoute(r, "POST", "/v1/deployments/:id/promote", deploy, a.promote)
	a.publicRoute(r, "POST", "/v1/files", deploy, a.uploadFile)
	a.publicRoute(r, "POST", "/v1/projects/:project_id/domains", a.needDomainWrite(), a.addDomain)
	a.publicRoute(r, "GET", "/v1/projects/:project_id/domains", read, paged(a.listDomains))
	a.publicRoute(r, "DELETE", "/v1/projects/:project_id/domains/:hostname", a.needDomainWrite(), a.deleteDomain)
}

// cipherRoutes registers the decryption service.
func (a *API) cipherRoutes(r *gin.Engine) {
	key := a.need("")
	a.publicRoute(r, "POST", "/v1/decrypt", key, a.decrypt)
	a.publicRoute(r, "POST", "/v1/encrypt", key, a.encrypt)
}

// controlRoutes registers the control API under /_emulator (the default world) and,
// with a namespace registry, /_emulator/namespaces/:ns (that namespace's), one line a
// route.
func (a *API) controlRoutes(r *gin.Engine) {
	get(r, "/_emulator/health", a.handle(a.health))
	g := r.Group("/_emulator", a.strictControlQuery())
	a.worldRoutes(g)
	get(g, "/openapi.json", a.controlOpenAPIJSON)
	get(g, "/openapi.yaml", a.controlOpenAPIYAML)
	if a.ns == nil {
		return // no namespaces can be made: their routes are 404 not_found
	}
	g.POST("/namespaces", a.handle(a.createNamespace))
	get(g, "/namespaces", a.handle(a.listNamespaces))
	g.DELETE("/namespaces/:ns", a.handle(a.deleteNamespace))
	a.worldRoutes(g.Group("/namespaces/:ns", a.inNamespace()))
}

// worldRoutes registers the control routes of one world under g.
func (a *API) worldRoutes(g *gin.RouterGroup) {
	g.POST("/reset", a.handle(a.reset))
	get(g, "/state", a.handle(a.exportState))
	g.PUT("/state", a.handle(a.importState))
	get(g, "/clock", a.handle(a.getClock))
	g.PUT("/clock", a.handle(a.setClock))
	g.POST("/clock/advance", a.handle(a.advanceClock))
	g.POST("/await", a.handle(a.await))
	g.POST("/faults", a.handle(a.addFault))
	get(g, "/faults", a.handle(a.listFaults))
	g.DELETE("/faults", a.handle(a.clearFaults))
	get(g, "/faults/:id", a.handle(a.getFault))
	g.DELETE("/faults/:id", a.handle(a.deleteFault))
	get(g, "/requests", a.handle(a.listRequests))
	g.DELETE("/requests", a.handle(a.clearRequests))
	g.POST("/tokens", a.handle(a.mintToken))
	g.DELETE("/tokens/:token", a.handle(a.revokeToken))
	g.POST("/deployments/:id/status", a.handle(a.forceDeploymentStatus))
	g.POST("/domains/:hostname/status", a.handle(a.forceDomainStatus))
	get(g, "/scenarios", a.handle(a.listScenarios))
	g.PUT("/scenarios/active", a.handle(a.useScenario))
	get(g, "/edge", a.handle(a.edgeRoutes))
	get(g, "/ca.pem", a.caPEM)
	get(g, "/events", a.events)
	get(g, "/tokens", a.handle(a.listTokens))
	g.POST("/clock/next", a.handle(a.nextTransition))
	get(g, "/projects", a.handle(a.overview))
	get(g, "/coverage", a.handle(a.getCoverage))
	get(g, "/bundle", a.getBundle)
	g.POST("/bundle", a.postBundle)
	g.PUT("/bundle", a.handle(a.putBundle))
	g.DELETE("/coverage", a.handle(a.resetCoverage))
	g.POST("/deployments/:id/promote", a.handle(a.promote))
	get(g, "/deployments/:id/logs", a.handle(a.getBuildLogs))
	g.POST("/projects/:project_id/domains", a.handle(a.addDomain))
	g.DELETE("/projects/:project_id/domains/:hostname", a.handle(a.deleteDomain))
	// Namespaces: when GET /_emulator/namespaces exists, the dashboard shows them
	// (dashboard/static/dashboard.js, loadNamespaces); nothing else to wire here.
}

// dashboardRoutes registers the web pages: the landing page, the dashboard and the
// tokens page, and their scripts and styles, all embedded. They hold no state: every
// datum they show comes from the control API, same origin.
func (a *API) dashboardRoutes(r *gin.Engine) {
	get(r, "/", a.page("index.html"))
	get(r, "/dashboard", a.page("dashboard.html"))
	get(r, "/account/tokens", a.page("tokens.html"))
	get(r, "/dashboard/assets/:file", a.asset)
}

// docsRoutes registers the public docs: an index and a page per error code.
func (a *API) docsRoutes(r *gin.Engine) {
	get(r, "/docs", a.docsIndex)
	get(r, "/docs/errors", a.docsIndex)
	get(r, "/docs/errors/:code", a.docsError)
	get(r, "/openapi.json", a.openapiJSON)
	get(r, "/openapi.yaml", a.openapiYAML)
	r.OPTIONS("/openapi.json", a.openapiPreflight)
	r.OPTIONS("/openapi.yaml", a.openapiPreflight)
}

// getHead are the methods of a readable route: HEAD answers wherever GET does, with
// the same status and headers (net/http drops the body), so that probes such as
// `npx wait-on` and curl -I work on every route.
var getHead = []string{http.MethodGet, http.MethodHead}

// get registers a readable route: GET and HEAD.
func get(r gin.IRoutes, path string, h ...gin.HandlerFunc) { r.Match(getHead, path, h...) }
