package emulator_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/hostemu/hostemu/emulator"
)

// A request that came in through hostemu's own listener has its headers journaled as
// one handed to the handler in process: the journal keeps the listener's header map and
// makes the entry's headers when the entry is read (journal.SetServedRequestHeaders),
// and every reader — the listing, a header filter, an await's count, a near miss —
// sees what the entry made at once shows: sorted, credentials redacted, several values
// joined, cut at MaxHeaders.
func TestJournalServedHeadersAsInProcess(t *testing.T) {
	t.Parallel()
	_, served := listenEnv(t, emulator.Limits{})
	inProcess := newEnv(t)
	headerSets := []map[string]string{
		{},
		{"X-Trace": "a", "Cookie": "session=secret", "Accept": "application/json"},
		{"X-Long": strings.Repeat("é", 900) + "x", "X-After": "y"},
		{"Proxy-Authorization": "Basic c2VjcmV0", "X-Many": "1"},
	}
	send := func(e *env) {
		for i, hs := range headerSets {
			e.do(req{Method: "GET", Path: fmt.Sprintf("/v1/deployments/dpl_missing%d", i), Token: "t-admin", Headers: hs})
		}
		// several values of one header, on the wire
		hr, _ := http.NewRequest("GET", e.url+"/v1/projects", nil)
		hr.Header.Add("X-Multi", "one")
		hr.Header.Add("X-Multi", "two")
		hr.Header.Set("Authorization", "Bearer t-admin")
		res, err := http.DefaultClient.Do(hr)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
	}
	send(served)
	send(inProcess)
	headersOf := func(e *env, query string) string {
		var out []json.RawMessage
		for _, x := range journalOf(t, e, query) {
			b, _ := json.Marshal(struct {
				Path             string
				Headers          any
				HeadersTruncated bool
			}{x.Path, x.Headers, x.HeadersTruncated})
			out = append(out, b)
		}
		b, _ := json.Marshal(out)
		return string(b)
	}
	for _, q := range []string{"", "?header=X-Trace:a", "?header=Authorization:[redacted]", "?header=X-Multi:one,%20two"} {
		a, b := headersOf(served, q), headersOf(inProcess, q)
		if a != b {
			t.Errorf("query %q: through the listener\n%s\nin process\n%s", q, a, b)
		}
		if q != "" && (a == "null" || a == "[]") {
			t.Errorf("query %q selected nothing", q)
		}
	}
	if all := headersOf(served, ""); strings.Contains(all, "secret") || strings.Contains(all, "c2VjcmV0") || strings.Contains(all, "Bearer") {
		t.Errorf("a credential was journaled: %s", all)
	}
}
