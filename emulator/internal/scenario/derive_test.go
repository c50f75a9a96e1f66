package scenario_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"
)

// A derived registry (a namespace's, given scenarios of its own) sees its base's
// reloads for every name its documents do not define, as a world on the base does: it
// was a snapshot taken at Derive, so a file fixed later stayed broken in it, and a
// file changed stayed at its old version. The reloads are LoadDir calls, no watcher.
func TestDeriveFollowsBaseReloads(t *testing.T) {
	t.Parallel()
	const (
		lifecycle = "deployments:\n  lifecycle: [{status: queued}, {status: building, after: 1s}, {status: ready, after: 1s}]\n"
		broken    = "deployments: [\n"
	)
	own := "name: own\ndescription: the namespace's\n" + lifecycle
	tests := []struct {
		name    string
		file    string // mine.yaml at the derive; "" for none
		then    string // mine.yaml after it; "" to delete it
		scen    string // the name asked
		want    string // its description in the derived registry after the reload; "<none>" when absent
		broken  bool   // whether the derived registry calls it broken after the reload
		ownDocs []string
	}{
		{name: "broken then fixed", file: "name: mine\n" + broken, then: "name: mine\ndescription: fixed\n" + lifecycle,
			scen: "mine", want: "fixed"},
		{name: "changed", file: "name: mine\ndescription: v1\n" + lifecycle, then: "name: mine\ndescription: v2\n" + lifecycle,
			scen: "mine", want: "v2"},
		{name: "added", then: "name: mine\ndescription: new\n" + lifecycle, scen: "mine", want: "new"},
		{name: "deleted", file: "name: mine\ndescription: v1\n" + lifecycle, scen: "mine", want: "<none>"},
		{name: "broken since", file: "name: mine\ndescription: v1\n" + lifecycle, then: "name: mine\n" + broken,
			scen: "mine", want: "v1", broken: true}, // the last good version, refused when chosen, as in the base
		{name: "a built-in overridden, then the file deleted", file: "name: flaky\ndescription: mine\n" + lifecycle,
			scen: "flaky", want: builtinDescription(t, "flaky")},
		{name: "a document's scenario stays the document's", file: "name: own\ndescription: v1\n" + lifecycle, then: "name: own\ndescription: v2\n" + lifecycle,
			scen: "own", want: "the namespace's", ownDocs: []string{own}},
		{name: "a document's scenario over a file broken since", file: "name: own\ndescription: v1\n" + lifecycle, then: "name: own\n" + broken,
			scen: "own", want: "the namespace's", ownDocs: []string{own}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path := filepath.Join(dir, "mine.yaml")
			if tt.file != "" {
				writeFile(t, dir, "mine.yaml", tt.file)
			}
			base := newRegistry(t)
			base.LoadDir(dir)
			docs := tt.ownDocs
			if docs == nil {
				docs = []string{"name: other\n" + lifecycle}
			}
			d, problems := base.Derive("scenarios", docs)
			if len(problems) > 0 {
				t.Fatal(problems)
			}
			if tt.then == "" {
				if err := os.Remove(path); err != nil {
					t.Fatal(err)
				}
			} else {
				writeFile(t, dir, "mine.yaml", tt.then)
			}
			base.LoadDir(dir)
			if got := description(t, d, tt.scen); got != tt.want {
				t.Errorf("%s in the derived registry: %q, want %q", tt.scen, got, tt.want)
			}
			if msg := d.BrokenMessage(tt.scen); (msg != "") != tt.broken {
				t.Errorf("BrokenMessage(%s) = %q, want broken %v", tt.scen, msg, tt.broken)
			}
			if tt.ownDocs == nil && d.BrokenMessage(tt.scen) != base.BrokenMessage(tt.scen) {
				t.Errorf("the derived registry's refusal %q differs from the base's %q", d.BrokenMessage(tt.scen), base.BrokenMessage(tt.scen))
			}
			if got, want := len(d.Problems()), len(base.Problems()); got != want {
				t.Errorf("%d problems in the derived registry, %d in the base", got, want)
			}
			if d.Version() != base.Version() {
				t.Errorf("version %d, the base's %d", d.Version(), base.Version())
			}
			if _, ok := d.Get("other"); tt.ownDocs == nil && !ok {
				t.Error("the derived registry lost its document's scenario")
			}
		})
	}
}

func builtinDescription(tb testing.TB, name string) string {
	tb.Helper()
	return builtin(tb, name).Description
}

// A derived registry read while its base reloads over and over: no race (-race), and
// every read sees one whole snapshot, its document's scenario included.
func TestDeriveReadDuringReloads(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const lifecycle = "deployments:\n  lifecycle: [{status: queued}, {status: building, after: 1s}, {status: ready, after: 1s}]\n"
	writeFile(t, dir, "mine.yaml", "name: mine\ndescription: v0\n"+lifecycle)
	base := newRegistry(t)
	base.LoadDir(dir)
	d, problems := base.Derive("scenarios", []string{"name: own\n" + lifecycle})
	if len(problems) > 0 {
		t.Fatal(problems)
	}
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
				if _, ok := d.Get("own"); !ok {
					t.Error("a read missed the document's scenario")
					return
				}
				if _, ok := d.Get("mine"); !ok {
					t.Error("a read missed the base's scenario")
					return
				}
				d.List()
				d.BrokenMessage("mine")
			}
		})
	}
	for i := 1; i <= 50; i++ {
		writeFile(t, dir, "mine.yaml", fmt.Sprintf("name: mine\ndescription: v%d\n%s", i, lifecycle))
		base.LoadDir(dir)
	}
	close(stop)
	wg.Wait()
	if got := description(t, d, "mine"); got != "v50" {
		t.Errorf("after the last reload: %q", got)
	}
}

// A derived registry (a namespace's) is not kept by its base: it follows the base by
// reading it, with nothing of it left in the base, so once its namespace lets it go
// (deleted, expired) it is collected while the base lives on and reloads. A derive
// that subscribed to its base, or a base that kept its derived registries, would hold
// every namespace's registry and scenarios for the server's lifetime.
func TestDerivedRegistryIsLetGo(t *testing.T) {
	t.Parallel()
	const lifecycle = "deployments:\n  lifecycle: [{status: queued}, {status: building, after: 1s}, {status: ready, after: 1s}]\n"
	dir := t.TempDir()
	writeFile(t, dir, "mine.yaml", "name: mine\ndescription: v1\n"+lifecycle)
	base := newRegistry(t)
	base.LoadDir(dir)
	collected := make(chan struct{})
	func() {
		d, problems := base.Derive("scenarios", []string{"name: own\n" + lifecycle})
		if len(problems) > 0 {
			t.Fatal(problems)
		}
		runtime.AddCleanup(d, func(ch chan struct{}) { close(ch) }, collected)
		writeFile(t, dir, "mine.yaml", "name: mine\ndescription: v2\n"+lifecycle)
		base.LoadDir(dir)
		if got := description(t, d, "mine"); got != "v2" { // read after a reload: overlaid again
			t.Fatalf("mine in the derived registry: %q", got)
		}
	}()
	deadline := time.Now().Add(5 * time.Second)
	for {
		runtime.GC()
		select {
		case <-collected:
			writeFile(t, dir, "mine.yaml", "name: mine\ndescription: v3\n"+lifecycle)
			base.LoadDir(dir) // the base reloads on, with nothing of the derived one to reach
			if got := description(t, base, "mine"); got != "v3" {
				t.Errorf("the base after the derived registry went: %q", got)
			}
			return
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("the derived registry is still reachable 5 s after it was let go: its base keeps it")
		}
	}
}
