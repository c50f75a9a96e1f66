package httpapi

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/hostemu/hostemu/emulator/internal/fault"
	"github.com/hostemu/hostemu/emulator/internal/journal"
	"github.com/hostemu/hostemu/emulator/internal/state"
)

// The journal shows an answer's head as it was sent: a header a handler sets after
// the head went out (WriteHeader, the first Write, a Flush) never reaches the client
// (net/http sends the map as it was then), and the entry does not list it either;
// the ones set before are listed as sent. Through a real server, so that what the
// client receives is net/http's own doing.
func TestJournalAnswerHeadAsSent(t *testing.T) {
	a := newTestAPI(t)
	late := func(c *gin.Context) {
		h := c.Writer.Header()
		h.Set("X-Ratelimit-Limit", "7") // changed after: the wire keeps this one
		h.Set("Location", "/before")
		h.Set("Content-Type", "text/early") // else net/http sniffs one, which the map never holds
	}
	after := func(h http.Header) {
		h.Set("X-Ratelimit-Limit", "999")
		h.Set("X-Ratelimit-Remaining", "998") // replaced after: the wire keeps the limiter's
		h.Set("Location", "/after")
		h.Set("Retry-After", "5")                   // new after: never sent
		h.Set("Content-Type", "text/late")          // changed after
		h.Add("X-Ratelimit-Reset", "1")             // a second value after
		h["Location"][0] = "/edited-in-place/after" // an edit of a value in place
	}
	lateWrite := func(c *gin.Context) {
		late(c)
		c.Writer.WriteHeader(200)
		c.Writer.Write([]byte(`{"ok":true,"some":"more bytes"}`))
		after(c.Writer.Header())
	}
	for path, spec := range map[string]fault.Spec{
		"/v1/late-truncate":  {Break: fault.BreakTruncate},
		"/v1/late-malformed": {Break: fault.BreakMalformed},
		"/v1/late-wrongtype": {Break: fault.BreakWrongType},
		"/v1/late-shaped":    {Headers: map[string]string{"X-Ratelimit-Shaped": "1", "Location": "/shaped"}},
	} {
		spec.Match = fault.Match{Query: map[string]string{"fault": path}} // (a path must be the API's)
		if _, err := a.w.AddFault(spec); err != nil {
			t.Fatal(err)
		}
	}
	routes := map[string]gin.HandlerFunc{
		// gin's WriteHeader then its first Write: the head goes out at the Write
		"/v1/late-write": func(c *gin.Context) {
			late(c)
			c.Writer.WriteHeader(201)
			c.Writer.Write([]byte(`{"ok":true}`))
			after(c.Writer.Header())
		},
		// the head sent at once, no body
		"/v1/late-now": func(c *gin.Context) {
			late(c)
			c.Status(202)
			c.Writer.WriteHeaderNow()
			after(c.Writer.Header())
		},
		// a Write with no WriteHeader: 200, sent with the first bytes
		"/v1/late-implicit": func(c *gin.Context) {
			late(c)
			exchangeOf(c).Write([]byte("ok"))
			after(c.Writer.Header())
		},
		// a Flush sends the head
		"/v1/late-flush": func(c *gin.Context) {
			late(c)
			c.Writer.Flush()
			after(c.Writer.Header())
		},
		// faults' breaks (matched below): a break that holds the answer back sends the
		// head at its end, late headers included; one that passes it on sends it at once
		"/v1/late-truncate":  lateWrite,
		"/v1/late-malformed": lateWrite,
		"/v1/late-wrongtype": lateWrite,
		"/v1/late-shaped":    lateWrite,
		// the control: set before the head went out, all of it is sent and listed
		"/v1/early": func(c *gin.Context) {
			late(c)
			after(c.Writer.Header())
			c.Writer.WriteHeader(200)
			c.Writer.Write([]byte("ok"))
		},
	}
	for path, h := range routes {
		a.engine.Handle("GET", path, a.need(state.ScopeRead), h)
	}
	srv := httptest.NewServer(a.Handler())
	t.Cleanup(srv.Close)
	for path := range routes {
		for _, enc := range []string{"identity", "gzip"} {
			t.Run(path+"/"+enc, func(t *testing.T) {
				query := "enc=" + enc + "&fault=" + path
				req, _ := http.NewRequest("GET", srv.URL+path+"?"+query, nil)
				req.Header.Set("Authorization", "Bearer t")
				req.Header.Set("Accept-Encoding", enc) // gzip: the gzip layer may hold the head back
				resp, err := srv.Client().Do(req)
				if err != nil {
					t.Fatal(err)
				}
				if resp.Header.Get("Content-Encoding") == "gzip" {
					resp.Header.Del("Content-Encoding")
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				var es []journal.Entry
				for _, e := range a.w.Requests(journal.Filter{Path: path}) {
					if e.Query == query {
						es = append(es, e)
					}
				}
				if len(es) != 1 {
					t.Fatalf("journal: %d entries for %s", len(es), path)
				}
				if strings.Contains(path, "-") && !strings.HasSuffix(path, "-write") && !strings.HasSuffix(path, "-now") &&
					!strings.HasSuffix(path, "-implicit") && !strings.HasSuffix(path, "-flush") && es[0].FaultID == "" {
					t.Fatalf("the fault did not fire: %+v", es[0])
				}
				got := es[0].Response.Headers
				var want journal.Headers
				for _, x := range journal.HeadersOf(resp.Header) {
					if journal.AnswerHeader(x.Name) {
						want = append(want, x)
					}
				}
				if len(got) != len(want) {
					t.Fatalf("journal lists %v; the client received %v", got, want)
				}
				for i := range got {
					if got[i] != want[i] {
						t.Fatalf("journal lists %v; the client received %v", got, want)
					}
				}
				if es[0].Response.Headers.Get("Location") == "" {
					t.Fatalf("no Location listed: %v", got)
				}
			})
		}
	}
}
