package state

import (
	"slices"
	"time"
	"unicode/utf8"
)

// The deployment is most of a big world's state (its build logs above all), and its
// reflective MarshalJSON goes through encoding/json three times over (the deployment,
// its timings and each log line write themselves, and json.Marshal compacts what each
// wrote). appendDeployment writes the same bytes in one pass;
// TestDeploymentJSONIsJSONMarshals and FuzzDeploymentJSON hold it to the reflective
// form, and TestDeploymentFieldsAreAllWritten fails when a field is added to
// Deployment, Timings, LogLine or ErrorInfo without being written here.

// appendDeployment appends d as Deployment.MarshalJSON's reflective form writes it:
// the fields in declaration order, created_at last, maps sorted by key, times as
// Timestamps, strings escaped as encoding/json escapes them (HTML characters included).
func appendDeployment(b []byte, d *Deployment) []byte {
	b = append(b, `{"id":`...)
	b = AppendJSONString(b, d.ID)
	b = append(b, `,"project_id":`...)
	b = AppendJSONString(b, d.ProjectID)
	b = append(b, `,"url":`...)
	b = AppendJSONString(b, d.URL)
	b = append(b, `,"target":`...)
	b = AppendJSONString(b, d.Target)
	b = append(b, `,"status":`...)
	b = AppendJSONString(b, d.Status)
	b = append(b, `,"env":`...)
	b = appendStringMap(b, d.Env)
	b = append(b, `,"files":`...)
	b = appendStringMap(b, d.Files)
	b = append(b, `,"timings":`...)
	b = AppendTimings(b, &d.Timings)
	b = append(b, `,"error":`...)
	b = AppendErrorInfo(b, d.Error)
	b = append(b, `,"logs":`...)
	if d.Logs == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i := range d.Logs {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"text":`...)
			b = AppendJSONString(b, d.Logs[i].Text)
			b = append(b, `,"created_at":"`...)
			b = AppendTimestamp(b, d.Logs[i].CreatedAt)
			b = append(b, `"}`...)
		}
		b = append(b, ']')
	}
	b = append(b, `,"created_at":"`...)
	b = AppendTimestamp(b, d.CreatedAt)
	return append(b, `"}`...)
}

// AppendTimings writes a deployment's timings as its MarshalJSON does: each time a
// Timestamp, or null.
func AppendTimings(b []byte, t *Timings) []byte {
	b = append(b, `{"queued_at":`...)
	b = appendTimePtr(b, t.QueuedAt)
	b = append(b, `,"building_at":`...)
	b = appendTimePtr(b, t.BuildingAt)
	b = append(b, `,"ready_at":`...)
	b = appendTimePtr(b, t.ReadyAt)
	b = append(b, `,"error_at":`...)
	b = appendTimePtr(b, t.ErrorAt)
	return append(b, '}')
}

// AppendErrorInfo writes a deployment's or domain's error: {code, message}, or null.
func AppendErrorInfo(b []byte, e *ErrorInfo) []byte {
	if e == nil {
		return append(b, "null"...)
	}
	b = append(b, `{"code":`...)
	b = AppendJSONString(b, e.Code)
	b = append(b, `,"message":`...)
	b = AppendJSONString(b, e.Message)
	return append(b, '}')
}

func appendTimePtr(b []byte, t *time.Time) []byte {
	if t == nil {
		return append(b, "null"...)
	}
	b = append(b, '"')
	b = AppendTimestamp(b, *t)
	return append(b, '"')
}

// appendStringMap writes m as encoding/json does: null when nil, keys sorted.
func appendStringMap(b []byte, m map[string]string) []byte {
	if m == nil {
		return append(b, "null"...)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = AppendJSONString(b, k)
		b = append(b, ':')
		b = AppendJSONString(b, m[k])
	}
	return append(b, '}')
}

const hexDigits = "0123456789abcdef"

// plainASCII marks the ASCII bytes that JSON strings carry as they are.
var plainASCII = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// AppendJSONString appends s as a JSON string, escaped as encoding/json's Marshal
// escapes it: \" \\ \b \f \n \r \t, other control characters and < > & as \u00XX,
// invalid UTF-8 as \ufffd, and U+2028 and U+2029 escaped.
func AppendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	b = AppendJSONEscaped(b, s)
	return append(b, '"')
}

// AppendJSONEscaped appends the inside of a JSON string: escaping is per character, so
// pieces escaped one after another read as one string.
func AppendJSONEscaped[T string | []byte](b []byte, s T) []byte {
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if plainASCII[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		// at most 4 bytes: a []byte's conversion needs no allocation
		r, size := utf8.DecodeRuneInString(string(s[i:min(i+utf8.UTFMax, len(s))]))
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	return append(b, s[start:]...)
}
