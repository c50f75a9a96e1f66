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
	"unicode/utf8"

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
//
// A scan that allocates nothing answers first, so the common document, with no key
// twice, costs one pass over its bytes (the state's tokens, projects and domains are
// read this way, one element at a time); the decoder's walk, which names the place,
// runs only when the scan finds a key twice or meets what it does not compare itself.
func DuplicateKeys(text []byte, where string) error {
	if _, dup, unsure := scanDuplicates(text, 0); !dup && !unsure {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.UseNumber()
	return duplicateKeys(dec, where)
}

// maxScanKeys is how many keys of one object scanDuplicates compares, each against
// those before it (no map); an object with more is left to the decoder's walk.
const maxScanKeys = 16

// scanDuplicates walks the JSON value at b[i:] (well formed) and says where it ends,
// whether an object gives one key twice (as written), and unsure when it met what it
// does not decide: an escaped key ("a" and "\u0061" are one key), a key that is not
// valid UTF-8 (decoding makes "\xff" and "\xfe" one key, U+FFFD), an object of more than
// maxScanKeys keys, or bytes that are not well formed.
func scanDuplicates(b []byte, i int) (end int, dup, unsure bool) {
	i = skipSpace(b, i)
	if i >= len(b) {
		return i, false, true
	}
	switch b[i] {
	case '"':
		end, _ := skipString(b, i)
		return end, false, end > len(b)
	case '[':
		i = skipSpace(b, i+1)
		if i < len(b) && b[i] == ']' {
			return i + 1, false, false
		}
		for i < len(b) {
			if i, dup, unsure = scanDuplicates(b, i); dup || unsure {
				return i, dup, unsure
			}
			if i = skipSpace(b, i); i < len(b) && b[i] == ']' {
				return i + 1, false, false
			}
			i++ // the comma
		}
		return i, false, true
	case '{':
		var keys [maxScanKeys][2]int // each key's bounds in b
		n := 0
		i = skipSpace(b, i+1)
		if i < len(b) && b[i] == '}' {
			return i + 1, false, false
		}
		for i < len(b) && b[i] == '"' {
			end, escaped := skipString(b, i)
			if escaped || n == maxScanKeys || end > len(b) || !utf8.Valid(b[i+1:end-1]) {
				return end, false, true
			}
			key := b[i+1 : end-1]
			for _, k := range keys[:n] {
				if bytes.Equal(b[k[0]:k[1]], key) {
					return end, true, false
				}
			}
			keys[n] = [2]int{i + 1, end - 1}
			n++
			if i = skipSpace(b, end); i >= len(b) || b[i] != ':' {
				return i, false, true
			}
			if i, dup, unsure = scanDuplicates(b, i+1); dup || unsure {
				return i, dup, unsure
			}
			if i = skipSpace(b, i); i < len(b) && b[i] == '}' {
				return i + 1, false, false
			}
			i = skipSpace(b, i+1) // past the comma
		}
		return i, false, true
	}
	for ; i < len(b); i++ { // a number, true, false or null
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i, false, false
		}
	}
	return i, false, false
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString is the index past the string that opens at b[i], and whether it holds an
// escape; past len(b) when it does not close.
func skipString(b []byte, i int) (end int, escaped bool) {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			escaped = true
			i++
		case '"':
			return i + 1, escaped
		}
	}
	return len(b) + 1, escaped
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
