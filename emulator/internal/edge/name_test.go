package edge_test

import (
	"strings"
	"testing"

	"github.com/hostemu/hostemu/emulator/internal/edge"
	"github.com/hostemu/hostemu/emulator/internal/state"
)

func TestDeploymentHost(t *testing.T) {
	t.Parallel()
	cases := []struct{ project, id, ns, want string }{
		{"Demo Shop", "dpl_abc123", "", "demo-shop-abc123.hostemu.localhost"},
		{"My Shop", "dpl_old", "", "my-shop-old.hostemu.localhost"},
		{"demo-shop", "dpl_abc123", "k3f9", "demo-shop-abc123.k3f9.hostemu.localhost"},
		{"!!!", "dpl_x1", "", "app-x1.hostemu.localhost"},
		{strings.Repeat("long-name-", 10), "dpl_x1", "", strings.TrimRight(strings.Repeat("long-name-", 10)[:60], "-") + "-x1.hostemu.localhost"},
	}
	for _, c := range cases {
		if got := edge.DeploymentHost(c.project, c.id, c.ns, edge.DefaultEdgeDomain); got != c.want {
			t.Errorf("DeploymentHost(%q, %q, %q) = %q, want %q", c.project, c.id, c.ns, got, c.want)
		}
	}
	// An id that is not lowercase alphanumeric gets a digest suffix, still one valid label.
	label := state.DeploymentLabel("shop", "dpl_Not/Safe")
	if len(label) != len("shop-")+20 || strings.ContainsAny(label, "/ABCDEFGHIJKLMNOPQRSTUVWXYZ") {
		t.Errorf("DeploymentLabel with an unsafe id = %q", label)
	}
}

func TestParseEdgeHost(t *testing.T) {
	t.Parallel()
	cases := []struct {
		host      string
		want      edge.EdgeName
		under, ok bool
	}{
		{"demo-shop-abc123.hostemu.localhost", edge.EdgeName{Label: "demo-shop-abc123"}, true, true},
		{"demo-shop-abc123.k3f9.hostemu.localhost", edge.EdgeName{Label: "demo-shop-abc123", Namespace: "k3f9"}, true, true},
		{"hostemu.localhost", edge.EdgeName{}, false, false},
		{"xhostemu.localhost", edge.EdgeName{}, false, false},
		{"shop.example.test", edge.EdgeName{}, false, false},
		{"nohyphen.hostemu.localhost", edge.EdgeName{}, true, false},
		{"a-b.c.d.hostemu.localhost", edge.EdgeName{}, true, false},
		{".hostemu.localhost", edge.EdgeName{}, false, false},
		{"a-b..hostemu.localhost", edge.EdgeName{}, true, false},
		{"-ab.hostemu.localhost", edge.EdgeName{}, true, false},
	}
	for _, c := range cases {
		got, under, ok := edge.ParseEdgeHost(c.host, edge.DefaultEdgeDomain)
		if got != c.want || under != c.under || ok != c.ok {
			t.Errorf("ParseEdgeHost(%q) = %+v, %v, %v; want %+v, %v, %v", c.host, got, under, ok, c.want, c.under, c.ok)
		}
	}
}

// FuzzDeploymentHost: whatever the project name, id and namespace label, the host built
// parses back to the same label and namespace.
func FuzzDeploymentHost(f *testing.F) {
	f.Add("Demo Shop", "dpl_abc123", "")
	f.Add("", "", "k3f9")
	f.Add("ü", "dpl_"+strings.Repeat("a", 41), "")
	f.Fuzz(func(t *testing.T, project, id, ns string) {
		if ns != "" && !validNamespaceLabel(ns) {
			return
		}
		host := edge.DeploymentHost(project, id, ns, edge.DefaultEdgeDomain)
		got, under, ok := edge.ParseEdgeHost(host, edge.DefaultEdgeDomain)
		if !under || !ok || got.Label != state.DeploymentLabel(project, id) || got.Namespace != ns {
			t.Fatalf("DeploymentHost(%q, %q, %q) = %q parses to %+v, %v, %v", project, id, ns, host, got, under, ok)
		}
	})
}

func validNamespaceLabel(s string) bool {
	if len(s) > 63 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}
