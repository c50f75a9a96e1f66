package httpapi

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/state"
	"github.com/hostemu/hostemu/emulator/internal/view"
)

var oddStrings = []string{"", "plain", `quote " back \ slash`, "<script>&amp;</script>", "tab\tnew\nline\r", "\x00\x01\x1f\x7f",
	"ünïcödé ✓ 🚀", "\u2028\u2029", "bad \xff utf8 \xc3", "x\u00e9"}

func randomString(r *rand.Rand) string {
	if r.IntN(3) == 0 {
		b := make([]byte, r.IntN(12))
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		return string(b)
	}
	return oddStrings[r.IntN(len(oddStrings))]
}

func randomMap(r *rand.Rand) map[string]string {
	if r.IntN(4) == 0 {
		return nil
	}
	m := map[string]string{}
	for range r.IntN(40) {
		m[randomString(r)+string(rune('a'+r.IntN(26)))] = randomString(r)
	}
	return m
}

// The hand-written encoder writes exactly what encoding/json writes for view.Deployment.
func TestAppendDeploymentMatchesEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 2000; i++ {
		at := time.Date(1970+r.IntN(230), 1, 1, 0, 0, 0, r.IntN(2e9), time.UTC).Add(time.Duration(r.IntN(1e8)) * time.Second)
		switch r.IntN(4) { // whole seconds and round fractions, as timestamps often are
		case 0:
			at = at.Truncate(time.Second)
		case 1:
			at = at.Truncate(time.Millisecond)
		}
		d := state.Deployment{ID: randomString(r), URL: randomString(r), Status: randomString(r), CreatedAt: at,
			ProjectID: randomString(r), Target: randomString(r), Env: randomMap(r), Files: randomMap(r)}
		if r.IntN(2) == 0 {
			d.Timings.QueuedAt = &at
		}
		if r.IntN(2) == 0 {
			d.Timings.ErrorAt = &at
			d.Error = &state.ErrorInfo{Code: randomString(r), Message: randomString(r)}
		}
		projectEnv := randomMap(r)
		base := "http://" + randomString(r)
		production := r.IntN(2) == 0
		got := string(appendDeployment(nil, base, &d, projectEnv, production))
		wantView := view.Deployment{ID: d.ID, URL: d.URL, Status: d.Status, CreatedAt: state.Timestamp(d.CreatedAt), ProjectID: d.ProjectID, Target: d.Target,
			Env: mergeForTest(projectEnv, d.Env), Files: d.Files, BuildLogsURL: base + "/v1/deployments/" + d.ID + "/logs",
			Timings: d.Timings, Error: d.Error, Production: production}
		if wantView.Files == nil {
			wantView.Files = map[string]string{}
		}
		want, err := json.Marshal(wantView)
		if err != nil {
			t.Fatal(err)
		}
		if got != string(want) {
			t.Fatalf("case %d:\n got %s\nwant %s", i, got, want)
		}
	}
}

// The create answer is what encoding/json writes for view.Created.
func TestAppendCreatedMatchesEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 2000; i++ {
		at := time.Date(1970+r.IntN(230), 1, 1, 0, 0, 0, r.IntN(2e9), time.UTC).Add(time.Duration(r.IntN(1e8)) * time.Second)
		if r.IntN(2) == 0 {
			at = at.Truncate(time.Millisecond)
		}
		d := state.Deployment{ID: randomString(r), URL: randomString(r), Status: randomString(r), CreatedAt: at,
			ProjectID: randomString(r), Target: randomString(r), Env: randomMap(r), Files: randomMap(r)}
		want, err := json.Marshal(view.Created(d))
		if err != nil {
			t.Fatal(err)
		}
		if got := appendCreated(nil, &d); string(got) != string(want) {
			t.Fatalf("case %d:\n got %s\nwant %s", i, got, want)
		}
	}
}

func mergeForTest(a, b map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// BenchmarkDeploymentJSON: what the hand-written encoder buys over encoding/json for a
// typical full deployment (5 files, a merged env of 4, timings, logs link).
func BenchmarkDeploymentJSON(b *testing.B) {
	at := time.Date(2026, 11, 21, 12, 0, 3, 837e6, time.UTC)
	d := state.Deployment{ID: "dpl_0d8di1ih08ezqps2cwnf", ProjectID: "prj_demo", URL: "https://demo-shop-0d8di1ih08ezqps2cwnf.hostemu.localhost",
		Target: "production", Status: "ready", CreatedAt: at, Env: map[string]string{"FEATURE_X": "on"},
		Files: map[string]string{"index.html": strings.Repeat("a", 64), "app.js": strings.Repeat("b", 64), "app.css": strings.Repeat("c", 64),
			"favicon.ico": strings.Repeat("d", 64), "robots.txt": strings.Repeat("e", 64)},
		Timings: state.Timings{QueuedAt: &at, BuildingAt: &at, ReadyAt: &at}}
	env := map[string]string{"API_URL": "https://api.shop.test", "NODE_ENV": "production", "LOG_LEVEL": "info"}
	b.Run("hand-written", func(b *testing.B) {
		b.ReportAllocs()
		buf := make([]byte, 0, 2048)
		for b.Loop() {
			buf = appendDeployment(buf[:0], "http://127.0.0.1:4700", &d, env, true)
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			v := view.Deployment{ID: d.ID, URL: d.URL, Status: d.Status, CreatedAt: state.Timestamp(d.CreatedAt), ProjectID: d.ProjectID, Target: d.Target,
				Env: mergeForTest(env, d.Env), Files: d.Files, BuildLogsURL: "http://127.0.0.1:4700/v1/deployments/" + d.ID + "/logs",
				Timings: d.Timings, Error: d.Error, Production: true}
			if _, err := json.Marshal(v); err != nil {
				b.Fatal(err)
			}
		}
	})
}
