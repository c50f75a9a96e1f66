package httpapi

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/hostemu/hostemu/emulator/internal/apperr"
	"github.com/hostemu/hostemu/emulator/internal/fault"
	"github.com/hostemu/hostemu/emulator/internal/namespace"
	"github.com/hostemu/hostemu/emulator/internal/strictjson"
	"github.com/hostemu/hostemu/emulator/internal/world"
)

// FuzzUnknownKeys: whatever the body, the strict check never panics; it agrees with
// encoding/json's own DisallowUnknownFields (what that accepts, it accepts), and a key it
// names is one the body has.
func FuzzUnknownKeys(f *testing.F) {
	for _, s := range []string{
		`{"match":{"paht":"/v1/deployments"},"status":503}`, `{"status":503,"time":1}`, `{"Match":{"METHOD":"GET"},"status":500}`,
		`{"delay":{"min":"1s","max":"2s"}}`, `{"sed":3}`, `{"requests":{"metod":"GET"},"count":1}`, `[]`, `null`, `{"match":[1,2]}`,
		`{"fixtures":{"anything":{"goes":1}}}`, `{"a":{"b":{"c":{}}}}`,
	} {
		f.Add([]byte(s))
	}
	types := []reflect.Type{reflect.TypeFor[*fault.Spec](), reflect.TypeFor[*namespace.Spec](), reflect.TypeFor[*world.AwaitRequest](), reflect.TypeFor[*world.ClockChange]()}
	f.Fuzz(func(t *testing.T, b []byte) {
		var v any
		if json.Unmarshal(b, &v) != nil {
			return
		}
		for _, typ := range types {
			err := strictjson.UnknownKeys(v, typ, "")
			dec := json.NewDecoder(bytes.NewReader(b))
			dec.DisallowUnknownFields()
			dst := reflect.New(typ.Elem()).Interface()
			if derr := dec.Decode(dst); derr == nil && err != nil {
				t.Fatalf("%s: encoding/json accepts %q, the strict check says %v", typ, b, err)
			}
			if e, ok := apperr.As(err); ok {
				quoted, qerr := strconv.QuotedPrefix(strings.TrimPrefix(e.Message, "unknown key "))
				key, _ := strconv.Unquote(quoted)
				if qerr == nil && utf8.Valid(b) && !bytes.Contains(b, []byte(key)) && !strings.Contains(string(b), `\`) {
					t.Fatalf("%s: named key %q is not in %q", typ, key, b)
				}
			}
		}
	})
}

// strictBodies make a value of each type of body decodeStrict reads: the types
// FuzzStrictKeysFastIsSlow holds to the same answers. TestStrictBodiesAreEveryCallers
// keeps the list whole: a new caller's type missing here fails it.
var strictBodies = []func() any{
	func() any { return new(world.ClockChange) }, func() any { return new(advanceRequest) }, func() any { return new(world.AwaitRequest) },
	func() any { return new(fault.Spec) }, func() any { return new(mintRequest) }, func() any { return new(world.ForcedStatus) },
	func() any { return new(useScenarioRequest) }, func() any { return new(namespace.Spec) }, func() any { return new(failureRequest) },
}

// FuzzStrictKeysFastIsSlow: the body decodeStrict parses once answers as the parses of
// before (the strict walks, then the decoder) do, for the type of every body it reads
// (strictBodies): the same error, or the same value.
func FuzzStrictKeysFastIsSlow(f *testing.F) {
	for _, s := range []string{
		`{"match":{"path":"/v1/deployments","method":"GET"},"status":503,"times":2}`, `{"match":{"paht":"/x"},"status":503}`,
		`{"status":503,"status":500}`, `{"status":503,"STATUS":500}`, `{"match":{"query":{"a":"1","A":"2"}},"status":503}`,
		`{"delay":"2s","status":200}`, `{"requests":{"method":"GET"},"count":1}`, `{"mode":"manual"}`, `{"by":"1h"}`, `{"scope":"read"}`,
		`{"status":"error","error":{"code":"build_failed"}}`, `{"name":"flaky"}`, `{"failure":"it broke"}`, `{"scenario":"flaky","fixtures":{"a":1}}`,
		`{"status":"x"} {}`, `{"status":1}`, `{"scope":1,"unknown":2}`, `[]`, `null`, `{"\u0073cope":"read"}`, `{"scope":"read","scope":"admin"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, mk := range strictBodies {
			fast, slow := mk(), mk()
			ferr, serr := unmarshalStrictKeys(b, fast), strictKeysSlow(b, slow)
			if (ferr == nil) != (serr == nil) || (ferr != nil && ferr.Error() != serr.Error()) {
				t.Fatalf("%T %q: %v, before %v", fast, b, ferr, serr)
			}
			if ferr == nil && !reflect.DeepEqual(fast, slow) {
				t.Fatalf("%T %q:\n got %#v\nwant %#v", fast, b, fast, slow)
			}
		}
	})
}

// A body nested deeper than anything decodes is refused as before, at once: the scan
// that answers first for the common body does not follow it down (8 MiB of '[', under
// a namespace's limit, overflowed its stack and killed the process).
func TestStrictKeysOfDeepNesting(t *testing.T) {
	b := bytes.Repeat([]byte("["), 8<<20)
	err, want := unmarshalStrictKeys(b, new(namespace.Spec)), strictKeysSlow(b, new(namespace.Spec))
	if err == nil || want == nil || err.Error() != want.Error() {
		t.Fatalf("%v, before %v", err, want)
	}
}

// A number beyond float64 (1e400; a fault's body matcher may name one) does not hide an
// unknown key, a field in two cases or a key given twice: the walks read numbers as
// written, where json.Unmarshal into an any refused the body and they were skipped, the
// decoder then keeping the last key and ignoring the unknown one.
func TestStrictKeysBesideAHugeNumber(t *testing.T) {
	for _, tc := range []struct {
		body string
		dst  any
		want string
	}{
		{`{"fixtures":{"a":1e400},"scenaro":"flaky"}`, new(namespace.Spec), `unknown key "scenaro" (did you mean "scenario"?)`},
		{`{"match":{"body":{"n":1e400},"paht":"/x"},"status":503}`, new(fault.Spec), `unknown key "paht" in match (did you mean "path"?)`},
		{`{"match":{"body":{"n":1e400}},"status":503,"status":500}`, new(fault.Spec), `key "status" is given twice: give it once`},
		{`{"match":{"body":{"n":1e400}},"status":503,"STATUS":500}`, new(fault.Spec), `keys "STATUS" and "status" both set "status": give it once`},
	} {
		err := unmarshalStrictKeys([]byte(tc.body), tc.dst)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.body, err, tc.want)
		}
	}
	var spec fault.Spec
	if err := unmarshalStrictKeys([]byte(`{"match":{"body":{"n":1e400}},"status":503}`), &spec); err != nil {
		t.Errorf("a body matcher of 1e400 alone: %v", err)
	}
}
