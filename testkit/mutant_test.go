package testkit_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/hostemu/hostemu/testkit"
)

// standIn is the coordinator's half of the protocol: it answers each hello with
// welcome and records the paths posted to.
type standIn struct {
	welcome string
	mu      sync.Mutex
	posts   []string
}

func (s *standIn) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.posts = append(s.posts, r.Method+" "+r.URL.Path)
	s.mu.Unlock()
	if r.URL.Path == "/r/x/coverage" {
		var body struct {
			World    string          `json:"world"`
			Coverage json.RawMessage `json:"coverage"`
		}
		if json.NewDecoder(r.Body).Decode(&body) != nil || body.World != "w1" || len(body.Coverage) == 0 {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		w.WriteHeader(http.StatusNoContent)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write([]byte(s.welcome))
}

// Under hostemu mutate, Start says hello (HOSTEMU_MUTANT with a trailing slash reaches
// the same coordinator, as in the JS and Python testkits) and posts the world's
// coverage when the test ends.
func TestMutantHelloAndCoverage(t *testing.T) {
	s := &standIn{welcome: `{"world":"w1","fault":null,"report":true}`}
	srv := httptest.NewServer(s)
	defer srv.Close()
	t.Setenv(testkit.MutantEnv, srv.URL+"/r/x/")
	t.Run("test", func(t *testing.T) { testkit.Start(t) })
	s.mu.Lock()
	defer s.mu.Unlock()
	if got := strings.Join(s.posts, ", "); got != "POST /r/x/world, POST /r/x/coverage" {
		t.Errorf("posts = %s, want the hello and the coverage", got)
	}
}

// A coordinator's answer that names no world fails the test, as in the JS and Python
// testkits: the mutant it should have carried would never be injected.
func TestMutantWelcomeWithoutWorldFails(t *testing.T) {
	srv := httptest.NewServer(&standIn{welcome: `{}`})
	defer srv.Close()
	t.Setenv(testkit.MutantEnv, srv.URL+"/r/x")
	if msg := fatalOf(t, func(tb testing.TB) { testkit.Start(tb) }); !strings.Contains(msg, "without naming the world") {
		t.Errorf("Fatalf = %q", msg)
	}
}
