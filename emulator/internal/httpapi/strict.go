package httpapi

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/hostemu/hostemu/emulator/internal/apperr"
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
	if json.Unmarshal(b, &v) == nil { // malformed JSON is unmarshalStrict's to name
		if err := unknownKeys(v, reflect.TypeOf(dst), ""); err != nil {
			return err
		}
	}
	return unmarshalStrict(b, dst)
}

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	rawMessage      = reflect.TypeFor[json.RawMessage]()
)

// unknownKeys reports the first key of v (decoded JSON) that type t has no field for,
// where names the place ("match", "requests"); it stops at types that decode
// themselves.
func unknownKeys(v any, t reflect.Type, where string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == rawMessage || reflect.PointerTo(t).Implements(jsonUnmarshaler) {
		return nil
	}
	switch t.Kind() {
	case reflect.Struct:
		obj, ok := v.(map[string]any)
		if !ok {
			return nil // a type error: unmarshalStrict names it
		}
		fields := jsonFields(t)
		names := make([]string, 0, len(fields))
		for name := range fields {
			names = append(names, name)
		}
		for key, val := range obj {
			ft, ok := fieldFor(fields, key)
			if !ok {
				in := ""
				if where != "" {
					in = " in " + where
				}
				return apperr.Errorf(apperr.InvalidRequest, "unknown key %q%s%s", key, in, yamlcheck.Suggest(key, sortedNames(names)))
			}
			if err := unknownKeys(val, ft, join(where, key)); err != nil {
				return err
			}
		}
	case reflect.Map:
		if obj, ok := v.(map[string]any); ok {
			for key, val := range obj {
				if err := unknownKeys(val, t.Elem(), join(where, key)); err != nil {
					return err
				}
			}
		}
	case reflect.Slice, reflect.Array:
		if arr, ok := v.([]any); ok {
			for _, val := range arr {
				if err := unknownKeys(val, t.Elem(), where); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// jsonFields are the JSON names of a struct's fields (embedded structs' included).
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for f := range t.Fields() {
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			for n, ft := range jsonFields(f.Type) {
				out[n] = ft
			}
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}

// fieldFor finds the field of a key as encoding/json does: exactly, else ignoring case.
func fieldFor(fields map[string]reflect.Type, key string) (reflect.Type, bool) {
	if t, ok := fields[key]; ok {
		return t, true
	}
	for name, t := range fields {
		if strings.EqualFold(name, key) {
			return t, true
		}
	}
	return nil, false
}

func sortedNames(names []string) []string {
	for i := 1; i < len(names); i++ {
		for j := i; j > 0 && names[j] < names[j-1]; j-- {
			names[j], names[j-1] = names[j-1], names[j]
		}
	}
	return names
}

func join(where, key string) string {
	if where == "" {
		return key
	}
	return where + "." + key
}

// strictQuery refuses a query parameter the route does not take: 400 invalid_request
// naming it and the closest one it takes.
func strictQuery(c *gin.Context, allowed ...string) error {
	for key := range c.Request.URL.Query() {
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
	"/requests": {"method", "path", "status", "service", "scope", "code", "since", "limit", "body"},
	"/events":   {"types"},
	"/coverage": {"namespaces"},
}

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
