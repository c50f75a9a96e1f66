package mutate

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// maxPost bounds what a testkit may post to the coordinator: a world's coverage is a few
// tens of KB.
const maxPost = 4 << 20

// maxWorlds bounds the worlds one round may make (a suite that makes more is refused
// with 507): memory stays bounded whatever a suite does.
const maxWorlds = 100_000

// Coordinator hands each world its mutant and gathers the baseline's coverage. It
// listens on 127.0.0.1 only; each round has an unguessable id in its URL.
type Coordinator struct {
	ln  net.Listener
	srv *http.Server

	mu     sync.Mutex
	rounds map[string]*round
}

// round is one run of the suite, as the coordinator sees it.
type round struct {
	runner Runner
	// baseline: worlds report their coverage.
	baseline bool
	// only is the test a run of one test attributes nameless worlds to ("" when the run
	// has many).
	only string
	// mutants: the test key → the mutant its worlds arm in this round.
	mutants map[string]*Mutant

	worlds int
	// keyOf: world id → test key.
	keyOf map[string]string
	// armed: test keys whose worlds were handed their mutant.
	armed map[string]bool
	// called: test key → "METHOD /path" of the operations its worlds' clients called
	// (baseline only).
	called map[string]map[string]bool
	// nameless counts worlds that named no test in a run of many (not attributable).
	nameless int
}

// NewCoordinator starts a coordinator on 127.0.0.1:0.
func NewCoordinator() (*Coordinator, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("mutate: the coordinator cannot listen: %w", err)
	}
	c := &Coordinator{ln: ln, rounds: map[string]*round{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /r/{round}/world", c.world)
	mux.HandleFunc("POST /r/{round}/coverage", c.coverage)
	c.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second}
	go c.srv.Serve(ln) //nolint:errcheck // ends with Close
	return c, nil
}

// Close stops the coordinator.
func (c *Coordinator) Close() error { return c.srv.Close() }

// open registers a round and gives the HOSTEMU_MUTANT value of its run.
func (c *Coordinator) open(r *round) (id, url string) {
	var b [16]byte
	_, _ = rand.Read(b[:])
	id = hex.EncodeToString(b[:])
	r.keyOf = map[string]string{}
	r.armed = map[string]bool{}
	r.called = map[string]map[string]bool{}
	c.mu.Lock()
	c.rounds[id] = r
	c.mu.Unlock()
	return id, "http://" + c.ln.Addr().String() + "/r/" + id
}

// close forgets a round: a late hello of a killed run finds nothing.
func (c *Coordinator) close(id string) {
	c.mu.Lock()
	delete(c.rounds, id)
	c.mu.Unlock()
}

func (c *Coordinator) find(id string) *round {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.rounds[id]
}

// problem answers the documented envelope of hostemu's errors.
func problem(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]string{"code": code, "message": msg}})
}

// decode reads a strict JSON body into v.
func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxPost))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			problem(w, http.StatusRequestEntityTooLarge, "payload_too_large", fmt.Sprintf("the body is over %d bytes", maxPost))
			return false
		}
		problem(w, http.StatusBadRequest, "invalid_json", "the body is not what mutate expects: "+err.Error())
		return false
	}
	if _, err := dec.Token(); err != io.EOF {
		problem(w, http.StatusBadRequest, "invalid_json", "the body holds more than one JSON value")
		return false
	}
	return true
}

func (c *Coordinator) world(w http.ResponseWriter, req *http.Request) {
	r := c.find(req.PathValue("round"))
	if r == nil {
		problem(w, http.StatusNotFound, "not_found", "no such mutation round (it is over)")
		return
	}
	var h Hello
	if !decode(w, req, &h) {
		return
	}
	key := r.runner.Key(h)
	c.mu.Lock()
	defer c.mu.Unlock()
	if r.worlds >= maxWorlds {
		problem(w, http.StatusInsufficientStorage, "too_many_worlds", fmt.Sprintf("a run made more than %d worlds", maxWorlds))
		return
	}
	if key == "" {
		key = r.only
	}
	if key == "" {
		r.nameless++
	}
	r.worlds++
	id := fmt.Sprintf("w%d", r.worlds)
	r.keyOf[id] = key
	ans := Welcome{World: id, Report: true}
	if m := r.mutants[key]; m != nil && key != "" {
		ans.Fault = m.Fault()
		r.armed[key] = true
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(ans)
}

func (c *Coordinator) coverage(w http.ResponseWriter, req *http.Request) {
	r := c.find(req.PathValue("round"))
	if r == nil {
		problem(w, http.StatusNotFound, "not_found", "no such mutation round (it is over)")
		return
	}
	var rep Report
	if !decode(w, req, &rep) {
		return
	}
	var cov Coverage
	if err := json.Unmarshal(rep.Coverage, &cov); err != nil {
		problem(w, http.StatusBadRequest, "invalid_json", "coverage: "+err.Error())
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	key, ok := r.keyOf[rep.World]
	if !ok {
		problem(w, http.StatusNotFound, "not_found", fmt.Sprintf("no world %q in this round", rep.World))
		return
	}
	if key != "" {
		set := r.called[key]
		if set == nil {
			set = map[string]bool{}
			r.called[key] = set
		}
		for _, op := range cov.Operations {
			if op.Seen > 0 {
				set[strings.ToUpper(op.Method)+" "+op.Path] = true
			}
		}
	}
	w.WriteHeader(http.StatusNoContent)
}
