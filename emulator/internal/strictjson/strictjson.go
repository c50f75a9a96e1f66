// Package strictjson refuses JSON keys that the Go type a document decodes into has no
// field for: 400 invalid_request naming the key, where it is and the closest known one.
// The control API's bodies and the state documents (PUT /_emulator/state, a bundle's
// state.json, --state files) are read this way: a typo must fail loudly, never pass with
// the key ignored.
package strictjson

import (
	"bytes"
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/hostemu/hostemu/emulator/internal/apperr"
	"github.com/hostemu/hostemu/emulator/internal/yamlcheck"
)

// Decode decodes text (one JSON value) into dst as json.Unmarshal does, refusing a key
// dst's type has no field for, at any depth, with UnknownKeys' error (where names the
// place: "deployments", "match"); any other error is encoding/json's.
func Decode(text []byte, dst any, where string) error {
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.DisallowUnknownFields()
	err := dec.Decode(dst)
	if err != nil && strings.HasPrefix(err.Error(), "json: unknown field ") {
		var v any
		if json.Unmarshal(text, &v) == nil {
			if kerr := UnknownKeys(v, reflect.TypeOf(dst), where); kerr != nil {
				return kerr
			}
		}
	}
	return err
}

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	rawMessage      = reflect.TypeFor[json.RawMessage]()
)

// UnknownKeys reports the first key of v (decoded JSON) that type t has no field for,
// where names the place ("match", "requests"); it stops at types that decode
// themselves.
func UnknownKeys(v any, t reflect.Type, where string) error {
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
		given := make(map[string]string, len(obj)) // a field's name → the key that set it
		for _, key := range slices.Sorted(maps.Keys(obj)) {
			name, ft, ok := fieldFor(fields, key)
			if !ok {
				return apperr.Errorf(apperr.InvalidRequest, "unknown key %q%s%s", key, in(where), yamlcheck.Suggest(key, sortedNames(names)))
			}
			if other, twice := given[name]; twice {
				// keys match fields in any case, as encoding/json's do: two spellings of
				// one field would keep whichever came last
				return apperr.Errorf(apperr.InvalidRequest, "keys %q and %q%s both set %q: give it once", other, key, in(where), name)
			}
			given[name] = key
			if err := UnknownKeys(obj[key], ft, join(where, key)); err != nil {
				return err
			}
		}
	case reflect.Map:
		if obj, ok := v.(map[string]any); ok {
			for key, val := range obj {
				if err := UnknownKeys(val, t.Elem(), join(where, key)); err != nil {
					return err
				}
			}
		}
	case reflect.Slice, reflect.Array:
		if arr, ok := v.([]any); ok {
			for _, val := range arr {
				if err := UnknownKeys(val, t.Elem(), where); err != nil {
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

// fieldFor finds the field of a key as encoding/json does: exactly, else ignoring case;
// name is the field's JSON name.
func fieldFor(fields map[string]reflect.Type, key string) (name string, t reflect.Type, ok bool) {
	if t, ok := fields[key]; ok {
		return key, t, true
	}
	for name, t := range fields {
		if strings.EqualFold(name, key) {
			return name, t, true
		}
	}
	return "", nil, false
}

func in(where string) string {
	if where == "" {
		return ""
	}
	return " in " + where
}

// DuplicateKeys reports the first object in text (one JSON value, already known to be
// well formed) that gives one key twice, where names the place as UnknownKeys' error
// does. encoding/json keeps the last of them, so {"scope":"admin","scope":"read"} would
// quietly be a read token: like a YAML mapping's, a key is given once.
func DuplicateKeys(text []byte, where string) error {
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.UseNumber()
	return duplicateKeys(dec, where)
}

func duplicateKeys(dec *json.Decoder, where string) error {
	tok, err := dec.Token()
	if err != nil {
		return nil // malformed: the decoder names it
	}
	switch tok {
	case json.Delim('{'):
		seen := map[string]bool{}
		for dec.More() {
			kt, err := dec.Token()
			key, isKey := kt.(string)
			if err != nil || !isKey {
				return nil
			}
			if seen[key] {
				return apperr.Errorf(apperr.InvalidRequest, "key %q%s is given twice: give it once", key, in(where))
			}
			seen[key] = true
			if err := duplicateKeys(dec, join(where, key)); err != nil {
				return err
			}
		}
		dec.Token() // the closing brace
	case json.Delim('['):
		for dec.More() {
			if err := duplicateKeys(dec, where); err != nil {
				return err
			}
		}
		dec.Token()
	}
	return nil
}

func sortedNames(names []string) []string {
	slices.Sort(names)
	return names
}

func join(where, key string) string {
	if where == "" {
		return key
	}
	return where + "." + key
}
