package httpapi

import (
	"encoding/base64"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/hostemu/hostemu/emulator/internal/edge"
	"github.com/hostemu/hostemu/emulator/internal/namespace"
	"github.com/hostemu/hostemu/emulator/internal/world"
)

// world is the world a request acts on: a public request's (found by identify from its
// credential), a namespaced control route's (from its path, see inNamespace), else the
// default one.
func (a *API) world(c *gin.Context) *world.World {
	w, _ := a.worldAt(c)
	return w
}

// worldAt is world with the request's reading of the wall for clock.NowAt
// (exchange.wallRead; the zero time, read afresh, outside the pipeline).
func (a *API) worldAt(c *gin.Context) (*world.World, time.Time) {
	if ex := exchangeOf(c); ex != nil {
		return ex.w, ex.wallRead()
	}
	return a.w, time.Time{}
}

// inNamespace resolves the :ns of a namespaced control route: 404 namespace_not_found
// for one that does not live (never created, deleted, or expired).
func (a *API) inNamespace() gin.HandlerFunc {
	return func(c *gin.Context) {
		n, err := a.ns.Get(c.Param("ns"))
		if err != nil {
			a.renderError(c, err)
			return
		}
		exchangeOf(c).w = n.World
		c.Next()
	}
}

// createNamespace answers POST /_emulator/namespaces: a namespace from a spec (JSON),
// or one replaying a failure bundle (application/gzip: createNamespaceFromBundle).
func (a *API) createNamespace(c *gin.Context) (any, error) {
	if ct := headerOf(c.Request.Header, "Content-Type"); ct != "" && isBundleMedia(ct) {
		return a.createNamespaceFromBundle(c)
	}
	var spec namespace.Spec
	if err := decodeStrict(c, &spec, a.cfg.Limits.stateBytes()); err != nil { // empty: the defaults
		return nil, err
	}
	n, err := a.ns.Create(spec)
	if err != nil {
		return nil, err
	}
	return created{namespace.Created{
		Namespace: n.ID, Tokens: n.Tokens, CipherKey: n.CipherKey,
		ControlURL: a.baseURL(c.Request) + "/_emulator/namespaces/" + n.ID,
	}}, nil
}

func (a *API) listNamespaces(*gin.Context) (any, error) {
	return map[string]any{"namespaces": a.ns.List()}, nil
}

func (a *API) deleteNamespace(c *gin.Context) (any, error) {
	id := c.Param("ns")
	if err := a.ns.Delete(id); err != nil {
		return nil, err
	}
	return map[string]any{"namespace": id, "deleted": true}, nil
}

// edgeWorld is the world an edge request belongs to: the namespace a deployment host
// names, else the one X-Hostemu-Namespace or proxy credentials
// (Proxy-Authorization: Basic base64("<ns>:")) name, else the default world. missing
// is the namespace those named when none has that name (never created, deleted,
// expired): the caller refuses the request with namespace_not_found rather than serve
// it from the default world, whose custom domain of the same name would answer in the
// namespace's stead.
func (a *API) edgeWorld(r *http.Request, host string) (w *world.World, missing string) {
	if w, ok := r.Context().Value(tunnelWorldKey{}).(*world.World); ok {
		return a.tunnelWorld(w) // a request in a CONNECT tunnel: the tunnel's namespace
	}
	if a.ns.Len() > 0 {
		if name, _, ok := edge.ParseEdgeHost(host, a.w.EdgeDomain()); ok && name.Namespace != "" {
			if n, ok := a.ns.ByLabel(name.Namespace); ok {
				return n.World, ""
			}
			return a.w, "" // its lookup answers no host of another namespace
		}
	}
	id, explicit := headerOf(r.Header, "X-Hostemu-Namespace"), true
	if id == "" {
		if id, explicit = proxyUser(headerOf(r.Header, "Proxy-Authorization")), false; id == "" {
			return a.w, ""
		}
	}
	label := namespace.LabelOfID(id)
	if label == "" {
		label = id // the label alone names it too
	}
	if n, ok := a.ns.ByLabel(label); ok {
		return n.World, ""
	}
	// hostemu's own header names a namespace whatever its value; a proxy's user name
	// only in a namespace id's form (ns_…): credentials set up for another proxy are no
	// namespace of ours
	if explicit || label != id {
		return a.w, id
	}
	return a.w, ""
}

// tunnelWorld is the world of a request in a CONNECT tunnel opened for w: the world
// w's namespace name finds now, as a new CONNECT naming it would. The tunnel holds the
// world its CONNECT named, which a deletion or expiry since does not reach, so the
// namespace is looked up again (which marks it used, as a request naming it by host or
// header does): w while it lives; once it is gone, the namespace a bundle of it was
// replayed into, which its name then stands for (Registry.Alias: its tokens and
// deployment hosts find that one too); else the request is refused with
// namespace_not_found. The default world is never deleted.
func (a *API) tunnelWorld(w *world.World) (*world.World, string) {
	label := w.Namespace()
	if label == "" {
		return w, ""
	}
	if n, ok := a.ns.ByLabel(label); ok {
		return n.World, ""
	}
	return a.w, namespace.Prefix + label
}

// proxyUser is the user name of "Proxy-Authorization: Basic base64(user:password)".
func proxyUser(h string) string {
	const prefix = "basic "
	if len(h) <= len(prefix) || !strings.EqualFold(h[:len(prefix)], prefix) {
		return ""
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(h[len(prefix):]))
	if err != nil {
		return ""
	}
	user, _, _ := strings.Cut(string(raw), ":")
	return user
}

// edgeOf is the edge handler of a world: the default world's is built once; a
// namespace's costs one small allocation per edge request.
func (a *API) edgeOf(w *world.World) *edge.Handler {
	if w == a.w {
		return a.edge
	}
	return edge.New(edge.Options{Lookup: w.Edge(), Files: w.Files(), EdgeDomain: w.EdgeDomain(), DocsBase: a.edgeDocsBase, RedirectForm: a.redirectForm})
}
