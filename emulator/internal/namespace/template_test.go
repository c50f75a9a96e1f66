package namespace

import (
	"encoding/base32"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/fixture"
	"github.com/hostemu/hostemu/emulator/internal/state"
)

// templateDocs are fixture documents a namespace may be given inline: deployments in
// every status, error messages that name hosts and URLs (the template's own among
// them), generated projects and sites, a project name that is not a valid label.
var templateDocs = []string{
	"",
	`{"projects":[{"id":"prj_x","name":"xray","created_at":"2030-01-01T00:00:00Z"}]}`,
	`{"sites":true,"generate":{"projects":3,"deployments_per_project":4,"domains_per_project":3}}`,
	`projects:
  - id: prj_a
    name: "A Shop! ünïcode"
    env: {K: v}
    deployments:
      - {id: dpl_one, target: production, status: ready}
      - {id: dpl_two, target: preview, status: building}
      - {id: dpl_three, target: preview, status: queued}
      - {id: dpl_LongUPPER_case_id_that_is_not_a_valid_label_at_all_xx, target: preview, status: ready}
      - id: dpl_err
        target: preview
        status: error
        error: {code: build_failed, message: "deployment ready at https://a-shop-one.template0000.hostemu.localhost"}
    domains:
      - {hostname: a.test, status: active}
      - {hostname: b.test, status: verifying}
      - {hostname: c.test, status: error}
sites: true
`,
}

// clonesAndBuilds gives every namespace of fixtures doc, seed and options its world twice:
// from a template (kept and cloned, or taken) and from fixture.Build, as without one.
func clonesAndBuilds(t *testing.T, files []*fixture.File, key templateKey, label string) (cloned, taken, built state.Snapshot) {
	t.Helper()
	id := Identity{ID: Prefix + label, Label: label, Tokens: Tokens{Read: "r", Deploy: "d", Admin: "a"}, CipherKey: "c"}
	w := &Worlds{Files: files}
	// twice: the first namespace's clone is made on the build's heels, the second from
	// the cache
	var first state.Snapshot
	for i := range 2 {
		snap, err := w.namespaceSnapshot(files, key, id)()
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = snap
		}
		cloned = snap
	}
	if n, _ := w.templates.held(); n != 1 {
		t.Fatalf("%d templates held, want 1", n)
	}
	same(t, "the first clone", first, cloned)
	build := func(edge string) (state.Snapshot, []fixture.Problem) {
		return fixture.Build(files, fixture.Options{Seed: key.seed, Start: key.start, EdgeDomain: edge, URLForm: key.form})
	}
	tmpl, _, problems := (&templates{}).get(key, build)
	if len(problems) > 0 || tmpl == nil {
		t.Fatalf("template: %v", problems)
	}
	taken = tmpl.take(label)
	taken.Tokens, taken.Cipher.APIKeys = cloned.Tokens, cloned.Cipher.APIKeys
	built, problems = build(label + "." + key.edge)
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	built.Tokens, built.Cipher.APIKeys = cloned.Tokens, cloned.Cipher.APIKeys
	return cloned, taken, built
}

// A namespace's world from a template is the one fixture.Build makes for it: the same
// fixtures, seed and options give the same world, with the namespace's label in its
// hosts and its credentials (the fast path beside the slow one).
func TestTemplateCloneIsBuild(t *testing.T) {
	embedded, problems := fixture.Embedded()
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	start := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	for di, doc := range templateDocs {
		files := embedded
		if doc != "" {
			f, problems := fixture.Parse("fixtures", []byte(doc))
			if len(problems) > 0 {
				t.Fatal(problems)
			}
			files = []*fixture.File{f}
		}
		for _, seed := range []int64{1, 3, 42} {
			for _, form := range []state.URLForm{{}, {Scheme: "http", Port: 4743}, {Scheme: "https", Port: 443}} {
				for _, edge := range []string{state.DefaultEdgeDomain, "edge.example.test"} {
					key := templateKey{doc: doc, seed: seed, start: start, edge: edge, form: form}
					label := newIdentity().Label
					t.Run(fmt.Sprintf("doc%d/seed%d/%s:%d/%s", di, seed, form.Scheme, form.Port, edge), func(t *testing.T) {
						cloned, taken, built := clonesAndBuilds(t, files, key, label)
						same(t, "clone", cloned, built)
						same(t, "take", taken, built)
					})
				}
			}
		}
	}
}

func same(t *testing.T, what string, got, want state.Snapshot) {
	t.Helper()
	if reflect.DeepEqual(got, want) {
		return
	}
	g, _ := json.MarshalIndent(got, "", " ")
	w, _ := json.MarshalIndent(want, "", " ")
	t.Errorf("%s differs from the build:\n%.3000s\nwant\n%.3000s", what, g, w)
}

// FuzzTemplateClone holds a template's clone to fixture.Build for any fixture document,
// seed, label and port.
func FuzzTemplateClone(f *testing.F) {
	for i, doc := range templateDocs[1:] {
		f.Add([]byte(doc), int64(i), uint64(i), uint16(0))
	}
	f.Add([]byte(`{"generate":{"projects":1}}`), int64(7), uint64(1<<63), uint16(8080))
	f.Fuzz(func(t *testing.T, doc []byte, seed int64, labelBits uint64, port uint16) {
		// a label as newIdentity draws one: 12 characters of lowercase base32
		label := strings.ToLower(base32.StdEncoding.EncodeToString(binary.BigEndian.AppendUint64(nil, labelBits)))[:labelLen]
		file, problems := fixture.Parse("fixtures", doc)
		if len(problems) > 0 {
			return
		}
		if g := file.Generate; g != nil && (g.Projects*max(g.DeploymentsPerProject, 5) > 200 || g.Projects*max(g.DomainsPerProject, 1) > 200) {
			return
		}
		files := []*fixture.File{file}
		key := templateKey{doc: string(doc), seed: seed, start: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), edge: state.DefaultEdgeDomain, form: state.URLForm{Scheme: "http", Port: int(port)}}
		if _, problems := fixture.Build(files, fixture.Options{Seed: seed, Start: key.start, EdgeDomain: label + "." + key.edge, URLForm: key.form}); len(problems) > 0 {
			return
		}
		cloned, taken, built := clonesAndBuilds(t, files, key, label)
		same(t, "clone", cloned, built)
		same(t, "take", taken, built)
	})
}

// The cache holds at most MaxTemplates templates and MaxTemplateBytes of them, the
// oldest dropped first; a world over a quarter of the bytes is never kept; and what it
// counts bounds the heap it holds.
func TestTemplateCacheBounded(t *testing.T) {
	start := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	parse := func(doc string) []*fixture.File {
		f, problems := fixture.Parse("fixtures", []byte(doc))
		if len(problems) > 0 {
			t.Fatal(problems)
		}
		return []*fixture.File{f}
	}
	get := func(c *templates, doc string, files []*fixture.File, seed int64) (*template, bool) {
		key := templateKey{doc: doc, seed: seed, start: start, edge: state.DefaultEdgeDomain}
		tmpl, kept, problems := c.get(key, func(edge string) (state.Snapshot, []fixture.Problem) {
			return fixture.Build(files, fixture.Options{Seed: seed, Start: start, EdgeDomain: edge})
		})
		if len(problems) > 0 || tmpl == nil {
			t.Fatalf("template: %v", problems)
		}
		return tmpl, kept
	}

	// by number: the embedded fixtures under 40 seeds
	embedded, _ := fixture.Embedded()
	var c templates
	for seed := range int64(40) {
		get(&c, "", embedded, seed+1)
		if n, bytes := c.held(); n > MaxTemplates || bytes > MaxTemplateBytes {
			t.Fatalf("%d templates of %d bytes held", n, bytes)
		}
	}
	n, bytes := c.held()
	if n != MaxTemplates {
		t.Fatalf("%d templates held, want %d", n, MaxTemplates)
	}
	if _, kept := get(&c, "", embedded, 40); !kept || len(c.order) != MaxTemplates || c.order[0].seed != 40-MaxTemplates+1 {
		t.Fatalf("the newest is not kept or the oldest not dropped: %v", c.order[0])
	}
	n, bytes = c.held()
	if heap := heldHeap(&c); heap > bytes {
		t.Errorf("%d templates counted %d bytes, but held %d bytes of heap", n, bytes, heap)
	} else {
		t.Logf("%d templates of the embedded fixtures counted %d bytes, and held %d bytes of heap", n, bytes, heap)
	}

	// by bytes: worlds of about 3 MB (1,200 generated deployments and their sites)
	const big = `{"sites":true,"generate":{"projects":20,"deployments_per_project":60,"domains_per_project":2}}`
	files := parse(big)
	for seed := range int64(12) {
		tmpl, kept := get(&c, big, files, seed+1)
		if !kept || tmpl.bytes < MaxTemplateBytes/8 {
			t.Fatalf("a template of %d bytes: kept %v", tmpl.bytes, kept)
		}
		if _, bytes := c.held(); bytes > MaxTemplateBytes {
			t.Fatalf("%d bytes held", bytes)
		}
	}
	n, bytes = c.held()

	// too big to keep: 10,000 deployments
	const huge = `{"generate":{"projects":100,"deployments_per_project":100}}`
	if tmpl, kept := get(&c, huge, parse(huge), 1); kept || tmpl.bytes <= MaxTemplateBytes/4 {
		t.Fatalf("a template of %d bytes kept: %v", tmpl.bytes, kept)
	}
	if m, b := c.held(); m != n || b != bytes {
		t.Fatalf("held %d, %d bytes after the big one; before %d, %d", m, b, n, bytes)
	}

	heap := heldHeap(&c)
	t.Logf("%d templates counted %d bytes, and held %d bytes of heap", n, bytes, heap)
	if n < 4 || heap > bytes {
		t.Errorf("%d templates counted %d bytes, but held %d bytes of heap", n, bytes, heap)
	}
}

// heldHeap is the heap c holds, which it empties: the heap with it, less the heap once
// it is emptied (the sites' contents, which the fixture package keeps too, are counted
// but stay).
func heldHeap(c *templates) int64 {
	var with, without runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&with)
	c.m, c.order, c.bytes = nil, nil, 0
	runtime.GC()
	runtime.ReadMemStats(&without)
	return int64(with.HeapAlloc) - int64(without.HeapAlloc)
}
