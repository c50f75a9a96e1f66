package journal

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"sort"
	"strings"
	"unsafe"
)

// What an entry keeps of a request's headers at most: MaxHeaders bytes of names and
// values together and maxHeaderCount headers; beyond, HeadersTruncated is set.
const (
	MaxHeaders     = 2048
	maxHeaderCount = 32
	headersBytes   = MaxHeaders + maxHeaderCount*int64(unsafe.Sizeof(Header{}))
)

// What an entry keeps of an answer's headers at most: the ones AnswerHeader names,
// MaxAnswerHeaders bytes of names and values together and maxAnswerHeaderCount of them;
// beyond, the answer's HeadersTruncated is set. A Location can be long (the edge
// redirects to the path asked for); the others are a few bytes.
const (
	MaxAnswerHeaders     = 1024
	maxAnswerHeaderCount = 8
	answerHeadersBytes   = MaxAnswerHeaders + maxAnswerHeaderCount*int64(unsafe.Sizeof(Header{}))
)

// AnswerHeader reports whether the journal keeps an answer's header of this name (any
// case): the ones a client acts on, Content-Type, Location, Retry-After and
// X-RateLimit-*.
func AnswerHeader(name string) bool {
	const rate = "X-Ratelimit-"
	return strings.EqualFold(name, "Content-Type") || strings.EqualFold(name, "Location") || strings.EqualFold(name, "Retry-After") ||
		len(name) > len(rate) && strings.EqualFold(name[:len(rate)], rate)
}

// answerHeaders is what own keeps of an answer's headers, sorted by name, at most
// maxAnswerHeaderCount of them: those of h (an answer being recorded) when it is not
// nil, else those of kept (an entry loaded from a bundle); cut says some were left
// out. buf holds them, sharing the strings, for own to copy. constNames says every
// name is one of keptNames, constants that hold no request's memory: own keeps them
// as they are, and copies only the values.
func answerHeaders(kept Headers, h http.Header, buf *[maxAnswerHeaderCount]Header) (_ Headers, cut, constNames bool) {
	if h != nil {
		if out, ok := knownAnswerHeaders(h, buf); ok {
			return out, false, true
		}
	}
	out, cut := walkAnswerHeaders(kept, h, buf)
	return out, cut, false
}

// AnswerHead is what an entry keeps of an answer's headers, taken when the answer's
// head is sent (Take): net/http sends the header map as it is then, and a header set
// after that (but a trailer, which hostemu never declares) never reaches the client,
// so the entry must not show it. It holds the kept headers' strings, never the map:
// later edits of the map, in place or not, do not change it. Its zero value is not
// taken. SetAnswerHead gives it to an entry.
type AnswerHead struct {
	buf             [maxAnswerHeaderCount]Header
	n               uint8
	cut, constNames bool
	taken           bool
}

// Take keeps what the journal keeps of h (AnswerHeader's names, sorted, within the
// bounds), as SetResponse's answer headers would be kept, once: a head is sent once,
// and a later call (a superfluous WriteHeader) changes nothing.
func (a *AnswerHead) Take(h http.Header) {
	if a.taken {
		return
	}
	out, cut, constNames := answerHeaders(nil, h, &a.buf) // a nil h has none
	a.n, a.cut, a.constNames, a.taken = uint8(len(out)), cut, constNames, true
}

// Taken reports whether Take was called.
func (a *AnswerHead) Taken() bool { return a.taken }

// walkAnswerHeaders is answerHeaders by a walk of every header.
func walkAnswerHeaders(kept Headers, h http.Header, buf *[maxAnswerHeaderCount]Header) (_ Headers, cut bool) {
	n := 0
	add := func(name, value string) {
		switch {
		case !AnswerHeader(name):
		case n == len(buf):
			cut = true
		default:
			buf[n] = Header{Name: name, Value: value}
			n++
		}
	}
	if h != nil {
		for name, vals := range h {
			if len(vals) > 0 {
				add(name, headerValue(name, vals))
			}
		}
	} else {
		for _, x := range kept {
			add(x.Name, x.Value)
		}
	}
	out := buf[:n]
	for i := 1; i < n; i++ { // insertion sort: a handful of headers
		for j := i; j > 0 && out[j].Name < out[j-1].Name; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out, cut
}

// keptNames are the names AnswerHeader keeps in the canonical form hostemu writes them,
// sorted; leftNames the other names hostemu's answers carry. knownAnswerHeaders' switch
// names the same (TestKnownAnswerHeaders).
var (
	keptNames = [...]string{"Content-Type", "Location", "Retry-After", "X-Ratelimit-Limit", "X-Ratelimit-Remaining", "X-Ratelimit-Reset"}
	leftNames = [...]string{"Vary", "Date", "Server", "X-Hostemu-Deployment", "Etag", "Accept-Ranges", "Content-Length", "Last-Modified",
		"Access-Control-Allow-Origin", "Access-Control-Expose-Headers", "Access-Control-Allow-Credentials",
		"Cache-Control", "X-Content-Type-Options", "X-Hostemu-Error", "X-Hostemu-Placeholder", "Allow"}
)

// knownAnswerHeaders is answerHeaders' result for an answer whose header names are all
// among keptNames and leftNames, decided by one switch on each name (no comparison in
// any case with each kept name) and put in name order by the slot each kept name has
// (no sort); ok is false for an answer with any other name, or a known one in another
// case, which answerHeaders then walks as before. TestKnownAnswerHeaders holds it to
// the walk.
func knownAnswerHeaders(h http.Header, buf *[maxAnswerHeaderCount]Header) (_ Headers, ok bool) {
	var slots [len(keptNames)][]string
	for name, vals := range h {
		switch name {
		case "Content-Type":
			slots[0] = vals
		case "Location":
			slots[1] = vals
		case "Retry-After":
			slots[2] = vals
		case "X-Ratelimit-Limit":
			slots[3] = vals
		case "X-Ratelimit-Remaining":
			slots[4] = vals
		case "X-Ratelimit-Reset":
			slots[5] = vals
		case "Vary", "Date", "Server", "X-Hostemu-Deployment", "Etag", "Accept-Ranges", "Content-Length", "Last-Modified",
			"Access-Control-Allow-Origin", "Access-Control-Expose-Headers", "Access-Control-Allow-Credentials",
			"Cache-Control", "X-Content-Type-Options", "X-Hostemu-Error", "X-Hostemu-Placeholder", "Allow":
		default:
			return nil, false
		}
	}
	n := 0
	for i, vals := range slots { // at most len(keptNames) < maxAnswerHeaderCount: never cut
		if len(vals) > 0 {
			buf[n] = Header{Name: keptNames[i], Value: joined(vals)}
			n++
		}
	}
	return buf[:n], true
}

// joined is vals joined by ", " (the one value itself when there is one).
func joined(vals []string) string {
	if len(vals) == 1 {
		return vals[0]
	}
	return strings.Join(vals, ", ")
}

// Redacted replaces the value of a credential header (Authorization,
// Proxy-Authorization, Cookie): the journal shows it was sent, never what it was.
const Redacted = "[redacted]"

// Header is one request header: its canonical name and its values joined by ", ".
type Header struct {
	Name  string
	Value string
}

// Headers are a request's headers, sorted by name; JSON writes them as an object.
type Headers []Header

// Get is the value of the header name (any case), or "".
func (h Headers) Get(name string) string {
	v, _ := h.Lookup(name)
	return v
}

// Lookup is the value of the header name (any case), and whether there is one.
func (h Headers) Lookup(name string) (string, bool) {
	for _, x := range h {
		if strings.EqualFold(x.Name, name) {
			return x.Value, true
		}
	}
	return "", false
}

// MarshalJSON writes {"Name":"value",…} in name order.
func (h Headers) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, x := range h {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(x.Name)
		v, _ := json.Marshal(x.Value)
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON reads the object MarshalJSON writes, into a slice of its own: h may be
// a journaled entry's, whose slots (shared with every copy) are never written
// again.
func (h *Headers) UnmarshalJSON(b []byte) error {
	var m map[string]string
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	*h = make(Headers, 0, len(m))
	for k, v := range m {
		*h = append(*h, Header{Name: k, Value: v})
	}
	sort.Slice(*h, func(i, j int) bool { return (*h)[i].Name < (*h)[j].Name })
	return nil
}

// HeadersOf is what the journal keeps of a request's headers: every header, sorted by
// name, credentials redacted. Add bounds it.
func HeadersOf(hd http.Header) Headers {
	if len(hd) == 0 {
		return nil
	}
	out := make(Headers, 0, len(hd))
	for name, vals := range hd {
		out = append(out, Header{Name: name, Value: headerValue(name, vals)})
	}
	slices.SortFunc(out, func(a, b Header) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// bytes is what h holds: its slice and its strings.
func (h Headers) bytes() int64 {
	n := int64(cap(h)) * int64(unsafe.Sizeof(Header{}))
	for _, x := range h {
		n += int64(len(x.Name) + len(x.Value))
	}
	return n
}

// headerValue is what the journal keeps of one header's values: Redacted for a
// credential, else the values joined by ", " (the request's own string when there is
// one: Add copies what it keeps).
func headerValue(name string, vals []string) string {
	if credential(name) {
		return Redacted
	}
	return joined(vals)
}

// credential reports whether name is Authorization, Proxy-Authorization or Cookie, in
// any case (the length first: most names are none of the three lengths).
func credential(name string) bool {
	switch len(name) {
	case len("Authorization"):
		return strings.EqualFold(name, "Authorization")
	case len("Proxy-Authorization"):
		return strings.EqualFold(name, "Proxy-Authorization")
	case len("Cookie"):
		return strings.EqualFold(name, "Cookie")
	}
	return false
}
