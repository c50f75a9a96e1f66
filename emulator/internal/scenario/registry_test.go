package scenario_test

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/hostemu/hostemu/emulator/internal/scenario"
)

func writeFile(tb testing.TB, dir, name, text string) string {
	tb.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		tb.Fatal(err)
	}
	return p
}

func description(tb testing.TB, r *scenario.Registry, name string) string {
	tb.Helper()
	s, ok := r.Get(name)
	if !ok {
		return "<none>"
	}
	return s.Description
}

func TestLoadDirOverridesAndAdds(t *testing.T) {
	t.Parallel()
	r := newRegistry(t)
	dir := t.TempDir()
	def := writeFile(t, dir, "default.yaml", "name: default\ndescription: mine\n")
	extra := writeFile(t, dir, "extra.yml", "description: extra from its file name\n")
	v := r.Version()
	if problems := r.LoadDir(dir); len(problems) > 0 {
		t.Fatal(problems)
	}
	if r.Version() != v+1 {
		t.Errorf("version %d after one change from %d", r.Version(), v)
	}
	if s, _ := r.Get("default"); s.Description != "mine" || s.Source != def {
		t.Errorf("default: %+v", s)
	}
	sources := map[string]string{}
	for _, info := range r.List() {
		sources[info.Name] = info.Source
	}
	if sources["extra"] != extra || sources["default"] != def || sources["flaky"] != scenario.SourceBuiltin {
		t.Errorf("sources %v", sources)
	}
	// Built-ins still take missing sections from the built-in default, not the file.
	if s, _ := r.Get("extra"); s.DeploymentLifecycle[2].Status != "ready" {
		t.Errorf("extra: %+v", s)
	}
}

func TestLoadDirBrokenFileKeepsLastGood(t *testing.T) {
	t.Parallel()
	r := newRegistry(t)
	dir := t.TempDir()
	p := writeFile(t, dir, "mine.yaml", "name: mine\ndescription: v1\n")
	r.LoadDir(dir)
	writeFile(t, dir, "mine.yaml", "name: mine\ndescription: v2\nrate_limits:\n  burst: soon\n")
	problems := r.LoadDir(dir)
	if len(problems) != 1 || problems[0].File != p || problems[0].Line != 4 {
		t.Fatalf("problems %v, want one at %s:4", problems, p)
	}
	if got := description(t, r, "mine"); got != "v1" {
		t.Errorf("in force: %q, want the last good v1", got)
	}
	if got := r.Problems(); len(got) != 1 || got[0] != problems[0] {
		t.Errorf("Problems() = %v", got)
	}
	writeFile(t, dir, "mine.yaml", "name: mine\ndescription: v3\n")
	if problems := r.LoadDir(dir); len(problems) > 0 || len(r.Problems()) > 0 {
		t.Fatalf("problems after the fix: %v", problems)
	}
	if got := description(t, r, "mine"); got != "v3" {
		t.Errorf("in force: %q, want v3", got)
	}
}

func TestLoadDirBrokenFileWithoutPast(t *testing.T) {
	t.Parallel()
	r := newRegistry(t)
	dir := t.TempDir()
	writeFile(t, dir, "default.yaml", "name: default\ndeployments: {uploads: maybe}\n")
	problems := r.LoadDir(dir)
	if len(problems) != 1 || problems[0].Line != 2 {
		t.Fatalf("problems %v", problems)
	}
	if s, _ := r.Get("default"); s.Source != scenario.SourceBuiltin {
		t.Errorf("default from %s; the built-in should stay", s.Source)
	}
}

func TestLoadDirRemovedFile(t *testing.T) {
	t.Parallel()
	r := newRegistry(t)
	dir := t.TempDir()
	p := writeFile(t, dir, "default.yaml", "name: default\ndescription: mine\n")
	writeFile(t, dir, "gone.yaml", "description: soon gone\n")
	r.LoadDir(dir)
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "gone.yaml")); err != nil {
		t.Fatal(err)
	}
	r.LoadDir(dir)
	if s, _ := r.Get("default"); s.Source != scenario.SourceBuiltin {
		t.Errorf("default from %s after its file went; want the built-in back", s.Source)
	}
	if _, ok := r.Get("gone"); ok {
		t.Error("gone is still there")
	}
}

func TestLoadDirDuplicateNames(t *testing.T) {
	t.Parallel()
	r := newRegistry(t)
	dir := t.TempDir()
	a := writeFile(t, dir, "a.yaml", "name: same\ndescription: from a\n")
	b := writeFile(t, dir, "b.yaml", "description: from b\n\nname: same\n")
	problems := r.LoadDir(dir)
	if len(problems) != 1 || problems[0].File != b || problems[0].Line != 3 || !strings.Contains(problems[0].Message, a) {
		t.Fatalf("problems %v, want one at %s:3 naming %s", problems, b, a)
	}
	if got := description(t, r, "same"); got != "from a" {
		t.Errorf("same: %q", got)
	}
}

func TestLoadDirSkipsOtherFiles(t *testing.T) {
	t.Parallel()
	r := newRegistry(t)
	dir := t.TempDir()
	writeFile(t, dir, ".#lock.yaml", "broken: [")
	writeFile(t, dir, "notes.txt", "broken: [")
	writeFile(t, dir, "upper.YAML", "description: upper\n")
	if err := os.Mkdir(filepath.Join(dir, "sub.yaml"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "sub.yaml"), "nested.yaml", "broken: [")
	// A link to a file inside the directory is followed, as Kubernetes ConfigMaps lay
	// them out (links out of it are refused: see TestLoadDirRefusesLinksOut).
	if err := os.Mkdir(filepath.Join(dir, "..data"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "..data"), "linked.yaml", "description: linked\n")
	if err := os.Symlink(filepath.Join("..data", "linked.yaml"), filepath.Join(dir, "linked.yaml")); err != nil {
		t.Skip("no symlinks here:", err)
	}
	if problems := r.LoadDir(dir); len(problems) > 0 {
		t.Fatal(problems)
	}
	if description(t, r, "upper") != "upper" || description(t, r, "linked") != "linked" {
		t.Errorf("list: %v", r.List())
	}
}

func TestLoadDirMissingDir(t *testing.T) {
	t.Parallel()
	r := newRegistry(t)
	dir := filepath.Join(t.TempDir(), "nope")
	problems := r.LoadDir(dir)
	if len(problems) != 1 || problems[0].File != dir || problems[0].Line != 0 {
		t.Fatalf("problems %v", problems)
	}
	if len(r.List()) != 7 {
		t.Errorf("built-ins gone: %v", r.List())
	}
}

func TestVersionAndSubscribe(t *testing.T) {
	t.Parallel()
	r := newRegistry(t)
	dir := t.TempDir()
	calls := 0
	cancel := r.Subscribe(func() { calls++ })
	writeFile(t, dir, "a.yaml", "description: one\n")
	r.LoadDir(dir)
	v := r.Version()
	r.LoadDir(dir) // nothing changed
	if r.Version() != v || calls != 1 {
		t.Errorf("version %d→%d, %d calls: a reload without a change is no change", v, r.Version(), calls)
	}
	s1, _ := r.Get("a")
	writeFile(t, dir, "b.yaml", "description: two\n")
	r.LoadDir(dir)
	if s2, _ := r.Get("a"); s1 != s2 {
		t.Error("an unchanged scenario should keep its pointer across reloads")
	}
	if r.Version() != v+1 || calls != 2 {
		t.Errorf("version %d, %d calls", r.Version(), calls)
	}
	writeFile(t, dir, "b.yaml", "description: [broken\n")
	r.LoadDir(dir) // problems change: a change too
	if r.Version() != v+2 || calls != 3 {
		t.Errorf("version %d, %d calls", r.Version(), calls)
	}
	cancel()
	writeFile(t, dir, "b.yaml", "description: three\n")
	r.LoadDir(dir)
	if calls != 3 {
		t.Errorf("%d calls after cancel", calls)
	}
}

func TestRegistryConcurrentUse(t *testing.T) {
	t.Parallel()
	r := newRegistry(t)
	dir := t.TempDir()
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if s, ok := r.Get("default"); !ok || s.Name != "default" {
					t.Error("default missing during a reload")
					return
				}
				_ = r.List()
				_ = r.Problems()
				_ = r.Version()
			}
		})
	}
	r.Subscribe(func() {})
	for i := range 50 {
		writeFile(t, dir, "default.yaml", "name: default\ndescription: v"+string(rune('a'+i%26))+"\n")
		r.LoadDir(dir)
	}
	close(stop)
	wg.Wait()
}
