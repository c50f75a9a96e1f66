package edge_test

import (
	"strings"
	"testing"

	"github.com/hostemu/hostemu/emulator/internal/edge"
)

// siteFiles is a deployment's files map for the path tests; the hash of each is its name,
// which is enough to tell them apart.
var siteFiles = map[string]string{
	"index.html":       "h-index",
	"about.html":       "h-about",
	"docs/index.html":  "h-docs",
	"blog":             "h-blog",
	"blog.html":        "h-blog-html",
	"team/index.html":  "h-team",
	"a/b/c.txt":        "h-c",
	"../secret":        "h-escape",
	"%2e%2e/x":         "h-literal",
	"dir/./x":          "h-dot",
	"assets/app.js":    "h-js",
	"with space.html":  "h-space",
	"über/index.html":  "h-uber",
	"trailing/":        "h-trailing",
	"docs/guide.html":  "h-guide",
	"docs/guide/index": "h-guide-dir",
}

func TestResolvePath(t *testing.T) {
	t.Parallel()
	cases := []struct{ path, want string }{
		{"/", "index.html"},
		{"/about", "about.html"},
		{"/about.html", "about.html"},
		{"/docs", "docs/index.html"},
		{"/docs/", "docs/index.html"},
		{"/blog", "blog"}, // the exact file wins over blog.html
		{"/team", "team/index.html"},
		{"/team/", "team/index.html"},
		{"/a/b/c.txt", "a/b/c.txt"},
		{"/assets/app.js", "assets/app.js"},
		{"/with space", "with space.html"},
		{"/über/", "über/index.html"},
		{"/docs/guide", "docs/guide.html"},
		{"/%2e%2e/x", "%2e%2e/x"}, // a literal name when it reaches us still encoded
		{"/missing", ""},
		{"/about/", ""}, // a directory slash is not a file
		{"/blog.html/", ""},
		{"/../secret", ""},
		{"/docs/../about.html", ""},
		{"/dir/./x", ""},
		{"//about", ""},
		{"//", ""},
		{"/docs//", ""},
		{"/a//b/c.txt", ""},
		{"/a\\b", ""},
		{"/about\x00", ""},
		{"/about\n", ""},
		{"about", ""},
		{"", ""},
		{"/" + strings.Repeat("a", edge.MaxPathLen), ""},
		{"/" + strings.Repeat("a/", 300) + "x", ""},
	}
	for _, c := range cases {
		name, hash, ok := edge.ResolvePath(c.path, siteFiles)
		if ok != (c.want != "") || name != c.want || (ok && hash != siteFiles[name]) {
			t.Errorf("ResolvePath(%q) = %q, %q, %v; want %q", c.path, name, hash, ok, c.want)
		}
	}
}

func TestResolvePathEmptyMap(t *testing.T) {
	t.Parallel()
	if _, _, ok := edge.ResolvePath("/", nil); ok {
		t.Fatal("a nil files map served a file")
	}
}

// FuzzResolvePath: any path maps to a key of the map, one of the candidates its shape
// allows, with no dot segment, empty segment, backslash or NUL; or to nothing.
func FuzzResolvePath(f *testing.F) {
	for _, p := range []string{"/", "/about", "/docs/", "/../secret", "/%2e%2e/x", "//x", "/a\\b", "/a\x00", "/./x", "/" + strings.Repeat("x", 5000)} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, p string) {
		name, hash, ok := edge.ResolvePath(p, siteFiles)
		if !ok {
			if name != "" || hash != "" {
				t.Fatalf("ResolvePath(%q) not ok but %q, %q", p, name, hash)
			}
			return
		}
		if h, in := siteFiles[name]; !in || h != hash {
			t.Fatalf("ResolvePath(%q) = %q, %q: not the map's", p, name, hash)
		}
		rel := strings.TrimPrefix(p, "/")
		candidates := []string{rel, rel + ".html", rel + "/index.html", rel + "index.html"}
		if rel == "" {
			candidates = []string{"index.html"}
		}
		found := false
		for _, c := range candidates {
			found = found || c == name
		}
		if !found {
			t.Fatalf("ResolvePath(%q) = %q, not a candidate", p, name)
		}
		for seg := range strings.SplitSeq(name, "/") {
			if seg == "" || seg == "." || seg == ".." {
				t.Fatalf("ResolvePath(%q) = %q: a dot or empty segment", p, name)
			}
		}
		if strings.ContainsAny(name, "\\\x00") || len(p) > edge.MaxPathLen {
			t.Fatalf("ResolvePath(%q) = %q", p, name)
		}
	})
}
