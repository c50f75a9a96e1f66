package httpapi

import (
	"bytes"
	"unicode/utf8"

	"github.com/gin-gonic/gin"
)

// The decryption service's bodies are one string field, often large: {"payload": "…"}
// or {"envelope": "…"}. fastStringField reads exactly that shape without encoding/json's
// scanner; anything else (escapes, other fields, odd types) is left to the full decoder,
// so the answers are the same either way.

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// fastStringField returns the value of body when body is {"name":"value"} (white space
// allowed) and value has no escapes or control characters and is valid UTF-8.
func fastStringField(body []byte, name string) (string, bool) {
	i := skipSpace(body, 0)
	if i >= len(body) || body[i] != '{' {
		return "", false
	}
	i = skipSpace(body, i+1)
	if len(body)-i < len(name)+2 || body[i] != '"' || string(body[i+1:i+1+len(name)]) != name || body[i+1+len(name)] != '"' {
		return "", false
	}
	i = skipSpace(body, i+2+len(name))
	if i >= len(body) || body[i] != ':' {
		return "", false
	}
	i = skipSpace(body, i+1)
	if i >= len(body) || body[i] != '"' {
		return "", false
	}
	start := i + 1
	end := bytes.IndexByte(body[start:], '"')
	if end < 0 {
		return "", false
	}
	value := body[start : start+end]
	if bytes.IndexByte(value, '\\') >= 0 || !utf8.Valid(value) {
		return "", false
	}
	for _, c := range value {
		if c < 0x20 {
			return "", false
		}
	}
	i = skipSpace(body, start+end+1)
	if i >= len(body) || body[i] != '}' || skipSpace(body, i+1) != len(body) {
		return "", false
	}
	return string(value), true
}

// decodeStringField reads a body of one string field: the fast path when it fits, else
// decodeJSON's full rules into dst, whose field *string is then returned.
func decodeStringField(c *gin.Context, limit int64, name string, dst any, field func() *string) (*string, error) {
	b, err := readJSONBody(c, limit)
	if err != nil || b == nil {
		return nil, err
	}
	if v, ok := fastStringField(b, name); ok {
		return &v, nil
	}
	if err := unmarshalStrict(b, dst); err != nil {
		return nil, err
	}
	return field(), nil
}
