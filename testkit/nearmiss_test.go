package testkit_test

import (
	"strings"
	"testing"
	"time"

	"github.com/hostemu/hostemu/testkit"
)

// A fault that did not fire, and an await that timed out, say what almost matched.
func TestNearMissesInTheTestkit(t *testing.T) {
	t.Parallel()
	e := testkit.Start(t)
	f := e.InjectFault(testkit.FaultSpec{Match: testkit.FaultMatch{Method: "DELETE", Path: "/v1/projects"}, Status: 503})
	if nms := f.NearMisses(); len(nms) != 0 {
		t.Fatalf("near misses before any request: %+v", nms)
	}
	if status, _ := hosting(e, "GET", "/v1/projects", e.ReadToken(), nil); status != 200 {
		t.Fatalf("GET /v1/projects: %d", status)
	}
	nms := f.NearMisses()
	if len(nms) != 1 || nms[0].Seq != 1 || nms[0].Method != "GET" || nms[0].Differs.Method == nil || *nms[0].Differs.Method != "GET" || nms[0].Differs.Path != nil {
		t.Fatalf("near misses: %+v", nms)
	}
	if list := e.Faults(); len(list) != 1 || list[0].ID != f.ID() || list[0].Match.Path != "/v1/projects" || len(list[0].NearMisses) != 1 {
		t.Fatalf("Faults: %+v", list)
	}

	// the await's failure names the near miss
	msg := fatalOf(t, func(tb testing.TB) {
		e.With(tb).WaitForRequestsWithin(testkit.RequestFilter{Method: "DELETE", Path: "/v1/projects"}, 1, 10*time.Millisecond)
	})
	if want := `408 await_timeout`; !strings.Contains(msg, want) {
		t.Errorf("await failure %q lacks %q", msg, want)
	}
	if want := `near misses: seq 1 GET /v1/projects differs in {"method":"GET"}`; !strings.Contains(msg, want) {
		t.Errorf("await failure %q lacks %q", msg, want)
	}

	// a journal query that selects nothing says what almost matched it
	if nms := e.RequestNearMisses(testkit.RequestFilter{Method: "GET", Path: "/v1/project"}); len(nms) != 1 || nms[0].Seq != 1 || nms[0].Differs.Method != nil || nms[0].Differs.Path == nil || *nms[0].Differs.Path != "/v1/projects" {
		t.Fatalf("RequestNearMisses: %+v", nms)
	}
	if nms := e.RequestNearMisses(testkit.RequestFilter{Method: "GET", Path: "/v1/projects"}); len(nms) != 0 {
		t.Fatalf("RequestNearMisses of a query that selects a request: %+v", nms)
	}
}
