package namespace

import (
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/fixture"
	"github.com/hostemu/hostemu/emulator/internal/state"
)

// Bounds of the template cache (see templates): at most MaxTemplates built worlds, and
// at most MaxTemplateBytes of them together, counted as state.Snapshot.Weight counts a
// world plus their uploads' contents and the inline fixture documents they key on. A
// world heavier than MaxTemplateBytes/4 is built every time, as without the cache.
const (
	MaxTemplates     = 16
	MaxTemplateBytes = 16 << 20
)

// templateLabel stands for a namespace's label in a cached build. It is as long as a
// label, so every string is as long as with a real one, and it holds '0's, which a real
// label (base32: a–z and 2–7) never does.
const templateLabel = "template0000"

// templateKey is everything fixture.Build's result depends on besides the label: which
// fixtures (doc is "" for the server's own, else an inline document as it was sent),
// and the options. start is compared as a value (instant, location and monotonic
// reading): two starts that print differently are different keys.
type templateKey struct {
	doc   string
	seed  int64
	start time.Time
	edge  string
	form  state.URLForm
}

// template is a world's start-up state built once under templateLabel, never changed
// after it is made: every namespace of the same fixtures, seed and options (and each
// of their resets) starts from a clone of it with its own label in its hosts.
type template struct {
	snap  state.Snapshot
	urls  []int     // per deployment: where templateLabel starts in its URL
	ready []lineCut // the log lines that end with their deployment's URL
	bytes int64     // what the cache counts it as
	lines int       // log lines in all
	chars int       // bytes of the strings a clone makes (URLs and ready lines)
}

// lineCut names a log line that ends with its deployment's URL ("… deployment ready at
// <url>"): the clone writes it again with the namespace's label.
type lineCut struct{ dep, line int }

// newTemplate makes a template of snap, built with the edge domain
// templateLabel+"."+edge, or returns nil when a deployment URL does not carry the
// label where a clone would replace it (the caller builds every time instead).
func newTemplate(snap state.Snapshot, edge string, doc string) *template {
	t := &template{snap: snap, urls: make([]int, len(snap.Deployments))}
	host := "." + templateLabel + "." + edge
	for i := range snap.Deployments {
		d := &snap.Deployments[i]
		at := strings.Index(d.URL, host)
		if at < 0 || strings.Contains(d.URL[at+len(host):], templateLabel) {
			return nil
		}
		t.urls[i] = at + 1
		t.lines += len(d.Logs)
		own := true // the URL is written on its own unless a ready line ends with it
		for k, l := range d.Logs {
			if strings.HasSuffix(l.Text, d.URL) {
				t.ready = append(t.ready, lineCut{i, k})
				t.chars += len(l.Text)
				own = false
			}
		}
		if own {
			t.chars += len(d.URL)
		}
	}
	// the build's log lines live in slabs of thousands (fixture's arena): kept, the
	// template holds its own, no more
	copyLogs(snap.Deployments, t.lines)
	t.bytes = snap.Weight() + int64(len(doc))
	for _, u := range snap.Uploads {
		t.bytes += int64(len(u.Content))
	}
	return t
}

// clone is the template's state with label in every deployment host, sharing nothing
// a world changes: the lists a store takes over or a hook keeps are new, and each
// deployment's log lines are copied (the Env, Files, Timings, Error and TLS values and
// the uploads' contents, which nothing changes in place, are shared). Its URLs and the
// lines that name them are cut from one string.
func (t *template) clone(label string) state.Snapshot {
	snap := t.copyLists()
	t.relabel(&snap, label)
	return snap
}

// take is clone of a template that is not kept: its own lists are handed over, relabelled
// in place.
func (t *template) take(label string) state.Snapshot {
	snap := t.snap
	t.relabel(&snap, label)
	t.snap = state.Snapshot{}
	return snap
}

// copyLists is the template's state with new lists and log lines.
func (t *template) copyLists() state.Snapshot {
	src := &t.snap
	snap := state.Snapshot{
		Tokens:      slices.Clone(src.Tokens),
		Policy:      src.Policy,
		Cipher:      state.Cipher{APIKeys: slices.Clone(src.Cipher.APIKeys), MasterKeys: slices.Clone(src.Cipher.MasterKeys)},
		Projects:    slices.Clone(src.Projects),
		Deployments: slices.Clone(src.Deployments),
		Domains:     slices.Clone(src.Domains),
		Files:       slices.Clone(src.Files),
		Detaching:   slices.Clone(src.Detaching),
		Uploads:     slices.Clone(src.Uploads),
	}
	copyLogs(snap.Deployments, t.lines)
	// the files maps are the template's, which fixture.Build vouched for: the new
	// world's check need not walk them again (state.Snapshot.FilesChecked)
	snap.FilesChecked()
	return snap
}

// relabel writes label in place of templateLabel in snap's deployment URLs and the log
// lines ending with them; snap is the template's state or a copy of it.
func (t *template) relabel(snap *state.Snapshot, label string) {
	src := &t.snap
	// every new string, in one allocation: the URLs, and the ready lines ending with them
	var b strings.Builder
	b.Grow(t.chars + (len(label)-len(templateLabel))*(len(snap.Deployments)+len(t.ready)))
	type span struct{ from, to int }
	urls := make([]span, len(snap.Deployments))
	texts := make([]span, len(t.ready))
	for j, c := range t.ready {
		d := &src.Deployments[c.dep]
		text := d.Logs[c.line].Text
		from := b.Len()
		b.WriteString(text[:len(text)-len(d.URL)])
		u := b.Len()
		writeURL(&b, d.URL, t.urls[c.dep], label)
		texts[j] = span{from, b.Len()}
		if urls[c.dep] == (span{}) {
			urls[c.dep] = span{u, b.Len()}
		}
	}
	for i := range src.Deployments {
		if urls[i] == (span{}) {
			from := b.Len()
			writeURL(&b, src.Deployments[i].URL, t.urls[i], label)
			urls[i] = span{from, b.Len()}
		}
	}
	all := b.String()
	for i := range snap.Deployments {
		snap.Deployments[i].URL = all[urls[i].from:urls[i].to]
	}
	for j, c := range t.ready {
		snap.Deployments[c.dep].Logs[c.line].Text = all[texts[j].from:texts[j].to]
	}
}

// writeURL writes url with label in place of templateLabel at at.
func writeURL(b *strings.Builder, url string, at int, label string) {
	b.WriteString(url[:at])
	b.WriteString(label)
	b.WriteString(url[at+len(templateLabel):])
}

// templates caches built worlds by templateKey, within MaxTemplates and
// MaxTemplateBytes, the oldest made forgotten first. The zero value is ready to use.
type templates struct {
	mu    sync.Mutex // guards everything below
	m     map[templateKey]*template
	order []templateKey // oldest first
	bytes int64
}

// get returns the template of key, building it (with build, under the template's edge
// domain) when it is not held, and whether the cache keeps it: one it does not keep
// (heavier than MaxTemplateBytes/4) is the caller's to take. It is nil when its URLs
// do not carry the label where a clone replaces it: the caller builds the world
// itself. A build's problems are returned and nothing is kept.
func (c *templates) get(key templateKey, build func(edge string) (state.Snapshot, []fixture.Problem)) (t *template, kept bool, problems []fixture.Problem) {
	c.mu.Lock()
	t = c.m[key]
	c.mu.Unlock()
	if t != nil {
		return t, true, nil
	}
	snap, problems := build(templateLabel + "." + key.edge)
	if len(problems) > 0 {
		return nil, false, problems
	}
	if t = newTemplate(snap, key.edge, key.doc); t == nil || t.bytes > MaxTemplateBytes/4 {
		return t, false, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if held := c.m[key]; held != nil { // built meanwhile by another caller
		return held, true, nil
	}
	if c.m == nil {
		c.m = map[templateKey]*template{}
	}
	for len(c.order) > 0 && (len(c.order) >= MaxTemplates || c.bytes+t.bytes > MaxTemplateBytes) {
		old := c.order[0]
		c.bytes -= c.m[old].bytes
		delete(c.m, old)
		c.order = slices.Delete(c.order, 0, 1)
	}
	c.m[key] = t
	c.order = append(c.order, key)
	c.bytes += t.bytes
	return t, true, nil
}

// held is the number of templates and the bytes they count.
func (c *templates) held() (n int, bytes int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m), c.bytes
}

// copyLogs gives each deployment's log lines a copy of their own, all of them in one
// allocation of lines entries (their total).
func copyLogs(deps []state.Deployment, lines int) {
	logs := make([]state.LogLine, lines)
	for i := range deps {
		d := &deps[i]
		if d.Logs != nil {
			n := copy(logs, d.Logs)
			d.Logs, logs = logs[:n:n], logs[n:]
		}
	}
}
