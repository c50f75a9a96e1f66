package httpapi

import (
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/hostemu/hostemu/emulator/internal/edge"
	"github.com/hostemu/hostemu/emulator/internal/state"
	"github.com/hostemu/hostemu/emulator/internal/world"
)

// proxyVouches reports whether the proxy (absolute-form requests and CONNECT tunnels)
// serves the host the edge claimed: deployment hosts always; a custom domain only when
// it is a test name (state.IsTestName) or --proxy-domains lists it. Otherwise a page
// that attaches "github.com" to a project would have the local CA vouch for it to every
// client that uses hostemu as its proxy.
func (a *API) proxyVouches(d edge.Decision) bool {
	if d.Kind == edge.KindDeployment || d.Domain == "" {
		return true // a deployment host, or a host the edge refuses anyway
	}
	return state.IsTestName(d.Host) || underAny(d.Host, a.cfg.ProxyDomains)
}

// underAny reports whether host is one of the suffixes or under one: "example.com"
// covers example.com and www.example.com; ".test" covers every name ending in .test.
func underAny(host string, suffixes []string) bool {
	for _, s := range suffixes {
		s = strings.ToLower(strings.TrimPrefix(s, "*"))
		switch {
		case s == "":
		case strings.HasPrefix(s, "."):
			if strings.HasSuffix(host, s) {
				return true
			}
		case host == s || strings.HasSuffix(host, "."+s):
			return true
		}
	}
	return false
}

// refusedByProxy is d turned into the proxy's refusal of a real name.
func refusedByProxy(d edge.Decision) edge.Decision {
	return edge.Decision{Claimed: true, Host: d.Host, Proxy: true, Code: edge.CodeUnknownHost, NotVouched: true}
}

// edgeDocsBase is where an edge error's doc_url points: --public-url, else the address
// the connection came in on (never the request's host, which is the edge's), with the
// scheme it speaks; through a CONNECT tunnel, the HTTPS listener (tunnelBase).
func (a *API) edgeDocsBase(r *http.Request) string {
	if a.cfg.PublicURL != "" {
		return a.cfg.PublicURL
	}
	if tunneled(r) {
		return a.tunnelBase(r)
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + connAddr(r)
}

// tunneled reports whether r came through a CONNECT tunnel.
func tunneled(r *http.Request) bool {
	_, ok := r.Context().Value(tunnelWorldKey{}).(*world.World)
	return ok
}

// tunnelBase is where links in an answer sent through a CONNECT tunnel point. Not the
// request's scheme and host: the tunnel speaks TLS on a listener that speaks plain HTTP
// (https://127.0.0.1:4700 opens nowhere), and its host may be the edge's. The HTTPS
// listener serves what the tunnel does; without one, the listener the tunnel came in
// on, over plain HTTP.
func (a *API) tunnelBase(r *http.Request) string {
	if a.cfg.TLSURL != "" {
		return a.cfg.TLSURL
	}
	return "http://" + connAddr(r)
}

// connAddr is the address r's connection came in on, as a client on this machine dials
// it (a wildcard address as 127.0.0.1); "localhost" when unknown.
func connAddr(r *http.Request) string {
	if addr, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		if tcp, ok := addr.(*net.TCPAddr); ok && tcp.IP.IsUnspecified() {
			return "127.0.0.1:" + itoa(int64(tcp.Port))
		}
		return addr.String()
	}
	return "localhost"
}

// redirectForm is the scheme and port of a domain's 308 for r, so that the redirect
// opens as the request did: over TLS or through a CONNECT tunnel, the port the client
// asked for (none for CONNECT host:443); through the proxy in absolute form, https with
// no port (the client's proxy opens it); on the plain listener, where deployment URLs
// point (the HTTPS listener, --edge-url-port, or this listener without HTTPS).
func (a *API) redirectForm(r *http.Request) state.URLForm {
	if r.TLS != nil || tunneled(r) {
		scheme := "https"
		if r.TLS == nil {
			scheme = "http"
		}
		return state.URLForm{Scheme: scheme, Port: portOfHost(r.Host)}
	}
	if _, proxy := edge.RequestHost(r); proxy {
		return state.URLForm{}
	}
	return a.cfg.URLForm
}

// portOfHost is the port of a Host header ("shop.test:4743" → 4743), 0 without one.
func portOfHost(host string) int {
	_, port, err := net.SplitHostPort(host)
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(port)
	return n
}

// publicHostOf is the host of --public-url, normalized, or "".
func publicHostOf(publicURL string) string {
	if u, err := url.Parse(publicURL); err == nil {
		return edge.NormalizeHost(strings.ToLower(u.Host))
	}
	return ""
}

// publicOriginOf is the web origin of --public-url (scheme://host), or "".
func publicOriginOf(publicURL string) string {
	if u, err := url.Parse(publicURL); err == nil && publicURL != "" {
		return u.Scheme + "://" + u.Host
	}
	return ""
}
