package cli

import (
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/hostemu/hostemu/emulator"
	"github.com/hostemu/hostemu/emulator/internal/coverage"
)

// docFiles are the documentation pages whose snippets and links the tests check:
// README.md, ARCHITECTURE.md when it exists, and docs/*.md, relative to the module root.
func docFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"README.md"}
	if _, err := os.Stat("../../ARCHITECTURE.md"); err == nil {
		files = append(files, "ARCHITECTURE.md")
	}
	pages, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pages {
		files = append(files, filepath.ToSlash(strings.TrimPrefix(p, "../../")))
	}
	return files
}

func readDoc(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("../../" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// yamlSnippet is one ```yaml block of a documentation page.
type yamlSnippet struct {
	file string
	line int
	text string
}

var yamlBlock = regexp.MustCompile("(?s)\n```yaml\n(.*?)\n```")

// yamlSnippets are the ```yaml blocks of every documentation page.
func yamlSnippets(t *testing.T) []yamlSnippet {
	t.Helper()
	var out []yamlSnippet
	for _, f := range docFiles(t) {
		text := readDoc(t, f)
		for _, m := range yamlBlock.FindAllStringSubmatchIndex(text, -1) {
			out = append(out, yamlSnippet{f, strings.Count(text[:m[2]], "\n") + 1, text[m[2]:m[3]]})
		}
	}
	return out
}

// isCI tells a CI snippet (a workflow, a compose file, a GitLab job) from a scenario or
// fixture file: the latter are checked by emulator.Validate instead.
func isCI(doc map[string]any) bool {
	if doc["jobs"] != nil || doc["services"] != nil {
		return true
	}
	for _, v := range doc {
		if job, ok := v.(map[string]any); ok && (job["services"] != nil || job["script"] != nil) {
			return true
		}
	}
	return false
}

// ciSnippets are the YAML code blocks of the documentation that are CI configuration
// (today all in docs/ci.md), parsed.
func ciSnippets(t *testing.T) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, s := range yamlSnippets(t) {
		var doc map[string]any
		if err := yaml.Unmarshal([]byte(s.text), &doc); err != nil {
			t.Fatalf("%s:%d: a YAML block does not parse: %v\n%s", s.file, s.line, err, s.text)
		}
		if isCI(doc) {
			out = append(out, doc)
		}
	}
	return out
}

// placeholders stand for what a reader fills in; the test fills them in the same way.
var placeholders = strings.NewReplacer(
	"<base64 of 32 bytes>", "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=",
)

// Every YAML block of the documentation that is not CI configuration is a scenario or a
// fixture file, and `hostemu validate` accepts it as written.
func TestDocYAMLSnippetsValidate(t *testing.T) {
	n := 0
	for _, s := range yamlSnippets(t) {
		var doc map[string]any
		if err := yaml.Unmarshal([]byte(s.text), &doc); err != nil {
			t.Errorf("%s:%d: a YAML block does not parse: %v", s.file, s.line, err)
			continue
		}
		if isCI(doc) {
			continue
		}
		if _, ok := doc["ignore"]; ok { // a coverage file (docs/coverage.md)
			if _, err := coverage.ParseConfig(s.file, []byte(s.text)); err != nil {
				t.Errorf("%s:%d: the coverage file does not read:\n%v", s.file, s.line, err)
			}
			continue
		}
		n++
		path := filepath.Join(t.TempDir(), "snippet.yaml")
		text := placeholders.Replace(s.text)
		if err := os.WriteFile(path, []byte(text+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, problems := emulator.Validate([]string{path}); len(problems) > 0 {
			t.Errorf("%s:%d: the snippet does not validate:\n%s", s.file, s.line, strings.Join(problems, "\n"))
		}
	}
	if n < 2 {
		t.Errorf("%d scenario or fixture snippets found; want at least the scenario and the fixture examples", n)
	}
}

// kind tells the snippets apart: GitHub Actions workflows have jobs, compose files
// services, and the rest is GitLab CI.
func kind(doc map[string]any) string {
	switch {
	case doc["jobs"] != nil:
		return "actions"
	case doc["services"] != nil:
		return "compose"
	}
	return "gitlab"
}

// eachMap calls fn on every mapping in v, with the path to it.
func eachMap(path string, v any, fn func(path string, m map[string]any)) {
	switch v := v.(type) {
	case map[string]any:
		fn(path, v)
		for k, x := range v {
			eachMap(path+"."+k, x, fn)
		}
	case []any:
		for _, x := range v {
			eachMap(path+"[]", x, fn)
		}
	}
}

var localhostURL = regexp.MustCompile(`^https?://(localhost|127\.|\[::1\]|0\.0\.0\.0)`)

// The documentation's CI snippets (docs/ci.md) work as written: hostemu reads every HOSTEMU_* variable they
// set, HOSTEMU_PUBLIC_URL never points a container at itself, no health check needs a
// shell (the image has none), and the image job builds and pushes to ghcr.io.
func TestReadmeCISnippets(t *testing.T) {
	docs := ciSnippets(t)
	kinds := map[string]int{}
	flagVars := map[string]bool{}
	for _, s := range settings {
		flagVars[envName(s.name)] = true
	}
	pushes := false
	for _, doc := range docs {
		k := kind(doc)
		kinds[k]++
		eachMap(k, doc, func(path string, m map[string]any) {
			for key, v := range m {
				if strings.HasPrefix(key, "HOSTEMU_") {
					if w := UnknownVariables([]string{key + "="}); w != nil {
						t.Errorf("%s: %s", path, w[0])
					}
					if key == "HOSTEMU_PUBLIC_URL" && localhostURL.MatchString(fmtValue(v)) {
						t.Errorf("%s: HOSTEMU_PUBLIC_URL %v points at the container itself; use the service name", path, v)
					}
				}
			}
			if opts, ok := m["options"].(string); ok && strings.Contains(opts, "--health-cmd") {
				t.Errorf("%s: --health-cmd runs through /bin/sh, which the image lacks: %q", path, opts)
			}
			if hc, ok := m["healthcheck"].(map[string]any); ok {
				if test, ok := hc["test"].([]any); !ok || len(test) == 0 || test[0] != "CMD" {
					t.Errorf("%s: a compose healthcheck test must be exec form [\"CMD\", ...], not %v", path, hc["test"])
				}
			}
			if uses, _ := m["uses"].(string); strings.HasPrefix(uses, "docker/build-push-action@") {
				with, _ := m["with"].(map[string]any)
				if with["push"] == true && strings.Contains(fmtValue(with["tags"]), "steps.meta.outputs.tags") {
					pushes = true
				}
			}
			if m["registry"] == "ghcr.io" {
				kinds["ghcr login"]++
			}
			if images, ok := m["images"].(string); ok && strings.HasPrefix(images, "ghcr.io/") {
				kinds["ghcr image"]++
			}
		})
		// the variables of the hostemu service itself must be flags, not client settings
		for _, env := range serviceEnvs(doc) {
			for key := range env {
				if strings.HasPrefix(key, "HOSTEMU_") && !flagVars[key] {
					t.Errorf("%s: the hostemu service sets %s, which is no serve flag's variable", k, key)
				}
			}
		}
	}
	if kinds["actions"] < 2 || kinds["compose"] != 1 || kinds["gitlab"] < 1 {
		t.Errorf("snippets found: %v; want two GitHub Actions workflows (test, image), one compose file, a GitLab job", kinds)
	}
	if !pushes || kinds["ghcr login"] == 0 || kinds["ghcr image"] == 0 {
		t.Errorf("no job builds and pushes the image to ghcr.io with docker/build-push-action (%v)", kinds)
	}
}

// serviceEnvs are the environments given to hostemu service containers in a snippet.
func serviceEnvs(doc map[string]any) []map[string]any {
	var out []map[string]any
	add := func(v any) {
		if m, ok := v.(map[string]any); ok {
			out = append(out, m)
		}
	}
	switch kind(doc) {
	case "actions":
		jobs, _ := doc["jobs"].(map[string]any)
		for _, j := range jobs {
			j, _ := j.(map[string]any)
			services, _ := j["services"].(map[string]any)
			for _, s := range services {
				s, _ := s.(map[string]any)
				add(s["env"])
			}
		}
	case "compose":
		services, _ := doc["services"].(map[string]any)
		if s, ok := services["hostemu"].(map[string]any); ok {
			add(s["environment"])
		}
	case "gitlab":
		for _, j := range doc {
			j, _ := j.(map[string]any)
			services, _ := j["services"].([]any)
			for _, s := range services {
				s, _ := s.(map[string]any)
				add(s["variables"])
			}
		}
	}
	return out
}

func fmtValue(v any) string {
	s, _ := v.(string)
	return s
}

var (
	mdLink    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	mdHeading = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)
	notSlug   = regexp.MustCompile(`[^\p{L}\p{N}\s_-]`)
)

// anchors are the #fragments the headings of a Markdown text answer to, as GitHub
// makes them: lower case, punctuation dropped, spaces to hyphens, "-1", "-2" on repeats.
func anchors(text string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	fence := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "```") {
			fence = !fence
			continue
		}
		m := mdHeading.FindStringSubmatch(line)
		if fence || m == nil {
			continue
		}
		slug := strings.ReplaceAll(notSlug.ReplaceAllString(strings.ToLower(m[1]), ""), " ", "-")
		if n := seen[slug]; n > 0 {
			out[slug+"-"+strconv.Itoa(n)] = true
		} else {
			out[slug] = true
		}
		seen[slug]++
	}
	return out
}

// Every relative link of README.md, ARCHITECTURE.md and docs/*.md names a file that
// exists, and every #anchor a heading of the page it points at.
func TestDocLinksResolve(t *testing.T) {
	checked := 0
	for _, f := range docFiles(t) {
		text := readDoc(t, f)
		fence := false
		for i, line := range strings.Split(text, "\n") {
			if strings.HasPrefix(line, "```") {
				fence = !fence
			}
			if fence {
				continue
			}
			for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				checked++
				file, anchor, _ := strings.Cut(target, "#")
				dest := f
				if file != "" {
					dest = path.Join(path.Dir(f), file)
				}
				if _, err := os.Stat("../../" + dest); err != nil {
					t.Errorf("%s:%d: %s: no such file %s", f, i+1, target, dest)
					continue
				}
				if anchor == "" {
					continue
				}
				if !strings.HasSuffix(dest, ".md") {
					t.Errorf("%s:%d: %s: an anchor into a file that is not Markdown", f, i+1, target)
					continue
				}
				if !anchors(readDoc(t, dest))[anchor] {
					t.Errorf("%s:%d: %s: %s has no heading for #%s", f, i+1, target, dest, anchor)
				}
			}
		}
	}
	if checked < 20 {
		t.Errorf("only %d relative links checked; the link pattern misses some", checked)
	}
}

// Every GitHub Actions workflow of the documentation, and the repository's own, passes
// action-validator (the schema GitHub itself checks against): a snippet pasted as
// written is a workflow GitHub accepts. .ci/run installs the validator; without it the
// test skips.
func TestWorkflowSnippetsValidate(t *testing.T) {
	bin, err := exec.LookPath("action-validator")
	if err != nil {
		t.Skip("action-validator (npm @action-validator/cli) is not installed")
	}
	dir := t.TempDir()
	var files []string
	for i, s := range yamlSnippets(t) {
		var doc map[string]any
		if yaml.Unmarshal([]byte(s.text), &doc) != nil || kind(doc) != "actions" {
			continue
		}
		f := filepath.Join(dir, fmt.Sprintf("%s-%d-%d.yml", strings.NewReplacer("/", "_", ".", "_").Replace(s.file), s.line, i))
		if err := os.WriteFile(f, []byte(s.text), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	own, _ := filepath.Glob("../../.github/workflows/*.yml")
	files = append(files, own...)
	if len(files) < 4 {
		t.Fatalf("found %d workflows to validate; the docs hold more", len(files))
	}
	for _, f := range files {
		out, err := exec.Command(bin, f).CombinedOutput()
		if err != nil {
			t.Errorf("%s does not validate: %v\n%s", filepath.Base(f), err, out)
		}
	}
}
