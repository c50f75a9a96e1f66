package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/apperr"
)

func TestDuplicateKeys(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{`{"scope":"admin","scope":"read"}`, `key "scope" is given twice: give it once`},
		{`{"a":{"b":1,"b":2}}`, `key "b" in a is given twice`},
		{`{"a":[{"x":1},{"y":1,"y":2}]}`, `key "y" in a is given twice`},
		{`[{"k":1},{"k":1}]`, ``},                        // one key in each of two objects
		{`{"a":"b","b":{"a":1}}`, ``},                    // one name at two depths
		{`{"scope":"read","Scope":"read"}`, ``},          // two keys of a map; a struct's fields are UnknownKeys'
		{`{"a":"\u0062","b":1}`, ``},                     // a value that spells a key
		{`{"\u0061":1,"a":2}`, `key "a" is given twice`}, // a key escaped is the same key
		{`"just text"`, ``},
		{`{"a":1,`, ``}, // malformed: the decoder names it
	} {
		err := DuplicateKeys([]byte(tc.text), "")
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.text, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want %q", tc.text, err, tc.want)
		}
	}
}

// Two spellings of one struct field (keys match fields in any case) are refused, named
// in a stable order.
func TestOneFieldInTwoCases(t *testing.T) {
	type match struct {
		Path string `json:"path"`
	}
	type fault struct {
		Status int   `json:"status"`
		Match  match `json:"match"`
	}
	var v any
	json.Unmarshal([]byte(`{"match":{"path":"/a","PATH":"/b"},"status":1}`), &v)
	err := UnknownKeys(v, reflect.TypeFor[fault](), "")
	if err == nil || !strings.HasSuffix(err.Error(), `keys "PATH" and "path" in match both set "path": give it once`) {
		t.Fatalf("%v", err)
	}
	json.Unmarshal([]byte(`{"Match":{"Path":"/a"},"STATUS":1}`), &v)
	if err := UnknownKeys(v, reflect.TypeFor[fault](), ""); err != nil {
		t.Fatalf("one spelling each, in any case: %v", err)
	}
}

// FuzzDuplicateKeys holds DuplicateKeys to what decoding loses: a well-formed text has a
// key given twice in one object exactly when its objects, decoded, hold fewer keys than
// the text spells.
func FuzzDuplicateKeys(f *testing.F) {
	many := `{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"ka":10,"kb":11,"kc":12,"kd":13,"ke":14,"kf":15,"kg":16,"k0":17}`
	for _, s := range []string{`{"a":1,"a":2}`, `{"a":{"b":[1,{"c":1,"c":1}]}}`, `[{"a":1},{"a":1}]`, `{"\u0061":1,"a":1}`, `{}`, `[]`, `1`,
		many, ` { "a" : [ 1 , { } , [ ] , "x\"y" ] , "b" : { "a" : null } , "a" : true } `, `{"a\"":1,"a":2}`, `{"a":"}","a\\":1}`,
		"{\"\xff\":1,\"\xfe\":2}", "{\"\xef\xbf\xbd\":1,\"\xff\":2}", `{"é":1,"e":2}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, text []byte) {
		var v any
		if json.Unmarshal(text, &v) != nil {
			return
		}
		err := DuplicateKeys(text, "")
		if (err != nil) != (keysSpelled(t, text) > keysKept(v)) {
			t.Fatalf("%q: %v; keys spelled %d, kept %d", text, err, keysSpelled(t, text), keysKept(v))
		}
		// the scan that answers first agrees with the decoder's walk wherever it decides
		if _, found := scanDuplicates(text, 0, 0); found&unsure == 0 && (found&keyTwice != 0) != (err != nil) {
			t.Fatalf("%q: the scan finds %b, the walk %v", text, found, err)
		}
	})
}

func keysKept(v any) int {
	n := 0
	switch x := v.(type) {
	case map[string]any:
		n += len(x)
		for _, e := range x {
			n += keysKept(e)
		}
	case []any:
		for _, e := range x {
			n += keysKept(e)
		}
	}
	return n
}

// keysSpelled counts the keys a text spells: the strings a decoder reads right after an
// object's opening brace or after a comma inside an object.
func keysSpelled(t *testing.T, text []byte) int {
	dec := json.NewDecoder(strings.NewReader(string(text)))
	var inObject []bool
	n, wantKey := 0, false
	for {
		tok, err := dec.Token()
		if err != nil {
			return n
		}
		switch tok {
		case json.Delim('{'):
			inObject = append(inObject, true)
			wantKey = true
			continue
		case json.Delim('['):
			inObject = append(inObject, false)
		case json.Delim('}'), json.Delim(']'):
			inObject = inObject[:len(inObject)-1]
		default:
			if wantKey {
				n++
				wantKey = false
				continue
			}
		}
		// after a value: the next token is a key when we are in an object
		wantKey = len(inObject) > 0 && inObject[len(inObject)-1] && tok != json.Delim('[') && tok != json.Delim('{')
	}
}

// A text with no key twice is passed by the scan alone, allocating nothing: the state's
// tokens, projects and domains are each checked so.
func TestDuplicateKeysScanAllocatesNothing(t *testing.T) {
	text := []byte(`{"id":"prj_a","name":"a","created_at":"2026-11-01T00:00:00Z","env":{"A":"1","B":"2"},"tls":{"status":"issued","issuer":null}}`)
	if n := testing.AllocsPerRun(100, func() {
		if DuplicateKeys(text, "projects") != nil {
			t.Fatal("no key is given twice")
		}
	}); n != 0 {
		t.Errorf("%v allocations", n)
	}
}

// Keys that are not valid UTF-8 are one key once decoded (each bad byte is U+FFFD), as
// encoding/json keeps them: the scan leaves them to the walk, which refuses them.
func TestDuplicateKeysOfInvalidUTF8(t *testing.T) {
	for _, text := range []string{"{\"\xff\":1,\"\xfe\":2}", "{\"\xef\xbf\xbd\":1,\"\xff\":2}", "[{\"a\xff\":{},\"a\xc0\":[]}]"} {
		if err := DuplicateKeys([]byte(text), ""); err == nil {
			t.Errorf("%q: no key given twice", text)
		}
	}
}

type onceTLS struct {
	Status string `json:"status"`
}

type onceElem struct {
	Scope string            `json:"scope"`
	Env   map[string]string `json:"env"`
	TLS   *onceTLS          `json:"tls"`
	Logs  []onceTLS         `json:"logs"`
}

// GivenOnce answers as the control API's bodies are answered: one field in two cases
// (UnknownKeys' wording) and a key given twice (DuplicateKeys'); two keys of a map that
// differ in case are two keys.
func TestGivenOnce(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{`{"scope":"admin","SCOPE":"read"}`, `keys "SCOPE" and "scope" in tokens both set "scope": give it once`},
		{`{"tls":{"status":"a","Status":"b"}}`, `keys "Status" and "status" in tokens.tls both set "status"`},
		{`{"logs":[{"status":"a"},{"STATUS":"a","status":"b"}]}`, `keys "STATUS" and "status" in tokens.logs both set "status"`},
		{"{\"scope\":\"admin\",\"\u017fcope\":\"read\"}", `both set "scope"`}, // ſ folds to s, as encoding/json matches it
		{`{"scope":"admin","\u0053cope":"read"}`, `both set "scope"`},         // escaped
		{`{"scope":"admin","scope":"read"}`, `key "scope" in tokens is given twice: give it once`},
		{`{"scope":"a","scope":"b","SCOPE":"c"}`, `keys "SCOPE" and "scope" in tokens both set`}, // named first, as the API does
		{`{"env":{"A":"1","a":"2"},"Scope":"read"}`, ``},                                         // a map's keys: two keys
		{`{"env":{"A":"1","A":"2"}}`, `key "A" in tokens.env is given twice`},
		{`{"Scope":"read","TLS":{"STATUS":"x"},"env":{"é":"1","É":"2"}}`, ``},
	} {
		err := GivenOnce([]byte(tc.text), new(onceElem), "tokens")
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.text, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want %q", tc.text, err, tc.want)
		}
	}
}

// A text with no key twice and no two keys alike but for case is passed by the scan
// alone, allocating nothing (a map's keys alike but for case cost the walk).
func TestGivenOnceScanAllocatesNothing(t *testing.T) {
	text := []byte(`{"scope":"read","env":{"A":"1","B":"2","AB":"3","BA":"4"},"tls":{"status":"issued"},"logs":[{"status":"a"},{"status":"b"}]}`)
	dst := new(onceElem)
	if n := testing.AllocsPerRun(100, func() {
		if GivenOnce(text, dst, "tokens") != nil {
			t.Fatal("no key is given twice")
		}
	}); n != 0 {
		t.Errorf("%v allocations", n)
	}
}

// FuzzGivenOnce holds GivenOnce to the walks it stands for, UnknownKeys' and
// DuplicateKeys', on what Decode accepts: the scan that answers first decides nothing
// they would not.
func FuzzGivenOnce(f *testing.F) {
	for _, s := range []string{`{"scope":"a","SCOPE":"b"}`, `{"env":{"A":"1","a":"2"}}`, `{"tls":{"status":"a","Status":"b"}}`,
		"{\"scope\":\"a\",\"\u017fcope\":\"b\"}", `{"logs":[{"status":"a","STATUS":"b"}]}`, `{"scope":"a","scope":"b"}`, `{}`,
		`{"scope":"a","scope":"b","SCOPE":"c"}`, `{"env":{"é":"1","É":"2"}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, text []byte) {
		if Decode(text, new(onceElem), "") != nil {
			return
		}
		var v any
		if json.Unmarshal(text, &v) != nil {
			return
		}
		want := UnknownKeys(v, reflect.TypeFor[onceElem](), "")
		if want == nil {
			want = DuplicateKeys(text, "")
		}
		got := GivenOnce(text, new(onceElem), "")
		if (got == nil) != (want == nil) || (got != nil && got.Error() != want.Error()) {
			t.Fatalf("%q: %v, the walks %v", text, got, want)
		}
	})
}

// KeysOnce reads a body before anything knows it well formed: nesting deeper than
// maxScanDepth is left to the walks (which refuse it beyond encoding/json's depth), not
// scanned a frame a level (8 MiB of '[' overflowed the stack, killing the process).
func TestKeysOnceOfDeepNesting(t *testing.T) {
	for _, text := range [][]byte{
		bytes.Repeat([]byte("["), 8<<20),
		bytes.Repeat([]byte(`{"a":`), 1<<20),
		[]byte(strings.Repeat("[", maxScanDepth+1) + "1" + strings.Repeat("]", maxScanDepth+1)),
	} {
		if KeysOnce(text) {
			t.Errorf("%.20q… (%d bytes): decided by the scan", text, len(text))
		}
	}
	within := []byte(strings.Repeat(`{"a":`, maxScanDepth) + "1" + strings.Repeat("}", maxScanDepth))
	if !KeysOnce(within) {
		t.Errorf("%d levels, each key once: not decided by the scan", maxScanDepth)
	}
}

// Decode names an unknown key beside a number beyond float64 as it names any other
// (json.Unmarshal into an any refused the text, and the decoder's bare wording showed).
func TestDecodeUnknownKeyBesideAHugeNumber(t *testing.T) {
	type doc struct {
		N   json.Number `json:"n"`
		Tag string      `json:"tag"`
	}
	err := Decode([]byte(`{"n":1e400,"tga":"x"}`), new(doc), "meta")
	if err == nil || !strings.HasSuffix(err.Error(), `unknown key "tga" in meta (did you mean "tag"?)`) {
		t.Errorf("%v", err)
	}
}

// An unknown key in a value that a later value of the same key replaces is not in what
// UnknownKeys walks (encoding/json's any keeps the last): Decode refuses the key given
// twice in its words, 400 invalid_request, never encoding/json's bare "json: unknown
// field" (which a state import answered as `field json: unknown field "x"`).
func TestDecodeUnknownKeyInAReplacedValue(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{`{"tls":{"x":""},"tls":{}}`, `key "tls" in tokens is given twice: give it once`},
		{`{"tls":{"x":""},"tls":null}`, `key "tls" in tokens is given twice: give it once`},
		{`{"logs":[{"x":1}],"logs":[]}`, `key "logs" in tokens is given twice: give it once`},
		{`{"tls":{"status":"a","sttaus":"b"},"tls":{}}`, `key "tls" in tokens is given twice: give it once`},
		{`{"tls":{},"tls":{"x":""}}`, `unknown key "x" in tokens.tls`}, // the last is walked: named as ever
	} {
		err := Decode([]byte(tc.text), new(onceElem), "tokens")
		if e, ok := apperr.As(err); !ok || e.Code != apperr.InvalidRequest || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want invalid_request %q", tc.text, err, tc.want)
		}
	}
}

// A value its type's own decoder refuses is named by its key and place, 400
// invalid_request (a state import answered `field parsing time "x" as
// "2006-01-02T15:04:05Z07:00": cannot parse "x" as "2006"`, naming no field).
func TestDecodeNamesARefusedValue(t *testing.T) {
	type step struct {
		At *time.Time `json:"at"`
	}
	type doc struct {
		CreatedAt time.Time         `json:"created_at"`
		Steps     []step            `json:"steps"`
		ByName    map[string]step   `json:"by_name"`
		Raw       json.RawMessage   `json:"raw"`
		Times     map[string]string `json:"times"`
	}
	for _, tc := range []struct{ text, want string }{
		{`{"created_at":"yesterday"}`, `key "created_at" in deployments: "yesterday" is not an RFC 3339 time like 2026-11-01T10:00:00Z`},
		{`{"created_at":5}`, `key "created_at" in deployments: 5 is not an RFC 3339 time like`},
		{`{"created_at":"2026-13-01T00:00:00Z"}`, `"2026-13-01T00:00:00Z" is not an RFC 3339 time like 2026-11-01T10:00:00Z (month out of range)`},
		{`{"created_at":"2026-11-01T10:00:00Z","steps":[{"at":null},{"at":"soon"}]}`, `key "at" in deployments.steps: "soon" is not`},
		{`{"by_name":{"a":{"at":"soon"}}}`, `key "at" in deployments.by_name.a: "soon" is not`},
		{`{"raw":{"created_at":"x"},"times":{"created_at":"x"},"created_at":"x"}`, `key "created_at" in deployments: "x" is not`}, // raw and plain strings are nobody's to parse
	} {
		err := Decode([]byte(tc.text), new(doc), "deployments")
		if e, ok := apperr.As(err); !ok || e.Code != apperr.InvalidRequest || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want invalid_request %q", tc.text, err, tc.want)
		}
	}
	// what encoding/json names itself stays its own: a syntax or a type error
	if err := Decode([]byte(`{"steps":5}`), new(doc), "deployments"); err == nil || !strings.Contains(err.Error(), "cannot unmarshal number") {
		t.Errorf("a type error: %v", err)
	}
	if err := Decode([]byte(`{"created_at":`), new(doc), "deployments"); err == nil || strings.Contains(err.Error(), "RFC 3339") {
		t.Errorf("a cut document: %v", err)
	}
}

// A []byte's value that is not base64, and a value whose own decoder names itself
// ("delay: …"), are named by their place; a type error's field loses the Go names of
// the embedded structs encoding/json puts in it ("faults.Spec.status").
func TestDecodeNamesBase64OwnNamesAndEmbedded(t *testing.T) {
	type Inner struct {
		Status int `json:"status"`
	}
	type saved struct {
		Inner
		Delay selfNamed `json:"delay"`
	}
	type doc struct {
		Dice   []byte  `json:"dice"`
		Faults []saved `json:"faults"`
	}
	for _, tc := range []struct{ text, want string }{
		{`{"dice":"!!x"}`, `key "dice" in bundle: "!!x" is not base64 (standard alphabet, padded)`},
		{`{"faults":[{"delay":"soon"}]}`, `field "bundle.faults.delay": invalid duration "soon"`},
		{`{"faults":[{"delay":"range"}]}`, `field "bundle.faults.delay.min": invalid duration "x"`},
		{`{"faults":[{"delay":"word"}]}`, `field "bundle.faults.delay" must be a duration`},
		{`{"faults":[{"delay":"other"}]}`, `key "delay" in bundle.faults: delays are off`},
	} {
		err := Decode([]byte(tc.text), new(doc), "bundle")
		if e, ok := apperr.As(err); !ok || e.Code != apperr.InvalidRequest || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want invalid_request %q", tc.text, err, tc.want)
		}
	}
	err := Decode([]byte(`{"faults":[{"status":"503"}]}`), new(doc), "")
	if got := Words(err); got != `field "faults.status" must be a number, not string` {
		t.Errorf("a type error through an embedded struct: %q", got)
	}
}

// selfNamed decodes as a fault's delay does: its errors begin with its own name.
type selfNamed struct{}

func (selfNamed) UnmarshalJSON(b []byte) error {
	switch string(b) {
	case `"soon"`:
		return errors.New(`delay: invalid duration "soon"`)
	case `"range"`:
		return errors.New(`delay.min: invalid duration "x"`)
	case `"word"`:
		return errors.New(`delay must be a duration string such as "750ms"`)
	case `"other"`:
		return errors.New(`delays are off`)
	}
	return nil
}

// encoding/json's type errors in words: a number a field cannot hold says what it can.
func TestTypeMessage(t *testing.T) {
	type doc struct {
		Count  int     `json:"count"`
		Since  uint64  `json:"since"`
		Small  int8    `json:"small"`
		Rate   float64 `json:"rate"`
		Name   string  `json:"name"`
		Dice   []byte  `json:"dice"`
		List   []int   `json:"list"`
		Nested struct {
			On bool `json:"on"`
		} `json:"nested"`
		Env   map[string]string              `json:"env"`
		Steps []struct{ Env map[string]int } `json:"steps"`
		Deep  map[string]map[string]uint8    `json:"deep"`
	}
	for _, tc := range []struct{ text, want string }{
		{`{"count":"1"}`, `field "count" must be a number, not string`},
		{`{"count":1.5}`, `field "count" must be an integer, not 1.5`},
		{`{"count":1e400}`, `field "count" must be an integer, not 1e400`},
		{`{"count":99999999999999999999}`, `field "count" must be an integer from -9223372036854775808 to 9223372036854775807, not 99999999999999999999`},
		{`{"since":-1}`, `field "since" must be an integer from 0 to 18446744073709551615, not -1`},
		{`{"since":"x"}`, `field "since" must be a number, not string`},
		{`{"small":300}`, `field "small" must be an integer from -128 to 127, not 300`},
		{`{"rate":1e400}`, `field "rate" must be a number from -1.8e308 to 1.8e308, not 1e400`},
		{`{"name":5}`, `field "name" must be a string, not number`},
		{`{"dice":5}`, `field "dice" must be a string, not number`},
		{`{"list":{}}`, `field "list" must be an array, not object`},
		{`{"nested":{"on":"yes"}}`, `field "nested.on" must be a boolean, not string`},
		// a map's value is named by its key, which encoding/json's error leaves out
		{`{"env":{"A":"1","B":5}}`, `key "B" in env must be a string, not number`},
		{`{"steps":[{"Env":{"a":1}},{"env":{"b":1.5}}]}`, `key "b" in steps.Env must be an integer, not 1.5`},
		{`{"deep":{"x":{"y":1,"z":300}}}`, `key "z" in deep.x must be an integer from 0 to 255, not 300`},
		{`[1]`, `the value must be an object, not array`},
		{`{"name":`, `not valid JSON: unexpected end of input`},
		{`{"name" 5}`, `not valid JSON: invalid character '5' after object key (at byte 9)`},
	} {
		if got := Words(Decode([]byte(tc.text), new(doc), "")); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.text, got, tc.want)
		}
	}
}

// A refused value that a later value of its key replaces is the key given twice, never
// encoding/json's words ("parsing time \"soon\" as …"): the decoded value RefusedValue
// walks holds the later one (a journal line edited by hand found it).
func TestDecodeRefusedValueReplacedIsAKeyTwice(t *testing.T) {
	type doc struct {
		At time.Time `json:"at"`
	}
	err := Decode([]byte(`{"at":"soon","at":"2026-11-01T10:00:00Z"}`), new(doc), "journal")
	if e, ok := apperr.As(err); !ok || !strings.Contains(e.Message, `key "at" in journal is given twice`) {
		t.Errorf("%v", err)
	}
}
