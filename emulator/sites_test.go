package emulator_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/hostemu/hostemu/emulator"
)

// The embedded fixtures' deployments serve small real sites: the first click on a demo
// deployment shows a page naming its project and deployment, with its stylesheet and
// script, not the placeholder.
func TestDefaultFixturesServeRealSites(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(o *emulator.Options) { o.Fixtures = "" })
	list := decode[emulator.DeploymentList](t, e.get("/v1/deployments?limit=100", "hostemu-read"))
	if len(list.Deployments) < 10 {
		t.Fatalf("%d deployments in the default world", len(list.Deployments))
	}
	projects := map[string]string{}
	for _, p := range decode[emulator.ProjectList](t, e.get("/v1/projects", "hostemu-read")).Projects {
		projects[p.ID] = p.Name
	}
	asset := regexp.MustCompile(`(?:href|src)="(/assets/site-[0-9a-f]{8}\.(?:css|js))"`)
	served := 0
	for _, d := range list.Deployments {
		if d.Status != "ready" {
			continue
		}
		h := host(t, d.URL)
		r := e.edgeGet(h, "/", nil)
		if r.Status != 200 || r.Header.Get("X-Hostemu-Placeholder") != "" {
			t.Fatalf("%s: %d (placeholder %q)", d.ID, r.Status, r.Header.Get("X-Hostemu-Placeholder"))
		}
		page := string(r.Body)
		if !strings.Contains(page, d.ID) || !strings.Contains(page, projects[d.ProjectID]) {
			t.Fatalf("%s: the page does not name its deployment and project %q:\n%s", d.ID, projects[d.ProjectID], page)
		}
		links := asset.FindAllStringSubmatch(page, -1)
		if len(links) != 2 {
			t.Fatalf("%s: assets linked: %v", d.ID, links)
		}
		for _, l := range links {
			a := e.edgeGet(h, l[1], nil)
			want := "text/css"
			if strings.HasSuffix(l[1], ".js") {
				want = "javascript"
			}
			if a.Status != 200 || !strings.Contains(a.Header.Get("Content-Type"), want) || a.Header.Get("X-Hostemu-Placeholder") != "" {
				t.Fatalf("%s%s: %d %s", h, l[1], a.Status, a.Header.Get("Content-Type"))
			}
		}
		served++
	}
	if served < 5 {
		t.Fatalf("only %d ready deployments served a site", served)
	}
}
