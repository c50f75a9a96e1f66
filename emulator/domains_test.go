package emulator_test

import (
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/hostemu/hostemu/emulator"
)

func TestAddDomain(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.post("/v1/projects/prj_shop/domains", "t-admin", map[string]any{"hostname": "Blog.Shop.Test", "redirect_to": "shop.test"})
	mustStatus(t, r, 201)
	d := decode[emulator.Domain](t, r)
	if d.Hostname != "blog.shop.test" || d.ProjectID != "prj_shop" || d.Status != "pending" || orNull(d.RedirectTo) != "shop.test" {
		t.Fatalf("add answer %+v", d)
	}
	if !time.Time(d.CreatedAt).Equal(testStart) {
		t.Errorf("created_at %v", time.Time(d.CreatedAt))
	}
	// present and null, not left out: the raw shape, on purpose
	tls := r.JSON(t)["tls"].(map[string]any)
	if v, ok := tls["expires_at"]; !ok || v != nil {
		t.Errorf("tls.expires_at must be present and null while pending: %v", tls)
	}
	if v, ok := tls["issuer"]; !ok || v != nil || d.TLS.Status != "pending" {
		t.Errorf("tls = %v", tls)
	}
	if len(d.DNS) != 2 {
		t.Fatalf("dns = %+v, want A and AAAA", d.DNS)
	}
	for _, rr := range d.DNS {
		if rr.Name != "blog" {
			t.Errorf("record name %v, want blog (relative to the apex)", rr.Name)
		}
		ip, err := netip.ParseAddr(rr.Value)
		if err != nil {
			t.Fatalf("record value %v: %v", rr.Value, err)
		}
		doc := false
		for _, p := range []string{"192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24", "2001:db8::/32"} {
			doc = doc || netip.MustParsePrefix(p).Contains(ip)
		}
		if !doc || (rr.Type == "A") != ip.Is4() {
			t.Errorf("record %+v: want A/AAAA values from the documentation ranges", rr)
		}
	}
	// no redirect: redirect_to is present and null (the raw shape, on purpose)
	pr := e.post("/v1/projects/prj_shop/domains", "t-admin", map[string]any{"hostname": "*.shop.test"})
	if v, ok := pr.JSON(t)["redirect_to"]; !ok || v != nil {
		t.Errorf("redirect_to = %v, want null", v)
	}
	plain := decode[emulator.Domain](t, pr)
	if plain.Hostname != "*.shop.test" || len(plain.DNS) == 0 || plain.DNS[0].Name != "*" {
		t.Errorf("wildcard domain %+v", plain)
	}
	apex := decode[emulator.Domain](t, e.post("/v1/projects/prj_blog/domains", "t-admin", map[string]any{"hostname": "blog.test"}))
	if len(apex.DNS) == 0 || apex.DNS[0].Name != "@" {
		t.Errorf("apex record name %+v, want @", apex.DNS)
	}
}

func TestDomainLifecycleAndCertificate(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	mustStatus(t, e.post("/v1/projects/prj_blog/domains", "t-admin", map[string]any{"hostname": "blog.test"}), 201)
	status := func() emulator.Domain {
		t.Helper()
		ds := decode[emulator.DomainList](t, e.get("/v1/projects/prj_blog/domains", "t-read")).Domains
		if len(ds) == 0 {
			t.Fatal("no domain")
		}
		return ds[0]
	}
	expires := func(d emulator.Domain) time.Time {
		t.Helper()
		if d.TLS.ExpiresAt == nil {
			t.Fatalf("tls.expires_at is null: %+v", d.TLS)
		}
		return *d.TLS.ExpiresAt
	}
	e.advance("2s")
	if d := status(); d.Status != "verifying" || d.TLS.Status != "pending" {
		t.Fatalf("after 2s: %+v", d)
	}
	e.advance("10s")
	d := status()
	if d.Status != "active" || d.TLS.Status != "issued" || orNull(d.TLS.Issuer) != "hostemu Test CA" {
		t.Fatalf("after 12s: %+v", d)
	}
	exp := expires(d)
	if want := testStart.Add(12*time.Second + 90*24*time.Hour); !exp.Equal(want) {
		t.Fatalf("expires_at %v, want %v (90 days after issue)", exp, want)
	}
	// renewal 30 days before expiry moves expires_at forward
	e.advance("60d")
	exp2 := expires(status())
	if want := exp.Add(-30 * 24 * time.Hour).Add(90 * 24 * time.Hour); !exp2.Equal(want) {
		t.Fatalf("after renewal expires_at %v, want %v", exp2, want)
	}
}

func TestDomainErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	long := strings.Repeat("a", 64) + ".test"
	tests := []struct {
		name, path, token string
		body              any
		status            int
		code              string
	}{
		{"deploy scope", "/v1/projects/prj_shop/domains", "t-deploy", map[string]any{"hostname": "x.test"}, 403, "insufficient_scope"},
		{"read scope", "/v1/projects/prj_shop/domains", "t-read", map[string]any{"hostname": "x.test"}, 403, "insufficient_scope"},
		{"missing hostname", "/v1/projects/prj_shop/domains", "t-admin", map[string]any{}, 400, "invalid_request"},
		{"hostname number", "/v1/projects/prj_shop/domains", "t-admin", `{"hostname":5}`, 400, "invalid_request"},
		{"single label", "/v1/projects/prj_shop/domains", "t-admin", map[string]any{"hostname": "localhost"}, 400, "invalid_hostname"},
		{"underscore", "/v1/projects/prj_shop/domains", "t-admin", map[string]any{"hostname": "a_b.test"}, 400, "invalid_hostname"},
		{"label too long", "/v1/projects/prj_shop/domains", "t-admin", map[string]any{"hostname": long}, 400, "invalid_hostname"},
		{"inner wildcard", "/v1/projects/prj_shop/domains", "t-admin", map[string]any{"hostname": "a.*.test"}, 400, "invalid_hostname"},
		{"double wildcard", "/v1/projects/prj_shop/domains", "t-admin", map[string]any{"hostname": "*.*.test"}, 400, "invalid_hostname"},
		{"ip address", "/v1/projects/prj_shop/domains", "t-admin", map[string]any{"hostname": "10.0.0.1"}, 400, "invalid_hostname"},
		{"hyphen edge", "/v1/projects/prj_shop/domains", "t-admin", map[string]any{"hostname": "-a.test"}, 400, "invalid_hostname"},
		// names hostemu keeps for itself: a page there could share an origin with it
		{"under .localhost", "/v1/projects/prj_shop/domains", "t-admin", map[string]any{"hostname": "app.localhost"}, 400, "invalid_hostname"},
		{"wildcard under .localhost", "/v1/projects/prj_shop/domains", "t-admin", map[string]any{"hostname": "*.pwn.localhost"}, 400, "invalid_hostname"},
		{"under .localhost, any case", "/v1/projects/prj_shop/domains", "t-admin", map[string]any{"hostname": "App.LocalHost."}, 400, "invalid_hostname"},
		{"the edge domain", "/v1/projects/prj_shop/domains", "t-admin", map[string]any{"hostname": "hostemu.localhost"}, 400, "invalid_hostname"},
		{"under the edge domain", "/v1/projects/prj_shop/domains", "t-admin", map[string]any{"hostname": "x.hostemu.localhost"}, 400, "invalid_hostname"},
		{"bad redirect", "/v1/projects/prj_shop/domains", "t-admin", map[string]any{"hostname": "x.test", "redirect_to": "not a host"}, 400, "invalid_hostname"},
		{"wildcard redirect", "/v1/projects/prj_shop/domains", "t-admin", map[string]any{"hostname": "x.test", "redirect_to": "*.shop.test"}, 400, "invalid_hostname"},
		{"redirect to itself", "/v1/projects/prj_shop/domains", "t-admin", map[string]any{"hostname": "x.test", "redirect_to": "x.test"}, 400, "invalid_request"},
		{"taken in same project", "/v1/projects/prj_shop/domains", "t-admin", map[string]any{"hostname": "shop.test"}, 409, "domain_already_exists"},
		{"taken by another project", "/v1/projects/prj_blog/domains", "t-admin", map[string]any{"hostname": "SHOP.test."}, 409, "domain_already_exists"},
		{"unknown project", "/v1/projects/prj_nope/domains", "t-admin", map[string]any{"hostname": "x.test"}, 404, "project_not_found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.post(tt.path, tt.token, tt.body)
			if r.Status != tt.status || r.Code() != tt.code {
				t.Fatalf("got %d %s, want %d %s: %s", r.Status, r.Code(), tt.status, tt.code, r.Body)
			}
		})
	}
	if r := e.get("/v1/projects/prj_nope/domains", "t-read"); r.Status != 404 || r.Code() != "project_not_found" {
		t.Errorf("list of unknown project: %d %s", r.Status, r.Code())
	}
}

func TestDomainWriteScopePolicy(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// the state document is edited and sent back whole: a map keeps every field as it came
	snap := e.get("/_emulator/state", "").JSON(t)
	snap["policy"] = map[string]any{"domain_write_scope": "deploy"}
	mustStatus(t, e.do(req{Method: "PUT", Path: "/_emulator/state", Body: snap}), 200)
	mustStatus(t, e.post("/v1/projects/prj_blog/domains", "t-deploy", map[string]any{"hostname": "x.test"}), 201)
	mustStatus(t, e.do(req{Method: "DELETE", Path: "/v1/projects/prj_blog/domains/x.test", Token: "t-deploy"}), 200)
}

func TestListAndDeleteDomains(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.get("/v1/projects/prj_shop/domains", "t-read")
	mustStatus(t, r, 200)
	m := decode[emulator.DomainList](t, r)
	if len(m.Domains) != 2 || m.Domains[0].Hostname != "www.shop.test" || m.NextCursor != nil {
		t.Fatalf("domains %+v", m)
	}
	if www := m.Domains[0]; orNull(www.RedirectTo) != "shop.test" {
		t.Errorf("www redirect_to %v", orNull(www.RedirectTo))
	}
	p1 := decode[emulator.DomainList](t, e.get("/v1/projects/prj_shop/domains?limit=1", "t-read"))
	if p1.NextCursor == nil {
		t.Fatal("limit=1 gave no next_cursor")
	}
	p2 := decode[emulator.DomainList](t, e.get("/v1/projects/prj_shop/domains?limit=1&cursor="+*p1.NextCursor, "t-read"))
	if len(p2.Domains) == 0 || p2.Domains[0].Hostname != "shop.test" {
		t.Errorf("second page %+v", p2)
	}
	if r := e.get("/v1/projects/prj_blog/domains?cursor="+*p1.NextCursor, "t-read"); r.Code() != "invalid_cursor" {
		t.Errorf("a cursor of another project's list: %d %s", r.Status, r.Code())
	}

	del := e.do(req{Method: "DELETE", Path: "/v1/projects/prj_shop/domains/shop.test", Token: "t-admin"})
	mustStatus(t, del, 200)
	if m := decode[emulator.DomainDeleted](t, del); m.Hostname != "shop.test" || !m.Deleted {
		t.Fatalf("delete answer %+v", m)
	}
	if n := len(decode[emulator.DomainList](t, e.get("/v1/projects/prj_shop/domains", "t-read")).Domains); n != 1 {
		t.Errorf("%d domains after delete, want 1", n)
	}
	// free at once, for any project
	mustStatus(t, e.post("/v1/projects/prj_blog/domains", "t-admin", map[string]any{"hostname": "shop.test"}), 201)
	// the state document has no view of its own: read the one list this test needs
	detaching := func() []string {
		var hosts []string
		for _, d := range decode[struct {
			Detaching []struct{ Hostname string } `json:"detaching"`
		}](t, e.get("/_emulator/state", "")).Detaching {
			hosts = append(hosts, d.Hostname)
		}
		return hosts
	}
	if det := detaching(); len(det) != 1 {
		t.Fatalf("detaching = %v, want shop.test until 5 s after delete", det)
	}
	e.advance("5s")
	if det := detaching(); len(det) != 0 {
		t.Fatalf("detaching after 5 s = %v", det)
	}

	for _, tt := range []struct {
		path, token string
		status      int
		code        string
	}{
		{"/v1/projects/prj_shop/domains/nope.test", "t-admin", 404, "domain_not_found"},
		{"/v1/projects/prj_shop/domains/shop.test", "t-admin", 404, "domain_not_found"}, // now in prj_blog
		{"/v1/projects/prj_nope/domains/shop.test", "t-admin", 404, "project_not_found"},
		{"/v1/projects/prj_blog/domains/shop.test", "t-deploy", 403, "insufficient_scope"},
	} {
		r := e.do(req{Method: "DELETE", Path: tt.path, Token: tt.token})
		if r.Status != tt.status || r.Code() != tt.code {
			t.Errorf("DELETE %s: %d %s, want %d %s", tt.path, r.Status, r.Code(), tt.status, tt.code)
		}
	}
	// a wildcard domain can be deleted by its literal name
	mustStatus(t, e.post("/v1/projects/prj_blog/domains", "t-admin", map[string]any{"hostname": "*.blog.test"}), 201)
	mustStatus(t, e.do(req{Method: "DELETE", Path: "/v1/projects/prj_blog/domains/*.blog.test", Token: "t-admin"}), 200)
}

// With --edge-domain, names under that domain are hostemu's too; .localhost stays so.
func TestCustomDomainsUnderTheEdgeDomain(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(o *emulator.Options) { o.EdgeDomain = "edge.test" })
	for host, want := range map[string]int{"edge.test": 400, "a.edge.test": 400, "*.edge.test": 400, "a.localhost": 400,
		"notedge.test": 201, "shop2.test": 201} {
		r := e.post("/v1/projects/prj_shop/domains", "t-admin", map[string]any{"hostname": host})
		if r.Status != want || (want == 400 && r.Code() != "invalid_hostname") {
			t.Errorf("%s: %d %s", host, r.Status, r.Body)
		}
	}
}
