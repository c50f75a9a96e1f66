package state

import (
	"crypto/sha256"
	"encoding/base32"
	"slices"
	"strings"
	"testing"
)

func TestDeploymentURL(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, id, want string }{
		{"shop", "dpl_abc123", "https://shop-abc123.hostemu.test"},
		{"Demo Shop!", "dpl_x", "https://demo-shop-x.hostemu.test"},
		{"日本", "dpl_x", "https://app-x.hostemu.test"},
		{strings.Repeat("long", 20), "dpl_abcdefghij0123456789", "https://" + strings.Repeat("long", 11)[:42] + "-abcdefghij0123456789.hostemu.test"},
	}
	for _, tt := range tests {
		if got := DeploymentURL(tt.name, tt.id, "hostemu.test", URLForm{}); got != tt.want {
			t.Errorf("DeploymentURL(%q, %q) = %q, want %q", tt.name, tt.id, got, tt.want)
		}
	}
	// Ids that are not lowercase letters and digits get a digest: valid and distinct.
	a, b := DeploymentURL("shop", "dpl_A_b", "", URLForm{}), DeploymentURL("shop", "dpl_a_b", "", URLForm{})
	for _, u := range []string{a, b} {
		host := strings.TrimPrefix(u, "https://")
		if label, _, _ := strings.Cut(host, "."); !validTestHostname(host) || len(label) > 63 {
			t.Errorf("invalid url %q", u)
		}
	}
	if a == b {
		t.Errorf("ids differing in case share url %q", a)
	}
}

func validTestHostname(h string) bool {
	n, ok := NormalizeHostname(h, false)
	return ok && n == h
}

// A deployment URL carries the port a client must use, and no port that is the scheme's
// own: the url the API hands out opens as given.
func TestDeploymentURLForm(t *testing.T) {
	t.Parallel()
	tests := []struct {
		form URLForm
		want string
	}{
		{URLForm{}, "https://shop-abc.hostemu.localhost"},
		{URLForm{Port: 4743}, "https://shop-abc.hostemu.localhost:4743"},
		{URLForm{Scheme: "https", Port: 443}, "https://shop-abc.hostemu.localhost"},
		{URLForm{Scheme: "http", Port: 4700}, "http://shop-abc.hostemu.localhost:4700"},
		{URLForm{Scheme: "http", Port: 80}, "http://shop-abc.hostemu.localhost"},
		{URLForm{Scheme: "http", Port: 443}, "http://shop-abc.hostemu.localhost:443"},
	}
	for _, tt := range tests {
		if got := DeploymentURL("shop", "dpl_abc", "", tt.form); got != tt.want {
			t.Errorf("DeploymentURL with %+v = %q, want %q", tt.form, got, tt.want)
		}
	}
	if got := (URLForm{Port: 4743}).String(); got != "https://<host>:4743" {
		t.Errorf("String() = %q", got)
	}
}

func TestRehomeURLs(t *testing.T) {
	snap := Snapshot{Deployments: []Deployment{
		{URL: "https://shop-a.hostemu.localhost:41873", Logs: []LogLine{{Text: "Cloning"}, {Text: "Build completed; deployment ready at https://shop-a.hostemu.localhost:41873"}}},
		{URL: "https://shop-b.hostemu.localhost"},
		{URL: "http://shop-c.hostemu.localhost:4700"},
		{URL: "https://shop-d.other.test:41873"}, // another edge's: left
		{URL: "https://shop-e.hostemu.localhost:4743"},
		{URL: "::not a url"},
	}}
	if n := RehomeURLs(&snap, "", URLForm{Scheme: "https", Port: 4743}); n != 3 {
		t.Errorf("moved %d URLs, want 3", n)
	}
	var got []string
	for _, d := range snap.Deployments {
		got = append(got, d.URL)
	}
	want := []string{"https://shop-a.hostemu.localhost:4743", "https://shop-b.hostemu.localhost:4743", "https://shop-c.hostemu.localhost:4743",
		"https://shop-d.other.test:41873", "https://shop-e.hostemu.localhost:4743", "::not a url"}
	if !slices.Equal(got, want) {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	if l := snap.Deployments[0].Logs; l[0].Text != "Cloning" || l[1].Text != "Build completed; deployment ready at https://shop-a.hostemu.localhost:4743" {
		t.Errorf("logs: %q", l)
	}
}

// Test names are the reserved ones and every name under them; a real name that merely
// contains one is not.
func TestIsTestName(t *testing.T) {
	t.Parallel()
	for host, want := range map[string]bool{
		"hostemu.localhost": true, "a.b.localhost": true, "shop.test": true, "x.example": true, "y.invalid": true,
		"example.com": true, "www.example.net": true, "example.org": true,
		"localhost": false, "test": false, "github.com": false, "example.com.evil.io": false, "myexample.com": false,
		"test.github.com": false, "localhost.evil.io": false, "": false,
	} {
		if got := IsTestName(host); got != want {
			t.Errorf("IsTestName(%q) = %v, want %v", host, got, want)
		}
	}
}

// DeploymentURL, written in one allocation, is the URL of the label as DeploymentLabel
// always made it (the project name's slug, the id's suffix), and isSlug is Slug(s) == s.
func FuzzDeploymentURL(f *testing.F) {
	f.Add("shop", "dpl_abc123", "", "", 0)
	f.Add("Demo Shop!", "dpl_x", "hostemu.test", "http", 4700)
	f.Add("a--b", "dpl_A_b", "e.test", "https", 443)
	f.Add("-a-", "dpl_"+strings.Repeat("z", 30), "", "", 80)
	f.Add(strings.Repeat("long-", 20), "dpl_abcdefghij0123456789", "", "http", 80)
	f.Fuzz(func(t *testing.T, name, id, domain, scheme string, port int) {
		if isSlug(name) != (Slug(name) == name) {
			t.Fatalf("isSlug(%q) = %v", name, isSlug(name))
		}
		form := URLForm{Scheme: scheme, Port: port}
		label := oldDeploymentLabel(name, id)
		d := domain
		if d == "" {
			d = DefaultEdgeDomain
		}
		if got, want := DeploymentURL(name, id, domain, form), form.URL(label+"."+d); got != want {
			t.Fatalf("DeploymentURL(%q, %q, %q, %+v) = %q, want %q", name, id, domain, form, got, want)
		}
		if got := DeploymentLabel(name, id); got != label {
			t.Fatalf("DeploymentLabel(%q, %q) = %q, want %q", name, id, got, label)
		}
	})
}

// oldDeploymentLabel is DeploymentLabel as it was, slugging every name.
func oldDeploymentLabel(projectName, deploymentID string) string {
	suffix := strings.TrimPrefix(deploymentID, "dpl_")
	if !urlSafe(suffix) {
		sum := sha256.Sum256([]byte(deploymentID))
		suffix = strings.ToLower(base32.StdEncoding.EncodeToString(sum[:15]))[:20]
	}
	nameSlug := Slug(projectName)
	if max := 63 - 1 - len(suffix); len(nameSlug) > max {
		nameSlug = strings.TrimRight(nameSlug[:max], "-")
	}
	if nameSlug == "" {
		nameSlug = "app"
	}
	return nameSlug + "-" + suffix
}

// labelOf, in one pass, is hostOfURL's host up to its first dot, for any URL.
func FuzzLabelOf(f *testing.F) {
	for _, u := range []string{"https://shop-abc.hostemu.localhost", "http://a.b:8080/x", "http://a:1", "a.b", "://", "x://y/z.w", "", "http://.", "https://shop-abc.v4zjakqwth2u.hostemu.localhost:45415/"} {
		f.Add(u)
	}
	f.Fuzz(func(t *testing.T, url string) {
		want := hostOfURL(url)
		if i := strings.IndexByte(want, '.'); i >= 0 {
			want = want[:i]
		}
		if got := labelOf(url); got != want {
			t.Fatalf("labelOf(%q) = %q, want %q", url, got, want)
		}
	})
}

// ValidFileHash, which reads eight bytes at a time, takes a digest with any one byte
// changed exactly when the byte is a lowercase hex digit, at every place, and only
// strings of 64 bytes.
func TestValidFileHashEachByte(t *testing.T) {
	t.Parallel()
	digest := []byte("9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08")
	for i := range digest {
		for c := range 256 {
			h := slices.Clone(digest)
			h[i] = byte(c)
			want := c >= '0' && c <= '9' || c >= 'a' && c <= 'f'
			if ValidFileHash(string(h)) != want {
				t.Fatalf("byte %d as %#x: %v, want %v", i, c, !want, want)
			}
		}
	}
	for _, h := range []string{"", string(digest[:63]), string(digest) + "0", strings.ToUpper(string(digest))} {
		if ValidFileHash(h) {
			t.Errorf("%q taken", h)
		}
	}
}
