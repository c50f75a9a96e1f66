package httpapi

import (
	"bytes"
	"encoding/json"
	"io"
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

// decodeStrict is decodeJSON refusing unknown keys, at any depth, a key given twice and
// one field given in two cases.
func decodeStrict(c *gin.Context, dst any, limit int64) error {
	b, err := readJSONBody(c, limit)
	if err != nil || b == nil {
		return err
	}
	return unmarshalStrictKeys(b, dst)
}

// unmarshalStrictKeys is decodeStrict's decoding of b into dst. The common body, with
// every key known, given once and in one case, is parsed once: the duplicate scan
// (which allocates nothing), then encoding/json refusing unknown fields (what it
// accepts, UnknownKeys accepts: FuzzUnknownKeys). Any other body is read again by
// strictKeysSlow, from dst as it was, so that a refusal is worded as it always was
// (FuzzStrictKeysFastIsSlow holds the two to the same answers).
func unmarshalStrictKeys(b []byte, dst any) error {
	if strictjson.KeysOnce(b) {
		v := reflect.ValueOf(dst).Elem()
		was := reflect.New(v.Type()).Elem()
		was.Set(v) // a shallow copy: the callers' dst holds no map to be merged into
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if dec.Decode(dst) == nil {
			if _, err := dec.Token(); err == io.EOF {
				return nil
			}
		}
		v.Set(was)
	}
	return strictKeysSlow(b, dst)
}

// strictKeysSlow decodes b into dst, naming an unknown key or one field in two cases
// (UnknownKeys), then a key given twice (DuplicateKeys), before decoding; malformed JSON
// (and too deep a nesting) is unmarshalStrict's to name.
func strictKeysSlow(b []byte, dst any) error {
	if v, ok := strictjson.Value(b); ok {
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
