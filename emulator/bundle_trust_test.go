package emulator_test

import (
	"io"
	"strings"
	"testing"

	"github.com/hostemu/hostemu/emulator"
)

// A bundle put into a running hostemu changes its world, never what the machine
// trusts: the edge domain and CORS origins stay the process's own, whatever the
// manifest says, and a custom domain with a real name in the bundle's state is no more
// vouched for by the proxy than one attached through the API.
func TestPutBundleNeverWidensTrust(t *testing.T) {
	t.Parallel()
	src := newEnv(t, func(o *emulator.Options) {
		o.EdgeDomain, o.CORSOrigins = "github.com", []string{"https://evil.test"}
	})
	mustStatus(t, src.post("/v1/deployments", "t-deploy", map[string]any{"project_id": "prj_shop", "files": map[string]string{}}), 201)
	mustStatus(t, src.post("/v1/projects/prj_shop/domains", "t-admin", map[string]any{"hostname": "login.bank.com"}), 201)
	src.advance("10m")
	tgz := src.get("/_emulator/bundle", "").Body
	if m := string(members(t, tgz)["manifest.json"]); !strings.Contains(m, `"edge_domain": "github.com"`) || !strings.Contains(m, "https://evil.test") {
		t.Fatalf("the manifest does not carry the source's settings: %s", m)
	}

	e := newTLSEnv(t, func(o *emulator.Options) { o.CORSOrigins = []string{"http://localhost:5173"} })
	mustStatus(t, e.putBundle("/_emulator/bundle", tgz), 200)
	for _, target := range []string{"www.github.com:443", "login.bank.com:443"} {
		_, _, res := e.connect(target)
		body, _ := io.ReadAll(res.Body)
		if res.StatusCode != 403 {
			t.Errorf("CONNECT %s after the bundle: %s %s", target, res.Status, body)
		}
	}
	if _, err := e.handshake("www.github.com"); err == nil {
		t.Error("the CA signed www.github.com after a bundle whose edge domain is github.com")
	}
	if _, err := e.handshake("demo-shop-x.hostemu.localhost"); err != nil {
		t.Errorf("the process's own edge domain: %v", err)
	}
	r := e.do(req{Method: "GET", Path: "/v1/projects", Token: "t-read", Headers: map[string]string{"Origin": "https://evil.test"}})
	if got := r.Header.Get("Access-Control-Allow-Origin"); got != "" {
		t.Errorf("a bundle's CORS origin is echoed: %q", got)
	}
}
