package httpapi

import (
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/hostemu/hostemu/emulator/internal/fault"
	"github.com/hostemu/hostemu/emulator/internal/state"
	"github.com/hostemu/hostemu/emulator/internal/world"
)

// Services a request can belong to.
const (
	serviceHosting = "hosting"
	serviceCipher  = "cipher"
)

// reqInfo is what the middleware learns about a public request.
type reqInfo struct {
	w         *world.World // the request's world: its namespace's, or the default one
	start     time.Time
	service   string
	hasHeader bool        // an Authorization header was sent
	authed    bool        // its bearer credential is valid
	scope     state.Scope // hosting tokens only
	limitKey  string      // the rate-limit key the request was counted under
	perIP     bool
	errCode   string
	faultID   string // the injected fault that fired
	body      *capture
	// redact keeps an /v1/encrypt body out of the journal: only the payload's length
	// (payloadChars, -1 until the handler has read it) is recorded.
	redact       bool
	payloadChars int
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

// isControl reports whether a path belongs to the control API, the docs or the
// dashboard, which are never rate limited, faulted or journaled.
func isControl(path string) bool {
	return path == "/_emulator" || strings.HasPrefix(path, "/_emulator/") || path == "/docs" || strings.HasPrefix(path, "/docs/") || isDashboard(path)
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
		if path == "/v1/encrypt" {
			info.redact, info.payloadChars = true, -1 // plaintext never reaches the journal
		} else if c.Request.Body != nil && c.Request.Body != http.NoBody {
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
		a.identify(c, info)
		d, now := info.w.Count(info.limitKey, info.perIP)
		c.Writer.Header()["Date"] = dateHeader(now)
		setRateHeaders(c, d)
		if !d.Allowed {
			a.tooMany(c, d)
			return
		}
		if act, ok := info.w.MatchFault(fault.Request{Method: c.Request.Method, Path: path, Service: info.service, Scope: string(info.scope)}); ok {
			info.faultID = act.FaultID
			if !a.applyFault(c, info, act) {
				return
			}
		}
		c.Next()
	}
}
