package edge_test

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/hostemu/hostemu/emulator/internal/edge"
	"github.com/hostemu/hostemu/emulator/internal/state"
)

// fakeWorld is a Lookup over maps fixed at construction, with one production pointer per
// project that tests swap as a promote does.
type fakeWorld struct {
	deployments map[edge.EdgeName]edge.Deployment
	domains     map[string]fakeDomain
	production  map[string]*atomic.Pointer[edge.Deployment] // project → production
}

type fakeDomain struct {
	status, redirectTo, project string
	detached                    bool
}

func newFakeWorld() *fakeWorld {
	return &fakeWorld{
		deployments: map[edge.EdgeName]edge.Deployment{},
		domains:     map[string]fakeDomain{},
		production:  map[string]*atomic.Pointer[edge.Deployment]{},
	}
}

func (f *fakeWorld) DeploymentByName(n edge.EdgeName) (edge.Deployment, bool) {
	d, ok := f.deployments[n]
	return d, ok
}

func (f *fakeWorld) Domain(hostname string) (edge.Domain, bool) {
	d, ok := f.domains[hostname]
	if !ok {
		return edge.Domain{}, false
	}
	out := edge.Domain{Hostname: hostname, Status: d.status, RedirectTo: d.redirectTo, Detached: d.detached}
	if p := f.production[d.project]; p != nil {
		out.Production = p.Load()
	}
	return out, true
}

// addDeployment registers dep at its host in the default namespace of domain and returns
// that host.
func (f *fakeWorld) addDeployment(project string, dep edge.Deployment) string {
	label := state.DeploymentLabel(project, dep.ID)
	f.deployments[edge.EdgeName{Label: label}] = dep
	return edge.DeploymentHost(project, dep.ID, "", edge.DefaultEdgeDomain)
}

func (f *fakeWorld) promote(project string, dep edge.Deployment) {
	p := f.production[project]
	if p == nil {
		p = new(atomic.Pointer[edge.Deployment])
		f.production[project] = p
	}
	p.Store(&dep)
}

const docsBase = "http://127.0.0.1:4700"

func newHandler(tb testing.TB, lk edge.Lookup, files *edge.FileStore) *edge.Handler {
	tb.Helper()
	return edge.New(edge.Options{
		Lookup: lk, Files: files,
		DocsBase: func(*http.Request) string { return docsBase + "/" },
	})
}

// do sends a request for target (a path, or an absolute URL for a proxy request) with the
// given Host and headers through h.
func do(tb testing.TB, h http.Handler, method, host, target string, header ...string) *httptest.ResponseRecorder {
	tb.Helper()
	r := httptest.NewRequest(method, target, nil)
	if host != "" {
		r.Host = host
	}
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func mustPut(tb testing.TB, s *edge.FileStore, content string) string {
	tb.Helper()
	d := edge.Digest([]byte(content))
	if err := s.Put(d, []byte(content)); err != nil {
		tb.Fatalf("Put: %v", err)
	}
	return d
}
