package state

import (
	"bytes"
	"reflect"
	"testing"
	"time"
)

func sampleDeployments() []Deployment {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 678901234, time.UTC)
	t1 := t0.Add(1500 * time.Millisecond)
	return []Deployment{
		{},
		{ID: "dpl_1", ProjectID: "prj_1", URL: "https://a-1.hostemu.localhost:4743", Target: "preview", Status: "queued", CreatedAt: t0,
			Timings: Timings{QueuedAt: &t0}},
		{ID: "dpl_2", ProjectID: "prj_1", URL: "u", Target: "production", Status: "error", CreatedAt: t1,
			Env: map[string]string{"Z": "1", "A": "<&>", "m\u2028": "\x00\x1f\"\\\b\f\n\r\t"}, Files: map[string]string{},
			Timings: Timings{QueuedAt: &t0, BuildingAt: &t1, ErrorAt: &t1}, Error: &ErrorInfo{Code: "build_failed", Message: "npm ERR! \xff\xfe bad <script>"},
			Logs: []LogLine{{CreatedAt: t0, Text: "Cloning…"}, {CreatedAt: t1, Text: "é\u2029\x7f"}}},
		{ID: "x", Logs: []LogLine{}, Env: map[string]string{}},
	}
}

func TestDeploymentJSONIsJSONMarshals(t *testing.T) {
	for i, d := range sampleDeployments() {
		got, _ := d.MarshalJSON()
		want, err := marshalDeploymentReflective(d)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("deployment %d:\n got %s\nwant %s", i, got, want)
		}
	}
}

// A field added to a type appendDeployment writes must be written there too.
func TestDeploymentFieldsAreAllWritten(t *testing.T) {
	for typ, n := range map[reflect.Type]int{
		reflect.TypeFor[Deployment](): 11, reflect.TypeFor[Timings](): 4, reflect.TypeFor[LogLine](): 2, reflect.TypeFor[ErrorInfo](): 2,
	} {
		if typ.NumField() != n {
			t.Errorf("%s has %d fields, appendDeployment writes %d: write the new one there (deployjson.go)", typ, typ.NumField(), n)
		}
	}
}

func FuzzDeploymentJSON(f *testing.F) {
	f.Add("dpl_1", "<b>&amp;</b>", "k", "\u2028v\xff", "log\nline\x00")
	f.Fuzz(func(t *testing.T, id, status, key, val, text string) {
		now := time.Unix(1700000000, 123456789).UTC()
		d := Deployment{ID: id, Status: status, CreatedAt: now, Env: map[string]string{key: val}, Files: map[string]string{val: key},
			Error: &ErrorInfo{Code: key, Message: text}, Logs: []LogLine{{CreatedAt: now, Text: text}}, Timings: Timings{ReadyAt: &now}}
		got, _ := d.MarshalJSON()
		want, _ := marshalDeploymentReflective(d)
		if !bytes.Equal(got, want) {
			t.Fatalf("\n got %s\nwant %s", got, want)
		}
	})
}

func BenchmarkDeploymentJSON(b *testing.B) {
	d := sampleDeployments()[2]
	for i := range 20 {
		d.Logs = append(d.Logs, LogLine{CreatedAt: time.Now(), Text: "Step " + string(rune('a'+i)) + ": running npm run build for the production bundle"})
	}
	b.Run("append", func(b *testing.B) {
		for b.Loop() {
			d.MarshalJSON()
		}
	})
	b.Run("reflective", func(b *testing.B) {
		for b.Loop() {
			marshalDeploymentReflective(d)
		}
	})
}
