// Package strictjson refuses JSON keys that the Go type a document decodes into has no
// field for: 400 invalid_request naming the key, where it is and the closest known one.
// The control API's bodies and the state documents (PUT /_emulator/state, a bundle's
// state.json, --state files) are read this way: a typo must fail loudly, never pass with
// the key ignored.
//
// A value refused is worded here too, once for every reader: by its field and place,
// in hostemu's words, never encoding/json's ("cannot unmarshal string into Go struct
// field Manifest.seed of type int64", "parsing time … as \"2006-01-02T15:04:05Z07:00\"",
// "illegal base64 data at input byte 0"): TypeMessage for a value of the wrong JSON type
// or a number its field cannot hold, RefusedValue for one its type's own decoder refuses
// (a time, a fault's delay, base64), Words for a caller that says it in a sentence of its
// own (a failure bundle's members).
package strictjson

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hostemu/hostemu/emulator/internal/apperr"
	"github.com/hostemu/hostemu/emulator/internal/yamlcheck"
)

// Decode decodes text (one JSON value) into dst as json.Unmarshal does, refusing a key
// dst's type has no field for, at any depth, with UnknownKeys' error (where names the
// place: "deployments", "match"); any other error is encoding/json's. An unknown key
// in a value that a later value of the same key replaces ({"timings":{"x":1},
// "timings":{}}) is not in the decoded value UnknownKeys walks: that is a key given
// twice, refused as GivenOnce words it, never encoding/json's bare words.
//
// A value its type's own decoder refuses (a time that is not RFC 3339) is named too, by
// its key and place (RefusedValue): encoding/json's error says neither; one that a later
// value of its key replaces is a key given twice.
func Decode(text []byte, dst any, where string) error {
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.DisallowUnknownFields()
	err := dec.Decode(dst)
	if err == nil {
		return nil
	}
	return Explain(text, dst, where, err)
}

// Explain is Decode's error path: err is encoding/json's error decoding text into dst
// (refusing unknown fields), named as Decode names it; for a caller that decodes with a
// decoder of its own and comes here only when it fails.
func Explain(text []byte, dst any, where string, err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		if v, ok := Value(text); ok {
			if kerr := UnknownKeys(v, reflect.TypeOf(dst), where); kerr != nil {
				return kerr
			}
			if gerr := GivenOnce(text, dst, where); gerr != nil {
				return gerr
			}
		}
	case errors.As(err, &typ):
		named := *typ
		named.Field = jsonPath(reflect.TypeOf(dst), typ.Field)
		if v, ok := Value(text); ok {
			// a map's value: encoding/json names the map, not the key
			if at, key, ok := mapKey(v, reflect.TypeOf(dst), splitPath(named.Field)); ok {
				return apperr.Errorf(apperr.InvalidRequest, "key %q%s %s", key, in(join(where, at)), mustBe(&named))
			}
		}
		if named.Field != typ.Field {
			return &named
		}
	case errors.As(err, &syn), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
	default:
		if v, ok := Value(text); ok {
			if verr := RefusedValue(v, reflect.TypeOf(dst), where); verr != nil {
				return verr
			}
			// a refused value that a later value of its key replaces is not in v: the
			// key is given twice ({"time":"soon","time":"2026-…"})
			if gerr := GivenOnce(text, dst, where); gerr != nil {
				return gerr
			}
		}
	}
	return err
}

var timeType = reflect.TypeFor[time.Time]()

// RefusedValue reports the first value of v (decoded JSON, as Value decodes it) that
// its place in type t decodes itself (json.Unmarshaler) and refuses, as 400
// invalid_request naming its key and place: `key "created_at" in deployments: "x" is
// not an RFC 3339 time like 2026-11-01T10:00:00Z`, or the decoder's own words. An
// error path's walk: Decode runs it when encoding/json's error names no field.
func RefusedValue(v any, t reflect.Type, where string) error {
	return refusedValue(v, t, where, "")
}

func refusedValue(v any, t reflect.Type, where, key string) error {
	for t.Kind() == reflect.Pointer {
		if v == nil {
			return nil // null: a nil pointer, decoded by nobody
		}
		t = t.Elem()
	}
	if t == rawMessage {
		return nil
	}
	if reflect.PointerTo(t).Implements(jsonUnmarshaler) {
		text, err := json.Marshal(v)
		if err != nil {
			return nil
		}
		uerr := reflect.New(t).Interface().(json.Unmarshaler).UnmarshalJSON(text)
		if uerr == nil {
			return nil
		}
		place := placeOf(where, key)
		if t == timeType || (t.Kind() == reflect.Struct && t.ConvertibleTo(timeType)) { // state.Timestamp too
			why := ""
			if pe, ok := errors.AsType[*time.ParseError](uerr); ok && pe.Message != "" {
				why = " (" + strings.TrimPrefix(pe.Message, ": ") + ")" // a month out of range
			}
			return apperr.Errorf(apperr.InvalidRequest, "%s: %s is not an RFC 3339 time like 2026-11-01T10:00:00Z%s", place, text, why)
		}
		if field, rest, ok := ownName(uerr.Error(), key); ok {
			// the decoder named its own field ("delay: invalid duration"): the place
			// goes before its name, as a type error's field does
			return apperr.Errorf(apperr.InvalidRequest, "field %q%s", join(where, field), rest)
		}
		return apperr.Errorf(apperr.InvalidRequest, "%s: %v", place, uerr)
	}
	if isBytes(t) {
		// []byte: encoding/json reads a base64 string, and its error names no field
		if s, ok := v.(string); ok {
			if _, err := base64.StdEncoding.DecodeString(s); err != nil {
				return apperr.Errorf(apperr.InvalidRequest, "%s: %.80q is not base64 (standard alphabet, padded)", placeOf(where, key), s)
			}
		}
		return nil
	}
	if key != "" {
		where = join(where, key) // inside the value: its key is part of the place
	}
	switch t.Kind() {
	case reflect.Struct:
		obj, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		fields := jsonFields(t)
		for _, k := range slices.Sorted(maps.Keys(obj)) {
			if _, ft, ok := fieldFor(fields, k); ok {
				if err := refusedValue(obj[k], ft, where, k); err != nil {
					return err
				}
			}
		}
		return nil
	case reflect.Map:
		obj, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		for _, k := range slices.Sorted(maps.Keys(obj)) {
			if err := refusedValue(obj[k], t.Elem(), where, k); err != nil {
				return err
			}
		}
		return nil
	case reflect.Slice, reflect.Array:
		arr, ok := v.([]any)
		if !ok {
			return nil
		}
		for _, e := range arr {
			if err := refusedValue(e, t.Elem(), where, ""); err != nil {
				return err
			}
		}
	}
	return nil
}

// placeOf names a refused value's place: its key in where, or the value itself when it
// has none (an element of an array).
func placeOf(where, key string) string {
	if key == "" {
		return "the value" + in(where)
	}
	return fmt.Sprintf("key %q%s", key, in(where))
}

// isBytes says whether t is []byte, which encoding/json reads from a base64 string.
func isBytes(t reflect.Type) bool {
	return t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8
}

// jsonPath is a type error's field path (encoding/json's UnmarshalTypeError.Field, as
// "faults.Spec.status") without the Go names of the embedded structs it passed through
// ("faults.status"): the keys of the JSON, as a user wrote them.
func jsonPath(t reflect.Type, field string) string {
	if t == nil || field == "" {
		return field
	}
	var out []string
	for _, name := range strings.Split(field, ".") {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			out = append(out, name)
			continue
		}
		if _, ft, ok := fieldFor(jsonFields(t), name); ok {
			out = append(out, name)
			t = ft
			continue
		}
		if f, ok := t.FieldByName(name); ok && f.Anonymous && f.Tag.Get("json") == "" {
			t = f.Type // an embedded struct: its fields are its parent's keys
			continue
		}
		out = append(out, name)
	}
	return strings.Join(out, ".")
}

func splitPath(field string) []string {
	if field == "" {
		return nil
	}
	return strings.Split(field, ".")
}

// mapKey finds, along a type error's field path (JSON names, from type t), the map
// whose value is of the wrong JSON type, and that value's key: ("match.query", "a") for
// {"match":{"query":{"a":5}}}, whose error names "match.query" alone; the keys of maps
// it passes are in the place ("deep.x", "z"). ok is false when
// the path leads to no map (or to none such): the error names its field already.
func mapKey(v any, t reflect.Type, path []string) (at, key string, ok bool) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == rawMessage || reflect.PointerTo(t).Implements(jsonUnmarshaler) {
		return "", "", false
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		if arr, isArr := v.([]any); isArr {
			for _, e := range arr {
				if at, key, ok := mapKey(e, t.Elem(), path); ok {
					return at, key, true
				}
			}
		}
	case reflect.Map:
		obj, isObj := v.(map[string]any)
		if !isObj {
			return "", "", false
		}
		for _, k := range slices.Sorted(maps.Keys(obj)) {
			if len(path) == 0 && !fits(obj[k], t.Elem()) {
				return "", k, true
			}
			// a value of the right kind may hold the wrong one deeper; the path goes on
			// past a map's keys, which encoding/json's does not name, and here they are
			if at, key, ok := mapKey(obj[k], t.Elem(), path); ok {
				if at == "" {
					return k, key, true
				}
				return k + "." + at, key, true
			}
		}
	case reflect.Struct:
		obj, isObj := v.(map[string]any)
		if !isObj || len(path) == 0 {
			return "", "", false
		}
		name, ft, known := fieldFor(jsonFields(t), path[0])
		if !known {
			return "", "", false
		}
		for k, val := range obj {
			if k == name || strings.EqualFold(k, name) {
				if at, key, ok := mapKey(val, ft, path[1:]); ok {
					if at == "" {
						return name, key, true
					}
					return name + "." + at, key, true
				}
			}
		}
	}
	return "", "", false
}

// fits says whether JSON value v (as Value decodes it) decodes into type t without a
// type error, as far as its JSON type and a number's range say.
func fits(v any, t reflect.Type) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if v == nil || t.Kind() == reflect.Interface || t == rawMessage || reflect.PointerTo(t).Implements(jsonUnmarshaler) {
		return true
	}
	switch x := v.(type) {
	case string:
		return t.Kind() == reflect.String || isBytes(t)
	case bool:
		return t.Kind() == reflect.Bool
	case json.Number:
		switch {
		case t.Kind() >= reflect.Int && t.Kind() <= reflect.Int64:
			_, err := strconv.ParseInt(string(x), 10, t.Bits())
			return err == nil
		case t.Kind() >= reflect.Uint && t.Kind() <= reflect.Uintptr:
			_, err := strconv.ParseUint(string(x), 10, t.Bits())
			return err == nil
		case t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64:
			_, err := strconv.ParseFloat(string(x), t.Bits())
			return err == nil
		}
		return false
	case map[string]any:
		return t.Kind() == reflect.Map || t.Kind() == reflect.Struct
	case []any:
		return t.Kind() == reflect.Slice || t.Kind() == reflect.Array
	}
	return true
}

// ownName splits a decoder's error that begins with its own field's name, key ("delay:
// invalid duration", "delay.min: invalid duration", "delay must be a duration"), into
// that name with what follows it in the name ("delay.min") and the rest (": invalid
// duration"); ok is false when it begins otherwise.
func ownName(msg, key string) (field, rest string, ok bool) {
	after, found := strings.CutPrefix(msg, key)
	if key == "" || !found {
		return "", "", false
	}
	i := strings.IndexAny(after, ": ")
	if i < 0 || (i > 0 && after[0] != '.') {
		return "", "", false // "delays: …", or a name that only begins with key
	}
	return key + after[:i], after[i:], true
}

// Value decodes text, one JSON value, for UnknownKeys' walk, as json.Unmarshal into an
// any does but for its numbers (json.Number): a number beyond float64 (1e400, which a
// fault's body matcher may name) fails json.Unmarshal, and a walk skipped for it let an
// unknown key, or a field in two cases, pass unnamed. ok is false for text that is not
// one well-formed value (the decoder names it).
func Value(text []byte) (v any, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.UseNumber()
	if dec.Decode(&v) != nil {
		return nil, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, false
	}
	return v, true
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
	if _, found := scanDuplicates(text, 0, 0); found&(keyTwice|unsure) == 0 {
		return nil
	}
	return duplicateKeys(text, where)
}

// GivenOnce refuses what encoding/json reads without a word from text (one JSON value,
// already known to be well formed, that decodes into dst's type): one field of the
// type given in two cases ({"scope":"admin","SCOPE":"read"}: encoding/json matches keys
// in any case, and keeps the last), worded as UnknownKeys words it, and a key given
// twice in one object, as DuplicateKeys words it. It answers as the control API does to
// its bodies, for what is read otherwise (a state document's elements).
//
// DuplicateKeys' scan answers first: only an object with a key twice or two keys that
// may name one field (equal but for the case of ASCII letters, or not ASCII) makes it
// decode text to walk it against the type; keys of a map ({"A":"1","a":"2"}) are two
// keys.
func GivenOnce(text []byte, dst any, where string) error {
	_, found := scanDuplicates(text, 0, 0)
	if found == 0 {
		return nil
	}
	// the type's walk first, as decodeStrict's: a field in two cases is named before a
	// key twice (the scan stops at a key twice, so it may not have met the two cases)
	if v, ok := Value(text); ok {
		if err := UnknownKeys(v, reflect.TypeOf(dst), where); err != nil {
			return err
		}
	}
	if found&(keyTwice|unsure) == 0 {
		return nil
	}
	return duplicateKeys(text, where)
}

// KeysOnce reports whether DuplicateKeys' scan alone finds text's keys each given once
// in its object, and no two of an object alike but for case (and nothing it leaves to
// the walks): what the walks of GivenOnce would then pass without decoding text. A
// caller that refuses unknown keys with encoding/json's DisallowUnknownFields needs no
// other walk for such a text.
func KeysOnce(text []byte) bool {
	_, found := scanDuplicates(text, 0, 0)
	return found == 0
}

func duplicateKeys(text []byte, where string) error {
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.UseNumber()
	return walkDuplicates(dec, where)
}

// maxScanKeys is how many keys of one object scanDuplicates compares, each against
// those before it (no map); an object with more is left to the decoder's walk.
const maxScanKeys = 16

// maxScanDepth is how many arrays and objects deep scanDuplicates reads a value; a
// value deeper is left to the decoder's walk. KeysOnce scans a body not yet known to
// be well formed: a megabyte of '[' would otherwise recurse a million frames deep (half
// a gigabyte of stack; a few megabytes overflow it, and the process dies), where
// encoding/json refuses nesting beyond 10000.
const maxScanDepth = 64

// What scanDuplicates finds.
const (
	// keyTwice: an object gives one key twice, as written
	keyTwice = 1 << iota
	// caseTwins: an object gives two keys encoding/json may match to one struct field:
	// equal but for the case of ASCII letters, or a key that is not ASCII beside
	// another (Unicode's case folding, which encoding/json applies, is not compared
	// here: "ſcope" is "scope")
	caseTwins
	// unsure: what the scan does not decide: an escaped key ("a" and "\u0061" are one
	// key), a key that is not valid UTF-8 (decoding makes "\xff" and "\xfe" one key,
	// U+FFFD), an object of more than maxScanKeys keys, a value more than maxScanDepth
	// arrays and objects deep, or bytes that are not well formed
	unsure
)

// scanDuplicates walks the JSON value at b[i:] (well formed; depth arrays and objects
// deep), and says where it ends and what it found (keyTwice, caseTwins, unsure); it stops
// at keyTwice or unsure, which decide the answer, and goes on past caseTwins.
func scanDuplicates(b []byte, i, depth int) (end int, found int) {
	i = skipSpace(b, i)
	if i >= len(b) || depth > maxScanDepth {
		return i, unsure
	}
	switch b[i] {
	case '"':
		end, _ := skipString(b, i)
		if end > len(b) {
			return end, unsure
		}
		return end, 0
	case '[':
		i = skipSpace(b, i+1)
		if i < len(b) && b[i] == ']' {
			return i + 1, 0
		}
		for i < len(b) {
			var f int
			if i, f = scanDuplicates(b, i, depth+1); f&(keyTwice|unsure) != 0 {
				return i, found | f
			}
			found |= f
			if i = skipSpace(b, i); i < len(b) && b[i] == ']' {
				return i + 1, found
			}
			i++ // the comma
		}
		return i, found | unsure
	case '{':
		var keys [maxScanKeys][2]int // each key's bounds in b
		n := 0
		wide := false // a key is not ASCII
		i = skipSpace(b, i+1)
		if i < len(b) && b[i] == '}' {
			return i + 1, 0
		}
		for i < len(b) && b[i] == '"' {
			end, escaped := skipString(b, i)
			if escaped || n == maxScanKeys || end > len(b) {
				return end, found | unsure
			}
			key := b[i+1 : end-1]
			if !ascii(key) {
				if !utf8.Valid(key) {
					return end, found | unsure
				}
				wide = true
			}
			for _, k := range keys[:n] {
				if other := b[k[0]:k[1]]; len(other) == len(key) {
					if bytes.Equal(other, key) {
						return end, found | keyTwice
					}
					if found&caseTwins == 0 && asciiFold(other, key) {
						found |= caseTwins
					}
				}
			}
			keys[n] = [2]int{i + 1, end - 1}
			n++
			if i = skipSpace(b, end); i >= len(b) || b[i] != ':' {
				return i, found | unsure
			}
			var f int
			if i, f = scanDuplicates(b, i+1, depth+1); f&(keyTwice|unsure) != 0 {
				return i, found | f
			}
			found |= f
			if i = skipSpace(b, i); i < len(b) && b[i] == '}' {
				if wide && n > 1 {
					found |= caseTwins
				}
				return i + 1, found
			}
			i = skipSpace(b, i+1) // past the comma
		}
		return i, found | unsure
	}
	for ; i < len(b); i++ { // a number, true, false or null
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i, found
		}
	}
	return i, found
}

// ascii says whether b is all ASCII.
func ascii(b []byte) bool {
	for _, c := range b {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// asciiFold says whether a and b (ASCII, of one length) are equal but for the case of
// their letters.
func asciiFold(a, b []byte) bool {
	for i := range a {
		x, y := a[i], b[i]
		if x == y {
			continue
		}
		if x|0x20 != y|0x20 || x|0x20 < 'a' || x|0x20 > 'z' {
			return false
		}
	}
	return true
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

func walkDuplicates(dec *json.Decoder, where string) error {
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
			if err := walkDuplicates(dec, join(where, key)); err != nil {
				return err
			}
		}
		dec.Token() // the closing brace
	case json.Delim('['):
		for dec.More() {
			if err := walkDuplicates(dec, where); err != nil {
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

// Words is the message of a decoding error of Decode or Explain, for a caller that
// says it in its own sentence (a failure bundle's "manifest.json: …"): a coded error's
// message, a type error as TypeMessage words it, malformed JSON as "not valid JSON: …
// (at byte N)", else the error's text.
func Words(err error) string {
	if e, ok := apperr.As(err); ok {
		return e.Message
	}
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &typ):
		if msg, ok := TypeMessage(typ); ok {
			return msg
		}
		return "the value " + mustBe(typ)
	case errors.As(err, &syn):
		return fmt.Sprintf("not valid JSON: %v (at byte %d)", syn, syn.Offset)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "not valid JSON: unexpected end of input"
	}
	return err.Error()
}

// Worded is err in Words' words, for a reader whose caller puts it in a sentence of its
// own (a failure bundle's state.json, a --state file).
func Worded(err error) error { return errors.New(Words(err)) }

// TypeMessage words encoding/json's refusal of a value of the wrong JSON type by the
// field it names: `field "count" must be a number, not string` (an integer's field
// too: "a number" is what JSON calls it); and of a number its
// field cannot hold by what it can: `field "count" must be an integer, not 1.5`,
// `field "seed" must be an integer from 0 to 18446744073709551615, not -1`, `field
// "rate" must be a number from -1.8e308 to 1.8e308, not 1e400` (encoding/json says
// "number 1e400" to a field that is a number). ok is false when it names no field: the
// document itself is of the wrong type. The control API's bodies, the state documents
// and a failure bundle's members say it alike.
func TypeMessage(typ *json.UnmarshalTypeError) (msg string, ok bool) {
	if typ.Field == "" {
		return "", false
	}
	return fmt.Sprintf("field %q %s", typ.Field, mustBe(typ)), true
}

// mustBe is what TypeMessage says of typ's value: "must be an integer, not 1.5".
func mustBe(typ *json.UnmarshalTypeError) string {
	t := typ.Type
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	got, isNumber := strings.CutPrefix(typ.Value, "number ")
	if !isNumber {
		return fmt.Sprintf("must be %s, not %s", jsonKind(t), typ.Value)
	}
	kind := jsonKind(t)
	switch {
	case t == nil:
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Int64:
		kind = "an integer"
		if integral(got) {
			bits := t.Bits()
			kind = fmt.Sprintf("an integer from %d to %d", int64(-1)<<(bits-1), int64(1)<<(bits-1)-1)
		}
	case t.Kind() >= reflect.Uint && t.Kind() <= reflect.Uintptr:
		kind = "an integer"
		if integral(got) {
			kind = fmt.Sprintf("an integer from 0 to %d", uint64(math.MaxUint64)>>(64-t.Bits()))
		}
	case t.Kind() == reflect.Float32:
		kind = "a number from -3.4e38 to 3.4e38"
	case t.Kind() == reflect.Float64:
		kind = "a number from -1.8e308 to 1.8e308"
	}
	return fmt.Sprintf("must be %s, not %s", kind, got)
}

// integral says whether a JSON number is written as an integer (no fraction, no
// exponent): one its field would hold were it in range.
func integral(number string) bool {
	return !strings.ContainsAny(number, ".eE")
}

// jsonKind names the JSON a Go type decodes from, for TypeMessage.
func jsonKind(t reflect.Type) string {
	if t == nil {
		return "of another type"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Map, reflect.Struct:
		if t == timeType {
			return "a string" // an RFC 3339 time
		}
		return "an object"
	case reflect.Slice, reflect.Array:
		if isBytes(t) {
			return "a string" // []byte: base64
		}
		return "an array"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64:
		return "a number"
	}
	return "of another type"
}
