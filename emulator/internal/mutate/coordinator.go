package mutate

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/apperr"
	"github.com/hostemu/hostemu/emulator/internal/coverage"
	"github.com/hostemu/hostemu/emulator/internal/strictjson"
)

// maxPost bounds what a testkit may post to the coordinator: a world's coverage is a few
// tens of KB.
const maxPost = 4 << 20

// maxWorlds bounds the worlds one round may make (a suite that makes more is refused
// with 507): memory stays bounded whatever a suite does.
const maxWorlds = 100_000

// maxHello bounds a hello (a test's name, its package or file), and maxNames the bytes
// of the distinct test names one round keeps (a world of a test named already costs
// nothing more): a suite that names more is refused with 507.
const maxHello = 64 << 10

var maxNames = 64 << 20 // a variable for its test

// maxConns bounds the coordinator's open connections (the runs' test processes keep
// one or a few each): one more waits, unaccepted, until one closes; an idle one closes
// after 30 s. A variable for its test.
var maxConns = 256

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
	// names interns the test keys the round's hellos gave; held is their bytes.
	names map[string]string
	held  int
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
	mux.HandleFunc("/", unrouted)
	c.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second,
		IdleTimeout: 30 * time.Second}
	go c.srv.Serve(limitListener(ln, maxConns)) //nolint:errcheck // ends with Close
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
	r.names = map[string]string{}
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

// over reports, with c.mu held, whether round r (id) has ended since a handler found
// it: mutate reads a round's results once it is closed, so nothing may change it then.
func (c *Coordinator) over(id string, r *round) bool {
	return c.rounds[id] != r
}

// guard refuses what no testkit sends and a web page may: an Origin or a
// Sec-Fetch-Site (a browser's fetch or form, which needs no preflight to POST
// text/plain), a Host that is not loopback (a name rebound to 127.0.0.1), and a body
// that is not declared JSON (so that a page's cross-origin POST needs a preflight,
// which the coordinator never answers).
func guard(w http.ResponseWriter, r *http.Request) bool {
	if r.Header.Get("Origin") != "" || (r.Header.Get("Sec-Fetch-Site") != "" && r.Header.Get("Sec-Fetch-Site") != "none") {
		problem(w, http.StatusForbidden, "forbidden_origin", "mutate's coordinator answers the testkits of the run, not web pages")
		return false
	}
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	if ip := net.ParseIP(host); !(strings.EqualFold(host, "localhost") || ip != nil && ip.IsLoopback()) {
		problem(w, http.StatusForbidden, "forbidden_host", "mutate's coordinator answers requests to 127.0.0.1 only")
		return false
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		problem(w, http.StatusUnsupportedMediaType, "unsupported_media_type", "mutate's coordinator takes Content-Type: application/json")
		return false
	}
	return true
}

// knownOps are the operations of the description, "METHOD /path": the only ones a
// round records of a world's coverage (mutants are made of them, and a post of others
// must not grow the round).
var knownOps = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, o := range coverage.Default().Operations {
		m[strings.ToUpper(o.Method)+" "+o.Path] = true
	}
	return m
})

// problem answers the documented envelope of hostemu's errors.
func problem(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]string{"code": code, "message": msg}})
}

// unrouted answers what no route takes, in the envelope (not ServeMux's text): another
// method than POST on a round's routes, any other path.
func unrouted(w http.ResponseWriter, r *http.Request) {
	if parts := strings.Split(r.URL.Path, "/"); len(parts) == 4 && parts[0] == "" && parts[1] == "r" && (parts[3] == "world" || parts[3] == "coverage") {
		w.Header().Set("Allow", http.MethodPost)
		problem(w, http.StatusMethodNotAllowed, "method_not_allowed", fmt.Sprintf("%s takes POST, not %s", r.URL.Path, r.Method))
		return
	}
	problem(w, http.StatusNotFound, "not_found", "mutate's coordinator serves POST /r/ROUND/world and /r/ROUND/coverage only")
}

// decode reads a strict JSON body into v: an unknown key is refused, named with the
// closest known one (strictjson's message).
func decode(w http.ResponseWriter, r *http.Request, v any, limit int64) bool {
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			problem(w, http.StatusRequestEntityTooLarge, "payload_too_large", fmt.Sprintf("the body is over %d bytes", limit))
			return false
		}
		problem(w, http.StatusBadRequest, "invalid_json", "the body could not be read: "+err.Error())
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		msg := err.Error()
		if e, ok := apperr.As(strictjson.Decode(data, v, "")); ok {
			msg = e.Message // an unknown key, and the closest known one
		}
		problem(w, http.StatusBadRequest, "invalid_json", "the body is not what mutate expects: "+msg)
		return false
	}
	if _, err := dec.Token(); err != io.EOF {
		problem(w, http.StatusBadRequest, "invalid_json", "the body holds more than one JSON value")
		return false
	}
	if e, ok := apperr.As(strictjson.GivenOnce(data, v, "")); ok {
		// encoding/json keeps the last of a key given twice, or of one field given in
		// two cases ("test" and "TEST"): a testkit's bug would pass
		problem(w, http.StatusBadRequest, "invalid_json", "the body is not what mutate expects: "+e.Message)
		return false
	}
	return true
}

// accept is what every post goes through: the guard against web pages, its round (nil,
// answered, when it is over) and its body read into v, at most limit bytes.
func (c *Coordinator) accept(w http.ResponseWriter, req *http.Request, v any, limit int64) (string, *round) {
	if !guard(w, req) {
		return "", nil
	}
	id := req.PathValue("round")
	r := c.find(id)
	if r == nil {
		problem(w, http.StatusNotFound, "not_found", "no such mutation round (it is over)")
		return "", nil
	}
	if !decode(w, req, v, limit) {
		return "", nil
	}
	return id, r
}

func (c *Coordinator) world(w http.ResponseWriter, req *http.Request) {
	var h Hello
	id, r := c.accept(w, req, &h, maxHello)
	if r == nil {
		return
	}
	key := r.runner.Key(h)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.over(id, r) {
		problem(w, http.StatusNotFound, "not_found", "no such mutation round (it is over)")
		return
	}
	if r.worlds >= maxWorlds {
		problem(w, http.StatusInsufficientStorage, "too_many_worlds", fmt.Sprintf("a run made more than %d worlds", maxWorlds))
		return
	}
	if key == "" {
		key = r.only
	}
	if k, ok := r.names[key]; ok {
		key = k // one copy of each name, however many worlds
	} else if key != "" {
		if r.held+len(key) > maxNames {
			problem(w, http.StatusInsufficientStorage, "too_many_tests", fmt.Sprintf("a run named tests of more than %d bytes in all", maxNames))
			return
		}
		r.names[key] = key
		r.held += len(key)
	}
	if key == "" {
		r.nameless++
	}
	r.worlds++
	world := fmt.Sprintf("w%d", r.worlds)
	r.keyOf[world] = key
	ans := Welcome{World: world, Report: true}
	if m := r.mutants[key]; m != nil && key != "" {
		ans.Fault = m.Fault()
		r.armed[key] = true
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(ans)
}

func (c *Coordinator) coverage(w http.ResponseWriter, req *http.Request) {
	var rep Report
	id, r := c.accept(w, req, &rep, maxPost)
	if r == nil {
		return
	}
	var cov Coverage
	if err := json.Unmarshal(rep.Coverage, &cov); err != nil {
		problem(w, http.StatusBadRequest, "invalid_json", "coverage: "+err.Error())
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.over(id, r) {
		problem(w, http.StatusNotFound, "not_found", "no such mutation round (it is over)")
		return
	}
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
		known := knownOps()
		for _, op := range cov.Operations {
			if k := strings.ToUpper(op.Method) + " " + op.Path; op.Seen > 0 && known[k] {
				set[k] = true
			}
		}
	}
	w.WriteHeader(http.StatusNoContent)
}

// limitListener is ln accepting at most n connections open at a time: Accept waits for
// one of them to close before it takes the next from the kernel's queue.
func limitListener(ln net.Listener, n int) net.Listener {
	return &limited{Listener: ln, slots: make(chan struct{}, n), done: make(chan struct{})}
}

type limited struct {
	net.Listener
	slots     chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

func (l *limited) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &slotConn{Conn: c, free: func() { <-l.slots }}, nil
}

func (l *limited) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// slotConn gives its slot back once, on its first Close.
type slotConn struct {
	net.Conn
	once sync.Once
	free func()
}

func (c *slotConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.free)
	return err
}
