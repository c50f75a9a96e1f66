package httpapi

import (
	"encoding/json"
	"net/url"
	"reflect"
	"slices"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/hostemu/hostemu/emulator/internal/apperr"
	"github.com/hostemu/hostemu/emulator/internal/strictjson"
	"github.com/hostemu/hostemu/emulator/internal/yamlcheck"
)

// The control API's input is strict, as the scenario files are: an unknown key in a
// body, or an unknown query filter, is 400 invalid_request naming it and the closest
// known one. A typo in a test's fault, await or filter must fail loudly, never pass with
// the key ignored ({"match":{"paht":…}} would otherwise match every request). The
// public APIs stay lenient: the spec's clients may send fields the spec does not list.

// decodeStrict is decodeJSON refusing unknown keys, at any depth.
func decodeStrict(c *gin.Context, dst any, limit int64) error {
	b, err := readJSONBody(c, limit)
	if err != nil || b == nil {
		return err
	}
	var v any
	if json.Unmarshal(b, &v) == nil { // malformed JSON is unmarshalStrict's to name (and too deep a nesting)
		if err := strictjson.UnknownKeys(v, reflect.TypeOf(dst), ""); err != nil {
			return err
		}
		if err := strictjson.DuplicateKeys(b, ""); err != nil {
			return err
		}
	}
	return unmarshalStrict(b, dst)
}

// strictQuery refuses a query parameter the route does not take: 400 invalid_request
// naming it and the closest one it takes; and one given twice that takes one value
// (?status=404&status=500 would filter by the first alone).
func strictQuery(c *gin.Context, allowed ...string) error {
	q, err := url.ParseQuery(c.Request.URL.RawQuery)
	if err != nil {
		// URL.Query drops a pair it cannot read: ?path=%ZZ would filter nothing
		return apperr.Errorf(apperr.InvalidRequest, "the query string: %v", err)
	}
	for key, vals := range q {
		if len(vals) > 1 && slices.Contains(allowed, key) && !repeatableQuery[key] {
			return apperr.Errorf(apperr.InvalidRequest, "query parameter %q is given %d times: it takes one value", key, len(vals))
		}
		if !slices.Contains(allowed, key) {
			if len(allowed) == 0 {
				return apperr.Errorf(apperr.InvalidRequest, "unknown query parameter %q: %s takes none", key, c.Request.URL.Path)
			}
			return apperr.Errorf(apperr.InvalidRequest, "unknown query parameter %q%s", key, yamlcheck.Suggest(key, allowed))
		}
	}
	return nil
}

// controlQuery are the query parameters each control route takes (by its template
// under /_emulator, or under a namespace's prefix); every other is refused.
var controlQuery = map[string][]string{
	"/requests": {"method", "path", "status", "service", "scope", "code", "since", "limit", "body", "header", "response_header"},
	"/events":   {"types"},
	"/coverage": {"namespaces", "ignore"},
}

// repeatableQuery are the control query parameters that may be given more than once
// (each a list: ?ignore=a&ignore=b).
var repeatableQuery = map[string]bool{"ignore": true, "types": true}

// strictControlQuery refuses the query parameters a control route does not take.
func (a *API) strictControlQuery() gin.HandlerFunc {
	return func(c *gin.Context) {
		route := strings.TrimPrefix(strings.TrimPrefix(c.FullPath(), "/_emulator/namespaces/:ns"), "/_emulator")
		if err := strictQuery(c, controlQuery[route]...); err != nil {
			a.renderError(c, err)
			return
		}
		c.Next()
	}
}
