package dashboard_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// attackerPage is a page a hostile site deploys to hostemu through the public API
// (which any origin may call) and then opens at its deployment host, a *.localhost
// name: from there it tries every way to the control API, same-origin and cross-origin.
const attackerPage = `<!doctype html><meta charset="utf-8"><title>pwn</title><script>
window.results = {};
const base = BASE;
async function attempt(name, url, opts) {
  try {
    const r = await fetch(url, opts);
    let body = "";
    try { body = await r.text(); } catch (e) {}
    window.results[name] = {status: r.status, type: r.type, body: body.slice(0, 400)};
  } catch (e) {
    window.results[name] = {error: String(e)};
  }
}
(async () => {
  await attempt("same-origin tokens", "/_emulator/tokens");
  await attempt("same-origin reset", "/_emulator/reset", {method: "POST"});
  await attempt("cross-origin tokens", base + "/_emulator/tokens");
  await attempt("cross-origin journal", base + "/_emulator/requests");
  await attempt("cross-origin reset", base + "/_emulator/reset", {method: "POST", mode: "no-cors"});
  await attempt("cross-origin mint", base + "/_emulator/tokens", {method: "POST", mode: "no-cors", headers: {"Content-Type": "text/plain"}, body: '{"scope":"admin"}'});
  await attempt("wildcard under .localhost", base + "/v1/projects/prj_demo/domains", {method: "POST",
    headers: {"Authorization": "Bearer hostemu-admin", "Content-Type": "application/json"}, body: JSON.stringify({hostname: "*.pwn.localhost"})});
  window.done = true;
})();
</script>`

// A page served by the edge on a *.localhost name is never the control API's origin:
// the chain of issue 24 (a foreign page deploys a page, opens it on a *.localhost host,
// and from there reads the tokens, mints an admin token and resets the world) ends at
// every step, in a real browser.
func TestEdgePageCannotReachTheControlAPI(t *testing.T) {
	browser := newBrowser(t)
	s := server(t)
	base := s.URL()
	page := strings.Replace(attackerPage, "BASE", js(strings.Replace(base, "127.0.0.1", "localhost", 1)), 1)
	sum := sha256.Sum256([]byte(page))
	digest := hex.EncodeToString(sum[:])

	req, _ := http.NewRequest("POST", base+"/v1/files", strings.NewReader(page))
	req.Header.Set("Authorization", "Bearer hostemu-deploy")
	req.Header.Set("X-File-Digest", digest)
	if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != 201 {
		t.Fatalf("upload: %v %v", res, err)
	}
	status, body := api(t, s, "POST", "/v1/deployments", "hostemu-deploy", `{"project_id":"prj_demo","files":{"index.html":"`+digest+`"}}`)
	var dep struct{ ID, URL string }
	if status != 201 || json.Unmarshal(body, &dep) != nil {
		t.Fatalf("deploy: %d %s", status, body)
	}
	if status, body := api(t, s, "POST", "/_emulator/await", "", `{"deployment":"`+dep.ID+`","status":"ready"}`); status != 200 {
		t.Fatalf("await: %d %s", status, body)
	}
	_, tokensBefore := api(t, s, "GET", "/_emulator/tokens", "", "")

	u, _ := url.Parse(dep.URL)
	_, port, _ := strings.Cut(strings.TrimPrefix(base, "http://"), ":")
	tb := &tab{t: t, ctx: browser, base: base}
	tb.do(chromedp.Navigate("http://" + u.Hostname() + ":" + port + "/"))
	tb.until("the page's attempts", `window.done === true`)
	raw, err := chromedp.Run(tb.ctx, chromedp.Evaluate[string](`JSON.stringify(window.results)`))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("attempts: %s", raw)
	var results map[string]struct {
		Status int
		Type   string
		Body   string
		Error  string
	}
	if err := json.Unmarshal([]byte(raw), &results); err != nil {
		t.Fatal(err)
	}
	for name, r := range results {
		if strings.Contains(r.Body, "hostemu-admin") || strings.Contains(r.Body, `"requests"`) {
			t.Errorf("%s: the page read the control API: %+v", name, r)
		}
	}
	if r := results["same-origin tokens"]; r.Status != 404 || !strings.Contains(r.Body, "not_found") {
		t.Errorf("same-origin GET /_emulator/tokens on the edge host: %+v (want the edge's 404)", r)
	}
	if r := results["same-origin reset"]; r.Status != 405 {
		t.Errorf("same-origin POST /_emulator/reset on the edge host: %+v (want the edge's 405)", r)
	}
	for _, name := range []string{"cross-origin tokens", "cross-origin journal"} {
		if r := results[name]; r.Error == "" {
			t.Errorf("%s: the browser let the page read the answer: %+v", name, r)
		}
	}
	if r := results["wildcard under .localhost"]; r.Status != 400 || !strings.Contains(r.Body, "invalid_hostname") {
		t.Errorf("a custom domain under .localhost: %+v (want 400 invalid_hostname)", r)
	}
	// nothing changed: the deployment is still there (no reset), no token was minted
	if status, _ := api(t, s, "GET", "/v1/deployments/"+dep.ID, "hostemu-read", ""); status != 200 {
		t.Errorf("the world was reset: GET the page's deployment answered %d", status)
	}
	if _, tokensAfter := api(t, s, "GET", "/_emulator/tokens", "", ""); string(tokensAfter) != string(tokensBefore) {
		t.Errorf("tokens changed:\nbefore %s\nafter  %s", tokensBefore, tokensAfter)
	}
}
