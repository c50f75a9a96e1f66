package emulator_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/hostemu/hostemu/emulator"
	"github.com/hostemu/hostemu/emulator/internal/journal"
)

// The journal's copies of a request's body and of its answer are taken in buffers the
// pipeline reuses from one request to the next: each entry holds its own request's
// bytes, never what a longer one before it left there, and stays as it was recorded
// while later requests reuse the buffers.
func TestJournalBodiesOfReusedBuffers(t *testing.T) {
	e := newEnv(t)
	long := `{"name":"` + strings.Repeat("é", journal.MaxBody) + `"}`                               // cut at MaxBody, on a rune boundary
	bodies := []string{long, `{"a":1}`, "", `{"b":"` + strings.Repeat("x", 100) + `"}`, long[:301]} // whole runes: the journal is read as JSON
	// the domain's route answers before reading the body (the journal reads it then);
	// a create reads it, and refuses each of these
	paths := []string{"/v1/projects/prj_missing/domains", "/v1/deployments"}
	for range 3 {
		for _, b := range bodies {
			for _, p := range paths {
				if r := e.do(req{Method: "POST", Path: p, Token: "t-admin", Body: b}); r.Status < 400 {
					t.Fatalf("POST %s: %d", p, r.Status)
				}
			}
		}
	}
	for _, p := range paths {
		es := journalOf(t, e, "?path="+p)
		checkBodies(t, es, bodies)
		for i, got := range es {
			if got.Response == nil || !strings.Contains(got.Response.Body, `"error"`) || strings.Contains(got.Response.Body, "éé") {
				t.Fatalf("entry %d: answer %+v", i, got.Response)
			}
		}
	}
}

// checkBodies fails unless es are three rounds of bodies, in order, each cut at
// MaxBody (on a rune boundary) and marked so when longer.
func checkBodies(t *testing.T, es []emulator.JournalEntry, bodies []string) {
	t.Helper()
	if len(es) != 3*len(bodies) {
		t.Fatalf("%d entries", len(es))
	}
	for i, got := range es {
		want := bodies[i%len(bodies)]
		truncated := len(want) > journal.MaxBody
		if truncated {
			want = want[:journal.MaxBody]
			for !utf8.ValidString(want) { // 'é' is two bytes: the cut may fall before the last one
				want = want[:len(want)-1]
			}
		}
		if got.Body != want || got.BodyTruncated != truncated {
			t.Fatalf("entry %d: body of %d bytes (truncated %v), want %d (%v): %.40q", i, len(got.Body), got.BodyTruncated, len(want), truncated, got.Body)
		}
	}
}

// An upload's entry keeps the body from the upload's own buffer rather than a copy
// (the journal's SetKeptBody): each entry still holds its own request's bytes, cut at
// MaxBody, whether the file was new, already stored, or refused for its digest, and
// stays so while later uploads come.
func TestJournalKeepsUploadBodies(t *testing.T) {
	e := newEnv(t)
	var bodies []string
	for i, n := range []int{1, 100, 1024, journal.MaxBody - 1, journal.MaxBody, journal.MaxBody + 1, 3 * journal.MaxBody} {
		bodies = append(bodies, strings.Repeat(string(rune('a'+i)), n))
	}
	upload := func(b, digest string) {
		e.do(req{Method: "POST", Path: "/v1/files", Token: "t-deploy", Body: []byte(b),
			Headers: map[string]string{"Content-Type": "application/octet-stream", "X-File-Digest": digest}})
	}
	for range 2 { // new, then stored already
		for _, b := range bodies {
			upload(b, digestOf(b))
		}
	}
	for _, b := range bodies { // refused: the digest is another body's
		upload(b, digestOf(b+"x"))
	}
	checkBodies(t, journalOf(t, e, "?path=/v1/files"), bodies)
}

// A create's entry keeps the body from the create's own buffer, and the deployment's
// strings are cut from that buffer too (no copy of the body for either): each entry
// still holds its own request's bytes, and each deployment its own files and
// environment, while later creates come — created (compact, padded with white space,
// over the body's 512-byte first step, with an escape or a key the create ignores,
// which encoding/json decodes), refused (invalid JSON, an unknown project) or
// gzip-encoded.
func TestJournalKeepsCreateBodies(t *testing.T) {
	e := newEnv(t)
	digest := strings.Repeat("ab", 32)
	create := func(env, pad string) string {
		return `{"project_id":"prj_shop",` + pad + `"files":{"index.html":"` + digest + `"},"target":"preview","env":{"K":"` + env + `"}}`
	}
	cases := []struct {
		body    string
		created bool
		env     string // env K of the deployment created
	}{
		{create("one", ""), true, "one"},
		{create("two", strings.Repeat(" ", 600)), true, "two"},
		{create(strings.Repeat("3", 700), ""), true, strings.Repeat("3", 700)},
		{create(strings.Repeat("é", journal.MaxBody), ""), true, strings.Repeat("é", journal.MaxBody)},
		{create(`fo\u006f`, ""), true, "foo"},
		{strings.Replace(create("six", ""), `"target"`, `"extra":1,"target"`, 1), true, "six"},
		{`{"project_id":`, false, ""},
		{`{"project_id":"prj_none","files":{}}`, false, ""},
	}
	var bodies, envs, ids []string
	for _, c := range cases {
		bodies = append(bodies, c.body)
	}
	for range 3 {
		for i, c := range cases {
			r := e.do(req{Method: "POST", Path: "/v1/deployments", Token: "t-deploy", Body: c.body})
			if !c.created {
				if r.Status < 400 {
					t.Fatalf("body %d: %d", i, r.Status)
				}
				continue
			}
			mustStatus(t, r, 201)
			ids, envs = append(ids, decode[struct{ ID string }](t, r).ID), append(envs, c.env)
		}
	}
	// one more, gzip-encoded: the journal keeps the decoded body
	mustStatus(t, e.do(req{Method: "POST", Path: "/v1/deployments", Token: "t-deploy", Body: gzipped(t, bodies[0]), Headers: map[string]string{"Content-Encoding": "gzip"}}), 201)
	es := journalOf(t, e, "?path=/v1/deployments&method=POST")
	if got := es[len(es)-1].Body; got != bodies[0] {
		t.Fatalf("the gzip-encoded create's entry: %.60q", got)
	}
	checkBodies(t, es[:len(es)-1], bodies)
	for i, id := range ids {
		d := decode[struct {
			ProjectID string            `json:"project_id"`
			Files     map[string]string `json:"files"`
			Env       map[string]string `json:"env"`
		}](t, e.get("/v1/deployments/"+id, "t-deploy"))
		if d.ProjectID != "prj_shop" || d.Files["index.html"] != digest || d.Env["K"] != envs[i] {
			t.Fatalf("deployment %d: %s %v env %.40q, want %.40q", i, d.ProjectID, d.Files, d.Env["K"], envs[i])
		}
	}
}

// Creates of no declared length (chunked): their bodies are read in doubling steps, the
// first in a pooled buffer, and end in a buffer larger than the body; the entries and
// the deployments cut from those buffers still hold each their own request while later
// creates come.
func TestJournalKeepsChunkedCreateBodies(t *testing.T) {
	e := newEnv(t)
	digest := strings.Repeat("ab", 32)
	create := func(env, pad string) string {
		return `{"project_id":"prj_shop",` + pad + `"files":{"index.html":"` + digest + `"},"env":{"K":"` + env + `"}}`
	}
	envs := []string{"one", strings.Repeat("2", 500), "three", strings.Repeat("4", 3000), strings.Repeat("é", journal.MaxBody)}
	bodies := []string{create(envs[0], ""), create(envs[1], ""), create(envs[2], strings.Repeat(" ", 700)), create(envs[3], ""), create(envs[4], "")}
	var ids []string
	for range 3 {
		for i, b := range bodies {
			hr, err := http.NewRequest("POST", e.url+"/v1/deployments", io.MultiReader(strings.NewReader(b))) // no length: chunked
			if err != nil {
				t.Fatal(err)
			}
			hr.Header.Set("Content-Type", "application/json")
			hr.Header.Set("Authorization", "Bearer t-deploy")
			r, err := http.DefaultClient.Do(hr)
			if err != nil {
				t.Fatal(err)
			}
			var d struct{ ID string }
			err = json.NewDecoder(r.Body).Decode(&d)
			r.Body.Close()
			if r.StatusCode != 201 || err != nil || hr.ContentLength != 0 {
				t.Fatalf("body %d: %d %v (length %d)", i, r.StatusCode, err, hr.ContentLength)
			}
			ids = append(ids, d.ID)
		}
	}
	checkBodies(t, journalOf(t, e, "?path=/v1/deployments&method=POST"), bodies)
	for i, id := range ids {
		d := decode[struct {
			Files map[string]string `json:"files"`
			Env   map[string]string `json:"env"`
		}](t, e.get("/v1/deployments/"+id, "t-deploy"))
		if d.Files["index.html"] != digest || d.Env["K"] != envs[i%len(envs)] {
			t.Fatalf("deployment %d: %v env %.40q, want %.40q", i, d.Files, d.Env["K"], envs[i%len(envs)])
		}
	}
}
