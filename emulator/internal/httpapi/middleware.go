package httpapi

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/hostemu/hostemu/emulator/internal/fault"
	"github.com/hostemu/hostemu/emulator/internal/journal"
	"github.com/hostemu/hostemu/emulator/internal/ratelimit"
	"github.com/hostemu/hostemu/emulator/internal/state"
)

// Services a request can belong to.
const (
	serviceHosting = "hosting"
	serviceCipher  = "cipher"
)

// reqInfo is what the middleware learns about a public request.
type reqInfo struct {
	start     time.Time
	service   string
	hasHeader bool        // an Authorization header was sent
	authed    bool        // its bearer credential is valid
	scope     state.Scope // hosting tokens only
	limitKey  string      // the rate-limit key the request was counted under
	perIP     bool
	errCode   string
	body      *capture
}

// infoWriter carries a public request's reqInfo on its response writer: one
// allocation, where gin's c.Set would make a map per request.
type infoWriter struct {
	gin.ResponseWriter
	info reqInfo
}

// infoOf is the reqInfo of a public request, or nil for control and docs requests.
func infoOf(c *gin.Context) *reqInfo {
	if w, ok := c.Writer.(*infoWriter); ok {
		return &w.info
	}
	return nil
}

// capture keeps the first journal.MaxBody bytes of a request body as it is read.
type capture struct {
	r   io.ReadCloser
	buf bytes.Buffer
	eof bool // the body was read to its end
}

func (c *capture) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if err != nil {
		c.eof = true
	}
	if room := journal.MaxBody + 1 - c.buf.Len(); room > 0 && n > 0 {
		c.buf.Write(p[:min(n, room)])
	}
	return n, err
}

func (c *capture) Close() error { return c.r.Close() }

// recovery turns a panic into a 500 in the documented envelope.
func (a *API) recovery() gin.HandlerFunc {
	return func(c *gin.Context) {
		defer func() {
			if r := recover(); r != nil {
				if r == http.ErrAbortHandler {
					panic(r)
				}
				a.panicked(c, r)
			}
		}()
		c.Next()
	}
}

// panicked logs a recovered panic and answers 500 in the envelope, unless the answer
// was already on its way.
func (a *API) panicked(c *gin.Context, r any) {
	a.log.Error("panic serving request", "method", c.Request.Method, "path", c.Request.URL.Path, "panic", r)
	if c.Writer.Written() {
		c.Abort()
		return
	}
	a.renderError(c, newError("internal_error", "internal error; see the emulator's log"))
}

// isControl reports whether a path belongs to the control API or the docs, which are
// never rate limited, faulted or journaled.
func isControl(path string) bool {
	return path == "/_emulator" || strings.HasPrefix(path, "/_emulator/") || path == "/docs" || strings.HasPrefix(path, "/docs/")
}

// serviceOf tells which emulated service a path belongs to.
func serviceOf(path string) string {
	if path == "/v1/decrypt" || path == "/v1/encrypt" {
		return serviceCipher
	}
	return serviceHosting
}

// public is the chain every public request runs through: identify the caller, count it
// against its rate limit (before auth, so an exhausted IP gets 429, not 401), apply
// injected faults, then journal and log it once it is answered.
func (a *API) public() gin.HandlerFunc {
	return func(c *gin.Context) {
		path := c.Request.URL.Path
		if isControl(path) || (c.Request.Method == http.MethodOptions && c.FullPath() != "") {
			c.Next() // control routes and CORS preflights are not counted
			return
		}
		iw := &infoWriter{ResponseWriter: c.Writer, info: reqInfo{start: time.Now(), service: serviceOf(path)}}
		c.Writer = iw
		info := &iw.info
		if c.Request.Body != nil && c.Request.Body != http.NoBody {
			info.body = &capture{r: c.Request.Body}
			c.Request.Body = info.body
		}
		defer func() {
			// recover here, not only in recovery(), so the journal records the 500
			r := recover()
			if r != nil && r != http.ErrAbortHandler {
				a.panicked(c, r)
			}
			a.record(c, info)
			if r == http.ErrAbortHandler {
				panic(r) // net/http's way to drop the connection
			}
		}()
		a.w.Sched.FireDue()
		a.identify(c, info)

		now := a.w.Clock.Now()
		var d ratelimit.Decision
		if info.perIP {
			d = a.w.Limiter.IP(info.limitKey, now)
		} else {
			d = a.w.Limiter.Token(info.limitKey, now)
		}
		setRateHeaders(c, d)
		if !d.Allowed {
			a.tooMany(c, d)
			return
		}
		if act, ok := a.w.Faults.Match(fault.Request{Method: c.Request.Method, Path: path, Service: info.service, Scope: string(info.scope)}); ok {
			if !a.applyFault(c, info, act) {
				return
			}
		}
		c.Next()
	}
}

// identify reads the bearer credential and decides the rate-limit key: the token's for a
// valid credential, else the client IP's (per service).
func (a *API) identify(c *gin.Context, info *reqInfo) {
	h := c.Request.Header.Get("Authorization")
	info.hasHeader = h != ""
	if tok, ok := bearer(h); ok {
		if info.service == serviceCipher {
			var i int
			if i, info.authed = a.apiKeyIndex(tok); info.authed {
				info.limitKey = "cipher|k" + strconv.Itoa(i)
				return
			}
		} else if info.scope, info.limitKey, info.authed = a.w.Store.AuthenticateKey(tok); info.authed {
			return
		}
	}
	info.perIP = true
	info.limitKey = info.service + "|" + a.clientIP(c).String()
}

// bearer extracts the token of an "Authorization: Bearer <token>" header.
func bearer(h string) (string, bool) {
	const prefix = "bearer "
	if len(h) <= len(prefix) || !strings.EqualFold(h[:len(prefix)], prefix) {
		return "", false
	}
	tok := strings.TrimSpace(h[len(prefix):])
	return tok, tok != "" && !strings.ContainsAny(tok, " \t")
}

func setRateHeaders(c *gin.Context, d ratelimit.Decision) {
	// one backing array for the three values: this runs on every request. The keys are
	// spelled as the spec spells them (not Go's canonical X-Ratelimit-…): that is what
	// goes on the wire. In-process, read them as rec.Header()["X-RateLimit-Limit"].
	v := [3]string{smallItoa(int64(d.Limit)), smallItoa(int64(max(d.Remaining, 0))), resetItoa(d.Reset.Unix())}
	vals := v[:]
	h := c.Writer.Header()
	h["X-RateLimit-Limit"] = vals[0:1:1]
	h["X-RateLimit-Remaining"] = vals[1:2:2]
	h["X-RateLimit-Reset"] = vals[2:3:3]
}

// smallInts are the decimal forms of the limits and counts most headers carry, made
// once rather than on every response.
var smallInts = func() (t [5001]string) {
	for i := range t {
		t[i] = strconv.Itoa(i)
	}
	return t
}()

func smallItoa(n int64) string {
	if n >= 0 && n < int64(len(smallInts)) {
		return smallInts[n]
	}
	return itoa(n)
}

// lastReset caches the decimal form of the last X-RateLimit-Reset: within a second,
// every response carries the same one.
var lastReset atomic.Pointer[struct {
	n int64
	s string
}]

func resetItoa(n int64) string {
	if p := lastReset.Load(); p != nil && p.n == n {
		return p.s
	}
	s := itoa(n)
	lastReset.Store(&struct {
		n int64
		s string
	}{n, s})
	return s
}

func (a *API) tooMany(c *gin.Context, d ratelimit.Decision) {
	secs := int64(math.Ceil(d.RetryAfter.Seconds()))
	c.Header("Retry-After", itoa(max(secs, 1)))
	a.renderError(c, newError("rate_limited", "rate limit exceeded; retry after "+itoa(max(secs, 1))+" s"))
}

// need is the per-route auth check: a valid credential, and for hosting routes a token
// whose scope allows the operation.
func (a *API) need(scope state.Scope) gin.HandlerFunc {
	return a.needScope(func() state.Scope { return scope })
}

// needDomainWrite is need with the scope the fixtures' policy gives domain writes.
func (a *API) needDomainWrite() gin.HandlerFunc {
	return a.needScope(func() state.Scope { return a.w.Store.Policy().DomainWriteScope })
}

func (a *API) needScope(scope func() state.Scope) gin.HandlerFunc {
	return func(c *gin.Context) {
		if a.authorize(c, scope) {
			c.Next()
		}
	}
}

func (a *API) authorize(c *gin.Context, scope func() state.Scope) bool {
	info := infoOf(c)
	switch {
	case info == nil:
		a.renderError(c, newError("internal_error", "request was not identified"))
		return false
	case !info.hasHeader:
		a.renderError(c, newError("missing_token", "send the header Authorization: Bearer <token>"))
		return false
	case !info.authed:
		a.renderError(c, newError("invalid_token", "the bearer token is unknown, revoked or malformed"))
		return false
	}
	if info.service == serviceCipher {
		return true
	}
	if need := scope(); !info.scope.Allows(need) {
		a.renderError(c, newError("insufficient_scope", "this operation needs a token with scope "+string(need)+" (or higher); this token has scope "+string(info.scope)))
		return false
	}
	return true
}

// applyFault carries out an injected fault. It reports whether the request goes on to
// its real handler.
func (a *API) applyFault(c *gin.Context, info *reqInfo, act fault.Action) bool {
	if act.Delay > 0 {
		t := time.NewTimer(act.Delay)
		select {
		case <-t.C:
		case <-c.Request.Context().Done():
		case <-a.release:
		}
		t.Stop()
	}
	switch {
	case act.Status != 0:
		code := act.Code
		if code == "" {
			code = codeForStatus(act.Status)
		}
		msg := act.Message
		if msg == "" {
			msg = "injected fault " + act.FaultID
		}
		a.renderError(c, &apiError{Status: act.Status, Code: code, Message: msg})
		return false
	case act.RateLimit:
		d := a.w.Limiter.Exhausted(info.limitKey, a.w.Clock.Now(), info.perIP)
		setRateHeaders(c, d)
		a.tooMany(c, d)
		return false
	case act.Timeout:
		ctx, cancel := context.WithTimeout(c.Request.Context(), fault.MaxTimeoutSeconds*time.Second)
		select {
		case <-ctx.Done():
		case <-a.release:
		}
		cancel()
		info.errCode = "timeout"
		drop(c)
		return false
	case act.Drop:
		info.errCode = "dropped"
		drop(c)
		return false
	}
	return true
}

// drop closes the connection without a response.
func drop(c *gin.Context) {
	c.Abort()
	conn, _, err := c.Writer.Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	if tc, ok := conn.(interface{ SetLinger(int) error }); ok { // *net.TCPConn, or wrapped
		tc.SetLinger(0)
	}
	conn.Close()
}

// record journals an answered public request and logs it at debug.
func (a *API) record(c *gin.Context, info *reqInfo) {
	status := c.Writer.Status()
	if info.errCode == "dropped" || info.errCode == "timeout" {
		status = 0
	}
	e := journal.Entry{
		Method:     c.Request.Method,
		Path:       c.Request.URL.Path,
		Query:      c.Request.URL.RawQuery,
		Status:     status,
		DurationMS: float64(time.Since(info.start).Microseconds()) / 1000,
		ErrorCode:  info.errCode,
		Scope:      string(info.scope),
		Service:    info.service,
		Time:       a.w.Clock.Now(),
	}
	if info.service == serviceCipher && info.authed {
		e.Scope = "api_key"
	}
	if b := info.body; b != nil {
		if !b.eof && b.buf.Len() <= journal.MaxBody && status != 0 {
			// answered before the handler read the body (401, 403, 415, 429, a fault):
			// read what the journal keeps of it now
			io.CopyN(io.Discard, b, int64(journal.MaxBody+1-b.buf.Len()))
		}
		e.Body = b.buf.String()
	}
	a.w.Journal.Add(e)
	if a.log.Enabled(c.Request.Context(), slog.LevelDebug) { // spare the hot path the arguments' allocations
		a.log.Debug("request", "method", e.Method, "path", e.Path, "query", e.Query, "status", status, "service", e.Service,
			"scope", e.Scope, "error_code", e.ErrorCode, "duration_ms", e.DurationMS)
	}
}

// clientIP is the TCP peer, or with --trusted-proxies the nearest untrusted address of
// X-Forwarded-For.
func (a *API) clientIP(c *gin.Context) netip.Addr {
	peer := peerAddr(c.Request.RemoteAddr)
	if !a.trusted(peer) {
		return peer
	}
	var hops []netip.Addr
	for _, h := range c.Request.Header.Values("X-Forwarded-For") {
		for _, part := range strings.Split(h, ",") {
			if ip, err := netip.ParseAddr(strings.TrimSpace(part)); err == nil {
				hops = append(hops, ip.Unmap())
			}
		}
	}
	for i := len(hops) - 1; i >= 0; i-- {
		if !a.trusted(hops[i]) {
			return hops[i]
		}
	}
	if len(hops) > 0 {
		return hops[0]
	}
	return peer
}

func peerAddr(remote string) netip.Addr {
	if ap, err := netip.ParseAddrPort(remote); err == nil {
		return ap.Addr().Unmap()
	}
	if ip, err := netip.ParseAddr(remote); err == nil {
		return ip.Unmap()
	}
	return netip.IPv4Unspecified()
}

func (a *API) trusted(ip netip.Addr) bool {
	for _, p := range a.cfg.TrustedProxies {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

func (a *API) trustedPeer(c *gin.Context) bool { return a.trusted(peerAddr(c.Request.RemoteAddr)) }
