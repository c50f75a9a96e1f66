package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/gin-gonic/gin"

	"github.com/hostemu/hostemu/emulator/internal/apperr"
	"github.com/hostemu/hostemu/emulator/internal/world"
)

// The decryption service's bodies are one string field, often large: {"payload": "…"}
// or {"envelope": "…"}. fastStringBytes reads exactly that shape without encoding/json's
// scanner; anything else (escapes, other fields, odd types) is left to the full decoder,
// so the answers are the same either way.

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// fastStringBytes returns the value of body, where it lies in body, when body is
// {"name":"value"} (white space allowed) and value has no escapes or control characters
// and is valid UTF-8.
func fastStringBytes(body []byte, name string) ([]byte, bool) {
	i := skipSpace(body, 0)
	if i >= len(body) || body[i] != '{' {
		return nil, false
	}
	key, i, ok := plainString(body, skipSpace(body, i+1))
	if !ok || string(key) != name {
		return nil, false
	}
	i = skipSpace(body, i)
	if i >= len(body) || body[i] != ':' {
		return nil, false
	}
	value, i, ok := plainString(body, skipSpace(body, i+1))
	if !ok {
		return nil, false
	}
	i = skipSpace(body, i)
	if i >= len(body) || body[i] != '}' || skipSpace(body, i+1) != len(body) {
		return nil, false
	}
	return value, true
}

// plainString reads the JSON string at body[i] when it has no escapes or control
// characters and is valid UTF-8 (the fast paths' strings): its value where it lies in
// body, and the index after its closing quote.
func plainString(body []byte, i int) (value []byte, next int, ok bool) {
	if i >= len(body) || body[i] != '"' {
		return nil, i, false
	}
	end := bytes.IndexByte(body[i+1:], '"')
	if end < 0 {
		return nil, i, false
	}
	value = body[i+1 : i+1+end]
	for _, c := range value {
		if c < 0x20 || c == '\\' {
			return nil, i, false
		}
	}
	if !utf8.Valid(value) {
		return nil, i, false
	}
	return value, i + 2 + end, true
}

// stringFieldBytes is decodeStringField returning the value as bytes, where it lies in
// the body when the fast path reads it (no copy); present is false when the field is
// missing (or the body empty).
func stringFieldBytes(c *gin.Context, limit int64, name string, exact bool, dst any, field func() *string) (value []byte, present bool, err error) {
	b, err := readJSONBody(c, limit)
	if err != nil || b == nil {
		return nil, false, err
	}
	if v, ok := fastStringBytes(b, name); ok {
		return v, true, nil
	}
	s, err := decodeStringField(b, name, exact, dst, field)
	if err != nil || s == nil {
		return nil, false, err
	}
	return []byte(*s), true, nil
}

// decodeStringField reads body, of one string field the fast path did not read, by
// decodeJSON's full rules into dst, whose field *string is then returned. With exact,
// a value that encoding/json could only approximate (invalid UTF-8, a lone surrogate)
// is a 400 rather than a string with U+FFFD in it.
func decodeStringField(b []byte, name string, exact bool, dst any, field func() *string) (*string, error) {
	if err := unmarshalStrict(b, dst); err != nil {
		return nil, err
	}
	if exact && field() != nil {
		if err := exactStringField(b, name); err != nil {
			return nil, err
		}
	}
	return field(), nil
}

// exactStringField checks that the string field name of body, which encoding/json has
// already decoded, came back exactly as sent: encoding/json turns invalid UTF-8 and
// lone surrogate escapes ("\ud800") into U+FFFD without a word, and /v1/encrypt must
// return what it was given. A body with neither (valid UTF-8, no \uD8…\uDF escape) is
// exact without a second look.
func exactStringField(body []byte, name string) error {
	if utf8.Valid(body) && !hasSurrogateEscape(body) {
		return nil
	}
	lit, err := lastField(body, name)
	if err != nil {
		return nil // the caller's decoder has answered for the syntax
	}
	if err := checkStringLiteral(lit); err != nil {
		return apperr.Errorf(apperr.InvalidRequest, "field %q %s; JSON cannot carry it back exactly (send binary data as base64)", name, err)
	}
	return nil
}

// lastField is the raw value of the last member of the object body named name, in any
// case: the one encoding/json decodes into a field of that name.
func lastField(body []byte, name string) (json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	if _, err := dec.Token(); err != nil { // '{', checked by the caller's decoder
		return nil, err
	}
	var lit json.RawMessage
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		if k, _ := k.(string); strings.EqualFold(k, name) {
			lit = v
		}
	}
	return lit, nil
}

// hasSurrogateEscape reports whether b may hold a \uD800–\uDFFF escape.
func hasSurrogateEscape(b []byte) bool {
	for i := 0; ; i++ {
		j := bytes.Index(b[i:], []byte(`\u`))
		if j < 0 {
			return false
		}
		i += j
		if i+2 < len(b) && (b[i+2] == 'd' || b[i+2] == 'D') {
			return true
		}
	}
}

// checkStringLiteral reports the first part of a JSON string literal (quotes
// included) that does not stand for Unicode text: a byte that is not UTF-8, or a
// surrogate escape that is not one half of a pair. Anything but a string is accepted.
func checkStringLiteral(lit []byte) error {
	if len(lit) < 2 || lit[0] != '"' {
		return nil
	}
	s := lit[1 : len(lit)-1]
	chars := 0 // characters before the problem, for the message
	for i := 0; i < len(s); chars++ {
		c := s[i]
		if c != '\\' {
			r, size := utf8.DecodeRune(s[i:])
			if r == utf8.RuneError && size == 1 {
				return fmt.Errorf("has a byte that is not UTF-8 (0x%02x) after %d characters", c, chars)
			}
			i += size
			continue
		}
		if i+1 < len(s) && s[i+1] != 'u' {
			i += 2
			continue
		}
		r1, ok := hex4(s, i+2)
		if !ok {
			return nil // not a valid escape: a syntax error, answered elsewhere
		}
		switch {
		case r1 >= 0xDC00 && r1 <= 0xDFFF:
			return fmt.Errorf("has a lone surrogate escape \\u%04x after %d characters", r1, chars)
		case r1 >= 0xD800 && r1 <= 0xDBFF:
			r2, ok := rune(0), false
			if i+7 < len(s) && s[i+6] == '\\' && s[i+7] == 'u' {
				r2, ok = hex4(s, i+8)
			}
			if !ok || r2 < 0xDC00 || r2 > 0xDFFF {
				return fmt.Errorf("has a lone surrogate escape \\u%04x after %d characters", r1, chars)
			}
			i += 12
		default:
			i += 6
		}
	}
	return nil
}

// hex4 reads four hex digits at s[i:].
func hex4(s []byte, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	n, err := strconv.ParseUint(string(s[i:i+4]), 16, 16)
	return rune(n), err == nil
}

// fastNewDeployment reads a create's body, {"project_id":…, "files":{…}, "target":…,
// "env":{…}}, without encoding/json's scanner or reflection when it has exactly that
// shape: each of the four keys at most once and spelled so, string values and objects of
// string values (white space allowed), every string without escapes or control
// characters and valid UTF-8. Anything else — another key, another spelling, null, a
// number, an escape, data after the object — reports false and is left to the full
// decoder, so the answers are the same either way.
//
// body is the caller's own buffer, which nothing changes once read (a create's, from
// readBody; the journal may keep it too, exchange.whole): every string is cut from body
// itself, unless what is kept is less than half of what the buffer holds, its capacity
// (white space, say, the values a repeated key replaced, or a buffer larger than the
// body): the world keeps these strings, and must not keep a buffer many times their
// size.
func fastNewDeployment(body []byte, dst *world.NewDeployment) bool {
	s := unsafe.String(unsafe.SliceData(body), len(body)) // body, which the strings are cut from
	kept := 0                                             // bytes of the strings cut from s
	// a key of files or env came twice: kept counts the values it replaced too
	repeated := false
	// str reads a plain string at body[i], cut from s where it lies in body
	str := func(i int) (string, int, bool) {
		v, next, ok := plainString(body, i)
		if !ok {
			return "", i, false
		}
		return s[next-1-len(v) : next-1], next, true
	}
	keep := func(v string) string { kept += len(v); return v }
	obj := func(i int) (map[string]string, int, bool) {
		if i >= len(body) || body[i] != '{' {
			return nil, i, false
		}
		m := map[string]string{}
		i = skipSpace(body, i+1)
		if i < len(body) && body[i] == '}' {
			return m, i + 1, true
		}
		for {
			k, j, ok := str(i)
			if !ok {
				return nil, i, false
			}
			if j = skipSpace(body, j); j >= len(body) || body[j] != ':' {
				return nil, i, false
			}
			v, j, ok := str(skipSpace(body, j+1))
			if !ok {
				return nil, i, false
			}
			n := len(m)
			m[keep(k)] = keep(v) // a repeated key: the last wins, as with encoding/json
			repeated = repeated || len(m) == n
			if i = skipSpace(body, j); i < len(body) && body[i] == ',' {
				i = skipSpace(body, i+1)
				continue
			}
			if i < len(body) && body[i] == '}' {
				return m, i + 1, true
			}
			return nil, i, false
		}
	}
	i := skipSpace(body, 0)
	if i >= len(body) || body[i] != '{' {
		return false
	}
	var out world.NewDeployment
	var seen [4]bool
	// project_id and target, which out points to: one allocation for both
	var strs *[2]string
	i = skipSpace(body, i+1)
	if i < len(body) && body[i] == '}' {
		i++
	} else {
		for {
			k, j, ok := str(i)
			if !ok {
				return false
			}
			if j = skipSpace(body, j); j >= len(body) || body[j] != ':' {
				return false
			}
			j = skipSpace(body, j+1)
			field := -1
			switch k {
			case "project_id":
				field = 0
			case "files":
				field = 1
			case "target":
				field = 2
			case "env":
				field = 3
			}
			if field < 0 || seen[field] {
				return false
			}
			seen[field] = true
			switch field {
			case 0, 2:
				v, next, ok := str(j)
				if !ok {
					return false
				}
				if strs == nil {
					strs = new([2]string)
				}
				p := &strs[field/2]
				*p = keep(v)
				if field == 0 {
					out.ProjectID = p
				} else {
					out.Target = p
				}
				j = next
			case 1, 3:
				m, next, ok := obj(j)
				if !ok {
					return false
				}
				if field == 1 {
					out.Files = m
				} else {
					out.Env = m
				}
				j = next
			}
			if i = skipSpace(body, j); i < len(body) && body[i] == ',' {
				i = skipSpace(body, i+1)
				continue
			}
			if i < len(body) && body[i] == '}' {
				i++
				break
			}
			return false
		}
	}
	if skipSpace(body, i) != len(body) {
		return false
	}
	if repeated { // what the request keeps, not the values a repeated key replaced
		kept = keptBytes(&out)
	}
	// the strings keep the whole buffer alive (readBody's may hold twice the body: one
	// of no declared length, chunked or gzip-decoded)
	if 2*kept < cap(body) {
		cloneStrings(&out)
	}
	*dst = out
	return true
}

// keptBytes is the bytes of in's strings.
func keptBytes(in *world.NewDeployment) int {
	n := 0
	for _, p := range []*string{in.ProjectID, in.Target} {
		if p != nil {
			n += len(*p)
		}
	}
	for _, m := range []map[string]string{in.Files, in.Env} {
		for k, v := range m {
			n += len(k) + len(v)
		}
	}
	return n
}

// cloneStrings gives every string of in memory of its own.
func cloneStrings(in *world.NewDeployment) {
	for _, p := range []**string{&in.ProjectID, &in.Target} {
		if *p != nil {
			v := strings.Clone(**p)
			*p = &v
		}
	}
	for _, m := range []*map[string]string{&in.Files, &in.Env} {
		if *m == nil {
			continue
		}
		c := make(map[string]string, len(*m))
		for k, v := range *m {
			c[strings.Clone(k)] = strings.Clone(v)
		}
		*m = c
	}
}
