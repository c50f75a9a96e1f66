package fault_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/hostemu/hostemu/emulator/internal/fault"
)

func FuzzSpecJSON(f *testing.F) {
	f.Add([]byte(`{"match":{"method":"POST","path":"/v1/deployments*","service":"hosting","scope":"deploy"},"status":503,"code":"service_unavailable","message":"injected","delay":"750ms","times":1,"probability":1.0}`))
	f.Add([]byte(`{"delay":{"min":"100ms","max":"2s"},"probability":0.5}`))
	f.Add([]byte(`{"rate_limit":true,"drop":true}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var s fault.Spec
		if err := json.Unmarshal(data, &s); err != nil {
			return
		}
		if err := s.Validate(); err != nil {
			return
		}
		// A valid spec survives the round trip the control API makes when it lists it.
		out, err := json.Marshal(s)
		if err != nil {
			t.Fatalf("Marshal(%+v): %v", s, err)
		}
		var back fault.Spec
		if err := json.Unmarshal(out, &back); err != nil {
			t.Fatalf("Unmarshal(%s): %v", out, err)
		}
		if err := back.Validate(); err != nil {
			t.Fatalf("%s no longer validates: %v", out, err)
		}
		// an empty map or list is written as absent, which means the same: the spec
		// read back writes the same JSON
		if again, _ := json.Marshal(back); !bytes.Equal(again, out) {
			t.Fatalf("round trip changed the spec:\n%s\n%s", out, again)
		}
		if s.Match.Query == nil && s.Then == nil && s.Headers == nil && s.Match.Headers == nil && s.Match.Body == nil && !reflect.DeepEqual(s, back) {
			t.Fatalf("round trip changed the spec:\n%+v\n%+v", s, back)
		}
	})
}
