package mutate

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

func post(t *testing.T, url, body string) (int, map[string]any) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatalf("%s: %v: %s", url, err, raw)
		}
	}
	return resp.StatusCode, out
}

// A world of a test with a mutant is handed its fault; its coverage says which
// operations the test called; a nameless world in a run of one test is that test's.
func TestCoordinatorHandsMutantsAndGathersCalls(t *testing.T) {
	c, err := NewCoordinator()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	m := Mutant{Test: "p TestA", Operation: "createDeployment", Method: "POST", Path: "/v1/deployments", Code: "service_unavailable"}
	r := &round{runner: goRunner{}, mutants: map[string]*Mutant{"p TestA": &m}}
	id, url := c.open(r)

	code, w := post(t, url+"/world", `{"test":"TestA","package":"p"}`)
	if code != 200 || w["world"] != "w1" || w["report"] != true {
		t.Fatalf("hello: %d %v", code, w)
	}
	want := map[string]any{"match": map[string]any{"operation": "createDeployment"}, "error": "service_unavailable", "times": float64(1)}
	if got, _ := json.Marshal(w["fault"]); !bytes.Equal(got, mustJSON(want)) {
		t.Errorf("fault = %s, want %s", got, mustJSON(want))
	}
	code, w = post(t, url+"/world", `{"test":"TestB","package":"p"}`)
	if code != 200 || w["fault"] != nil {
		t.Errorf("a test without a mutant: %d %v", code, w)
	}
	code, _ = post(t, url+"/coverage", `{"world":"w1","coverage":{"operations":[{"method":"POST","path":"/v1/deployments","seen":2,"responses":[]},{"method":"GET","path":"/v1/projects","seen":0}],"totals":{}}}`)
	if code != 204 {
		t.Fatalf("coverage: %d", code)
	}
	if !r.armed["p TestA"] || r.armed["p TestB"] {
		t.Errorf("armed = %v", r.armed)
	}
	if got := r.called["p TestA"]; len(got) != 1 || !got["POST /v1/deployments"] {
		t.Errorf("called = %v", got)
	}
	c.close(id)
	if code, body := post(t, url+"/world", `{"test":"TestA"}`); code != 404 || body["error"] == nil {
		t.Errorf("a round that is over: %d %v", code, body)
	}

	// a run of one test: a nameless world is its
	r2 := &round{runner: goRunner{}, only: "p TestC"}
	_, url2 := c.open(r2)
	post(t, url2+"/world", `{}`)
	post(t, url2+"/coverage", `{"world":"w1","coverage":{"operations":[{"method":"GET","path":"/v1/projects","seen":1}]}}`)
	if !r2.called["p TestC"]["GET /v1/projects"] || r2.nameless != 0 {
		t.Errorf("alone: called %v nameless %d", r2.called, r2.nameless)
	}
}

// What a testkit posts is strict and bounded, and answered in hostemu's envelope.
func TestCoordinatorRefusesBadPosts(t *testing.T) {
	c, err := NewCoordinator()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, url := c.open(&round{runner: goRunner{}})
	for _, tc := range []struct {
		path, body string
		status     int
		code       string
	}{
		{"/world", `{"tset":"TestA"}`, 400, "invalid_json"},
		{"/world", `{"test":"A"} {}`, 400, "invalid_json"},
		{"/world", `[`, 400, "invalid_json"},
		{"/world", `{"test":"` + strings.Repeat("x", maxPost) + `"}`, 413, "payload_too_large"},
		{"/coverage", `{"world":"w9","coverage":{}}`, 404, "not_found"},
		{"/coverage", `{"world":"w1","coverage":{"operations":"x"}}`, 400, "invalid_json"},
	} {
		code, body := post(t, url+tc.path, tc.body)
		e, _ := body["error"].(map[string]any)
		if code != tc.status || e == nil || e["code"] != tc.code {
			t.Errorf("%s %.40s: %d %v, want %d %s", tc.path, tc.body, code, body, tc.status, tc.code)
		}
	}
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// The coordinator's part of making a world: a hello and its answer, in process over
// loopback (the bound: under 1 ms a world).
func BenchmarkCoordinatorHello(b *testing.B) {
	c, err := NewCoordinator()
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	m := Mutant{Test: "p TestA", Operation: "listProjects", Code: "service_unavailable"}
	_, url := c.open(&round{runner: goRunner{}, mutants: map[string]*Mutant{"p TestA": &m}})
	client := &http.Client{}
	body := []byte(`{"test":"TestA","package":"p"}`)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		resp, err := client.Post(url+"/world", "application/json", bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}
