package npm_test

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hostemu/hostemu/emulator"
)

// kyVersion is the retrying client of TestFaultsAsNodeClientsSeeThem: ky 1.x, the line
// that runs on Node 18 and 20 (ky 2 needs Node 22); it honours Retry-After on 413, 429
// and 503 by default.
const kyVersion = "1.14.3"

// faultClients is the Node side of TestFaultsAsNodeClientsSeeThem: against the emulator
// at argv[2], each break once with Node's own fetch (undici), then ky through two
// injected service_unavailable answers; it prints what each client saw as JSON.
const faultClients = `import ky from "ky";
const base = process.argv[2];
const auth = { authorization: "Bearer hostemu-read" };
async function fault(spec) {
  const res = await fetch(base + "/_emulator/faults", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(spec) });
  if (res.status !== 201) throw new Error("fault " + JSON.stringify(spec) + ": " + res.status + " " + (await res.text()));
}
const seen = {};
for (const brk of ["reset", "empty", "truncate", "malformed"]) {
  await fault({ match: { operation: "getDeployment" }, break: brk, times: 1 });
  const at = { stage: "fetch" };
  try {
    const res = await fetch(base + "/v1/deployments/dpl_demolaunch", { headers: auth });
    at.stage = "body";
    at.status = res.status;
    const text = await res.text();
    at.stage = "json";
    JSON.parse(text);
    seen[brk] = { ...at, error: null };
  } catch (e) {
    seen[brk] = { ...at, error: { name: e.name, message: e.message, cause: e.cause ? { name: e.cause.name, code: e.cause.code, message: e.cause.message } : null } };
  }
}
await fault({ match: { operation: "listProjects" }, error: "service_unavailable", times: 2 });
const start = Date.now();
const statuses = [];
const page = await ky.get(base + "/v1/projects", {
  headers: auth,
  retry: { limit: 3, backoffLimit: 10 },
  hooks: { afterResponse: [(_req, _opts, res) => { statuses.push(res.status + " Retry-After:" + (res.headers.get("retry-after") ?? "")); }] },
}).json();
seen.ky = { statuses, ms: Date.now() - start, projects: page.projects.length };
console.log(JSON.stringify(seen));
`

// Faults as a Node test's client meets them (issue 34): Node's fetch rejects with a
// TypeError whose cause is the socket's error: "fetch failed" for a reset (ECONNRESET),
// and "terminated" while reading the body of an empty or truncated answer, whose
// connection closed short of its Content-Length (Node 20's undici says
// UND_ERR_RES_CONTENT_LENGTH_MISMATCH, as it does when a real network or proxy cuts an
// answer so; a socket error, UND_ERR_SOCKET or ECONNRESET, is taken too). A reset
// there instead would give the same TypeError, but Go's http.Client a "connection
// reset" in place of the io.ErrUnexpectedEOF it reads a cut body to (TestFaultBreaks).
// A malformed body is a SyntaxError of JSON.parse; and ky, a retrying client, honours
// the Retry-After of an injected service_unavailable and gets through.
func TestFaultsAsNodeClientsSeeThem(t *testing.T) {
	needNode(t)
	t.Parallel()
	e, err := emulator.New(emulator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(e.Handler())
	t.Cleanup(func() { srv.Close(); e.Close() })

	proj := t.TempDir()
	if err := os.MkdirAll(filepath.Join(proj, "node_modules"), 0o755); err != nil {
		t.Fatal(err)
	}
	link(t, npmTools(t, "ky@"+kyVersion), proj, "ky")
	for name, body := range map[string]string{"package.json": `{"type":"module"}`, "clients.mjs": faultClients} {
		if err := os.WriteFile(filepath.Join(proj, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := run(t, proj, nil, "node", "clients.mjs", srv.URL)
	type jsError struct {
		Name, Message string
		Cause         *struct{ Name, Code, Message string }
	}
	var seen map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &seen); err != nil {
		t.Fatalf("clients.mjs printed %q: %v", out, err)
	}
	for _, tt := range []struct {
		brk, stage string // where it fails: fetch (the promise of the answer), body (reading it), json
		name       string
		causes     []string // the cause's code, one of
	}{
		{"reset", "fetch", "TypeError", []string{"ECONNRESET", "UND_ERR_SOCKET"}},
		{"empty", "body", "TypeError", []string{"UND_ERR_RES_CONTENT_LENGTH_MISMATCH", "UND_ERR_SOCKET", "ECONNRESET"}},
		{"truncate", "body", "TypeError", []string{"UND_ERR_RES_CONTENT_LENGTH_MISMATCH", "UND_ERR_SOCKET", "ECONNRESET"}},
		{"malformed", "json", "SyntaxError", nil},
	} {
		var got struct {
			Stage  string
			Status int
			Error  *jsError
		}
		json.Unmarshal(seen[tt.brk], &got)
		t.Logf("%s: %s", tt.brk, seen[tt.brk])
		if got.Stage != tt.stage || got.Error == nil || got.Error.Name != tt.name {
			t.Errorf("%s: %s, want a %s at %s", tt.brk, seen[tt.brk], tt.name, tt.stage)
			continue
		}
		if tt.causes != nil && (got.Error.Cause == nil || !slices.Contains(tt.causes, got.Error.Cause.Code)) {
			t.Errorf("%s: %s, want a cause with code %v", tt.brk, seen[tt.brk], tt.causes)
		}
	}
	var ky struct {
		Statuses []string
		Ms       int
		Projects int
	}
	json.Unmarshal(seen["ky"], &ky)
	t.Logf("ky: %v in %v", ky.Statuses, time.Duration(ky.Ms)*time.Millisecond)
	if strings.Join(ky.Statuses, ",") != "503 Retry-After:1,503 Retry-After:1,200 Retry-After:" || ky.Ms < 1900 || ky.Projects == 0 {
		t.Errorf("ky: %s, want two 503s with Retry-After 1, then 200 after two seconds", seen["ky"])
	}
}
