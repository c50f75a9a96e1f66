package emulator_test

import (
	"net/url"
	"testing"

	"github.com/hostemu/hostemu/emulator"
)

// A namespace's bundle put into another namespace, once the first is gone, and into
// the default world of another hostemu: the deployment hosts in the bundle's state,
// which carry the first namespace's label, reach the world it went into.
func TestBundleOfANamespaceOpensItsHosts(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := e.newNamespace(t, nil)
	r := e.post("/v1/deployments", a.Tokens.Deploy, map[string]any{"project_id": "prj_shop", "files": map[string]string{}})
	mustStatus(t, r, 201)
	dep := decode[emulator.DeploymentCreated](t, r)
	e.post(a.control("/clock/advance"), "", map[string]any{"by": "1m"})
	u, err := url.Parse(dep.URL)
	if err != nil {
		t.Fatal(err)
	}
	open := func(e *env) resp {
		return e.do(req{Method: "GET", Path: "/", Host: u.Host, Headers: map[string]string{"Accept": "application/json"}})
	}
	if got := open(e); got.Header.Get("X-Hostemu-Deployment") != dep.ID {
		t.Fatalf("in its own namespace: %d %v %s", got.Status, got.Header, got.Body)
	}
	tgz := e.get(a.control("/bundle"), "").Body
	mustStatus(t, e.do(req{Method: "DELETE", Path: "/_emulator/namespaces/" + a.Namespace}), 200)

	c := e.newNamespace(t, nil)
	mustStatus(t, e.putBundle(c.control("/bundle"), tgz), 200)
	if got := open(e); got.Header.Get("X-Hostemu-Deployment") != dep.ID {
		t.Errorf("put into another namespace: %d %s", got.Status, got.Body)
	}

	other := newEnv(t)
	mustStatus(t, other.putBundle("/_emulator/bundle", tgz), 200)
	if got := open(other); got.Header.Get("X-Hostemu-Deployment") != dep.ID {
		t.Errorf("put into another hostemu's default world: %d %s", got.Status, got.Body)
	}
	// a label that is neither the world's nor its bundle's stays another namespace's
	if got := other.do(req{Method: "GET", Path: "/", Host: "demo-shop-x.zzzz.hostemu.localhost", Headers: map[string]string{"Accept": "application/json"}}); got.Status != 404 {
		t.Errorf("another label: %d %s", got.Status, got.Body)
	}
}
