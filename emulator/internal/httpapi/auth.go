package httpapi

import (
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/hostemu/hostemu/emulator/internal/apperr"
	"github.com/hostemu/hostemu/emulator/internal/state"
)

// authorization is the first Authorization header of h and how many h has: two
// credentials are none, in the hosting and decryption APIs as in the control API's.
func authorization(h http.Header) (first string, n int) {
	vals := h["Authorization"]
	if len(vals) == 0 {
		return "", 0
	}
	return vals[0], len(vals)
}

// identify reads the bearer credential, finds the request's world (a namespace's token
// or key names its namespace; any other credential, or none, is the default world's) and
// decides the rate-limit key: the token's for a valid credential, else the client IP's
// (per service).
func (a *API) identify(ex *exchange, r *http.Request) {
	h, n := authorization(r.Header)
	ex.hasHeader = h != "" || n > 1 // an empty first of two is still two
	cipher := ex.class.Kind == KindCipher
	tok, ok := bearer(h)
	ex.token, ex.tokenRead = tok, true
	// Two credentials are none: reading the first would let a test whose client adds a
	// second one pass (authorize says why).
	ok = ok && n == 1
	if ok {
		if n, found := a.ns.ByToken(tok); found {
			ex.w = n.World
		}
		if cipher {
			if ex.limitKey, ex.authed = ex.w.AuthenticateCipher(tok); ex.authed {
				return
			}
		} else if ex.scope, ex.limitKey, ex.authed = ex.w.Authenticate(tok); ex.authed {
			return
		}
	}
	ex.perIP = true
	ex.limitKey = ex.class.Kind.service() + "|" + a.clientIP(r).String()
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

// need is the per-route auth check: a valid credential, and for hosting routes a token
// whose scope allows the operation.
func (a *API) need(scope state.Scope) gin.HandlerFunc {
	return a.needScope(func(*gin.Context) state.Scope { return scope })
}

// needDomainWrite is need with the scope the fixtures' policy gives domain writes.
func (a *API) needDomainWrite() gin.HandlerFunc {
	return a.needScope(func(c *gin.Context) state.Scope { return a.world(c).DomainWriteScope() })
}

func (a *API) needScope(scope func(*gin.Context) state.Scope) gin.HandlerFunc {
	return func(c *gin.Context) {
		if a.authorize(c, scope) {
			c.Next()
		}
	}
}

func (a *API) authorize(c *gin.Context, scope func(*gin.Context) state.Scope) bool {
	info := exchangeOf(c)
	if info != nil {
		info.route = c.FullPath() // the router's template, also for a refused request
	}
	switch {
	case info == nil || info.limitKey == "":
		a.renderError(c, apperr.New(apperr.InternalError, "request was not identified"))
		return false
	case !info.hasHeader:
		a.renderError(c, apperr.New(apperr.MissingToken, "send the header Authorization: Bearer <token>"))
		return false
	case !info.authed:
		if _, n := authorization(c.Request.Header); n > 1 {
			a.renderError(c, apperr.Errorf(apperr.InvalidToken, "the request has %d Authorization headers; send one, with one bearer token", n))
			return false
		}
		a.renderError(c, apperr.New(apperr.InvalidToken, "the bearer token is unknown, revoked or malformed"))
		return false
	}
	if info.class.Kind == KindCipher {
		return true
	}
	if need := scope(c); !info.scope.Allows(need) {
		a.renderError(c, apperr.New(apperr.InsufficientScope, "this operation needs a token with scope "+string(need)+" (or higher); this token has scope "+string(info.scope)))
		return false
	}
	return true
}
