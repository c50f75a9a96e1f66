package httpapi

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/hostemu/hostemu/emulator/internal/apperr"
	"github.com/hostemu/hostemu/emulator/internal/state"
	"github.com/hostemu/hostemu/emulator/internal/world"
)

// FuzzDecodeBody: any body decodes into a request or fails with a catalogue error;
// never a panic, never an internal error.
func FuzzDecodeBody(f *testing.F) {
	for _, s := range []string{
		`{"project_id":"prj_a","files":{"index.html":"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"}}`,
		`{"project_id":1}`, `[]`, `{"files":[]}`, `{"env":{"A":1}}`, `{`, `{} {}`, `"x"`, `null`,
		`{"hostname":"*.a.test","redirect_to":null}`, `{"envelope":"hx1.AAAA"}`, "{\"a\":\"\xff\"}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, dst := range []any{&world.NewDeployment{}, &world.NewDomain{}, &decryptRequest{}, &encryptRequest{}, &world.AwaitRequest{}} {
			err := unmarshalStrict(b, dst)
			if err == nil {
				continue
			}
			ae, ok := apperr.As(err)
			if !ok || (ae.Code != apperr.InvalidJSON && ae.Code != apperr.InvalidRequest) {
				t.Fatalf("%q: error %v is not a 400 invalid_json/invalid_request", b, err)
			}
		}
	})
}

// FuzzCursor: only cursors this API made decode, and they decode to what was encoded.
func FuzzCursor(f *testing.F) {
	a := &API{cursorKey: []byte("fuzz key")}
	good := *a.encodeCursor("deployments|", &state.Key{At: 1763726400000000000, ID: "dpl_abc"})
	f.Add(good, int64(0), "dpl_x")
	f.Add("", int64(-1), "")
	f.Add("AAAA", int64(1<<62), "dpl_\x00")
	f.Add(good[:len(good)-1]+"B", int64(5), "x")
	f.Fuzz(func(t *testing.T, s string, at int64, id string) {
		k, err := a.decodeCursor("deployments|", s)
		if err == nil && k != nil {
			if again := *a.encodeCursor("deployments|", k); again != s {
				t.Fatalf("cursor %q decoded to %v, which encodes to %q", s, k, again)
			}
		}
		if len(id) <= 128 {
			enc := a.encodeCursor("deployments|", &state.Key{At: at, ID: id})
			k, err := a.decodeCursor("deployments|", *enc)
			if err != nil || k.At != at || k.ID != id {
				t.Fatalf("round trip of (%d, %q): %v, %v", at, id, k, err)
			}
			if _, err := a.decodeCursor("domains|", *enc); err == nil {
				t.Fatal("a cursor decoded for another list")
			}
		}
	})
}

// FuzzFastStringField: whenever the fast path reads a body, encoding/json reads the
// same value from it (so the two paths never answer differently).
func FuzzFastStringField(f *testing.F) {
	for _, s := range []string{`{"payload":"x"}`, ` { "payload" : "héllo" } `, `{"payload":"a\"b"}`, `{"payload":"\u00e9"}`,
		`{"payload":"x","a":1}`, `{"payload":"x"`, `{"payload":"tab	"}`, `{"payload":"\xff"}`, `{"PAYLOAD":"x"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, ok := fastStringBytes(b, "payload")
		if !ok {
			return
		}
		var req encryptRequest
		if err := unmarshalStrict(b, &req); err != nil || req.Payload == nil || *req.Payload != string(v) {
			t.Fatalf("%q: fast path %q, encoding/json %v %v", b, v, req.Payload, err)
		}
		if err := exactStringField(b, "payload"); err != nil {
			t.Fatalf("%q: the fast path read it, yet it is not exact: %v", b, err)
		}
	})
}

// FuzzExactStringField: a payload is refused exactly when encoding/json put a U+FFFD
// in it that the body did not send (as the character or as \ufffd).
func FuzzExactStringField(f *testing.F) {
	for _, s := range []string{`{"payload":"x"}`, `{"payload":"\ud800"}`, `{"payload":"\ud83d\ude80"}`, `{"payload":"\\ud800"}`,
		`{"payload":"\ufffd�"}`, "{\"payload\":\"\xff\"}", `{"payload":"\ud83d\u0041"}`, `{"payload":"a","PayLoad":"\udc00"}`,
		"{\"payload\":\"\xed\xa0\x80\"}", `{"payload":1}`, `{"payload":"\uD83D"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var req encryptRequest
		if unmarshalStrict(b, &req) != nil || req.Payload == nil {
			return
		}
		lit, err := lastField(b, "payload")
		if err != nil {
			t.Fatalf("%q decodes, but its payload cannot be found: %v", b, err)
		}
		sent := countReplacements(lit)
		got := strings.Count(*req.Payload, "\ufffd")
		err = exactStringField(b, "payload")
		if (err == nil) != (got == sent) {
			t.Fatalf("%q: %d U+FFFD sent, %d decoded, yet exactStringField says %v", b, sent, got, err)
		}
	})
}

// countReplacements counts the U+FFFD a JSON string literal sends on purpose: the
// character itself and \ufffd escapes.
func countReplacements(lit []byte) int {
	n := 0
	for i := 1; i < len(lit)-1; i++ {
		switch {
		case lit[i] == '\\' && lit[i+1] == 'u' && i+6 <= len(lit) && strings.EqualFold(string(lit[i+2:i+6]), "fffd"):
			n++
			i += 5
		case lit[i] == '\\':
			i++
		case bytes.HasPrefix(lit[i:], []byte("\ufffd")):
			n++
			i += 2
		}
	}
	return n
}

// FuzzFastNewDeployment: whenever the fast path reads a create's body, encoding/json
// reads the same request from it (so the two paths never answer differently).
func FuzzFastNewDeployment(f *testing.F) {
	for _, s := range []string{`{"project_id":"prj_a","files":{"index.html":"` + strings.Repeat("a", 64) + `"}}`,
		` { "project_id" : "p" , "files" : { } , "target" : "production" , "env" : { "A" : "1" , "A" : "2" } } `,
		`{}`, `{"files":{"a":"b"},"files":{"c":"d"}}`, `{"Project_ID":"p"}`, `{"project_id":null}`, `{"project_id":"a\"b"}`,
		`{"project_id":"p","files":{"a":1}}`, `{"project_id":"p"}x`, `{"project_id":"p",}`, `{"env":{"é":"日本"}}`, "{\"target\":\"\xff\"}",
		`{"project_id":"p","extra":1}`, `[]`, `{"files":{"a":"b",}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		// a create's own buffer (the fuzzer's b is not: it may reuse it), the strings
		// cut from it
		var fast world.NewDeployment
		if !fastNewDeployment(bytes.Clone(b), &fast) {
			return
		}
		var full world.NewDeployment
		if err := unmarshalStrict(b, &full); err != nil || !reflect.DeepEqual(fast, full) {
			t.Fatalf("%q: fast path %+v, encoding/json %+v %v", b, fast, full, err)
		}
	})
}

// The fast path reads the bodies clients send; what it leaves to encoding/json is
// decoded there.
func TestFastNewDeploymentReads(t *testing.T) {
	for body, want := range map[string]bool{
		`{"project_id":"prj_a","files":{"index.html":"` + strings.Repeat("a", 64) + `"},"target":"preview","env":{"A":"1"}}`: true,
		` { "files" : { } , "project_id" : "p" } `: true,
		`{}`: true,
		`{"project_id":"p","files":{"a":"b"},"project_id":"q"}`: false,
		`{"project_id":"p\u00e9"}`:                              false,
		`{"PROJECT_ID":"p"}`:                                    false,
		`{"project_id":"p"} {}`:                                 false,
	} {
		var req world.NewDeployment
		if got := fastNewDeployment([]byte(body), &req); got != want {
			t.Errorf("%s: fast path %v, want %v", body, got, want)
		}
	}
}

// A body padded with white space is read, but its strings do not keep the body alive;
// an unpadded one's strings are cut from it.
func TestFastNewDeploymentPaddedBody(t *testing.T) {
	for pad, wantShared := range map[int]bool{0: true, 1 << 16: false} {
		body := []byte(`{"project_id":"p",` + strings.Repeat(" ", pad) + `"files":{"a":"` + strings.Repeat("b", 64) + `"}}`)
		var req world.NewDeployment
		if !fastNewDeployment(body, &req) || *req.ProjectID != "p" || req.Files["a"] != strings.Repeat("b", 64) {
			t.Fatalf("pad %d: %+v", pad, req)
		}
		pid, file := uintptr(unsafe.Pointer(unsafe.StringData(*req.ProjectID))), uintptr(unsafe.Pointer(unsafe.StringData(req.Files["a"])))
		shared := file-pid == uintptr(bytes.Index(body, []byte(`"bb`))-bytes.Index(body, []byte(`"p"`)))
		if shared != wantShared {
			t.Fatalf("pad %d: the strings cut from the body: %v", pad, shared)
		}
	}
}

// inBuffer reports whether s lies in b's array (up to its capacity).
func inBuffer(s string, b []byte) bool {
	p, b0 := uintptr(unsafe.Pointer(unsafe.StringData(s))), uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return p >= b0 && p < b0+uintptr(cap(b))
}

// A body's strings are cut from its buffer only when they make at least half of
// what the buffer holds, its capacity counted: readBody's buffer of a body of no
// declared length (chunked, gzip-decoded) may be twice the body, and the world must
// not keep a buffer many times what it weighs.
func TestFastNewDeploymentOwnedCapacity(t *testing.T) {
	body := `{"project_id":"p","files":{"a":"` + strings.Repeat("b", 64) + `"},"env":{"K":"` + strings.Repeat("v", 400) + `"}}`
	for c, wantShared := range map[int]bool{len(body): true, 4 * len(body): false} {
		b := append(make([]byte, 0, c), body...)
		var req world.NewDeployment
		if !fastNewDeployment(b, &req) || req.Env["K"] != strings.Repeat("v", 400) || req.Files["a"] != strings.Repeat("b", 64) {
			t.Fatalf("capacity %d: %+v", c, req)
		}
		if shared := inBuffer(req.Env["K"], b); shared != wantShared {
			t.Fatalf("capacity %d of a %d-byte body: the strings cut from the buffer: %v", c, len(body), shared)
		}
	}
}

// A key of env or files given twice keeps its last value: the value it replaced is
// kept by nothing, and does not count toward the half of the body the strings must
// make to be cut from it (a long value replaced by a short one, else, kept the whole
// body alive for a few bytes the world weighs).
func TestFastNewDeploymentRepeatedKey(t *testing.T) {
	long := strings.Repeat("v", 4096)
	for _, body := range []string{
		`{"project_id":"p","files":{},"env":{"K":"` + long + `","K":"1"}}`,
		`{"project_id":"p","files":{"a":"` + long + `","a":"` + strings.Repeat("b", 64) + `"}}`,
	} {
		b := []byte(body)
		var req world.NewDeployment
		if !fastNewDeployment(b, &req) {
			t.Fatalf("%.40s: not read", body)
		}
		for _, s := range []string{*req.ProjectID, req.Env["K"], req.Files["a"]} {
			if s != "" && inBuffer(s, b) {
				t.Fatalf("%.40s: %q cut from a body of %d bytes", body, s, len(b))
			}
		}
	}
	// the value kept long, the one replaced short: cut from the body
	b := []byte(`{"project_id":"p","files":{},"env":{"K":"1","K":"` + long + `"}}`)
	var req world.NewDeployment
	if !fastNewDeployment(b, &req) || req.Env["K"] != long || !inBuffer(req.Env["K"], b) {
		t.Fatalf("the last value long: %.40q, cut from the body: %v", req.Env["K"], inBuffer(req.Env["K"], b))
	}
}
