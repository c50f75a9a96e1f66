package bundle

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/coverage"
)

// repack is bundle tgz with members set (added or replaced).
func repack(t *testing.T, tgz []byte, set map[string]string) []byte {
	t.Helper()
	gz, err := gzip.NewReader(bytes.NewReader(tgz))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	var out bytes.Buffer
	zw := gzip.NewWriter(&out)
	tw := tar.NewWriter(zw)
	put := func(name string, data []byte) {
		tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(data)), ModTime: time.Unix(0, 0), Typeflag: tar.TypeReg})
		tw.Write(data)
	}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(tr)
		if _, ok := set[h.Name]; ok {
			continue
		}
		put(h.Name, data)
	}
	for name, data := range set {
		put(name, []byte(data))
	}
	tw.Close()
	zw.Close()
	return out.Bytes()
}

// coverage.json and failure.txt (#33) are written when there is something to write,
// read back, and checked as every member is.
func TestCoverageAndFailureMembers(t *testing.T) {
	c := coverage.NewCounter(nil)
	c.Answer("GET", "/v1/projects", "/v1/projects", 200, "")
	r := c.Report()
	now := time.Date(2026, 1, 1, 0, 0, 6, 0, time.UTC)
	b := &Bundle{Manifest: Manifest{CreatedAt: now, Scenario: "default", Clock: Clock{Mode: "manual", Now: now}, RateLimits: "on"},
		Scenarios: map[string][]byte{"default": []byte("name: default\n")}, Coverage: &r, Failure: "TestX failed: want 200"}
	var buf bytes.Buffer
	if err := Write(&buf, b, DefaultFilesBytes); err != nil {
		t.Fatal(err)
	}
	got, err := Read(bytes.NewReader(buf.Bytes()), ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Failure != b.Failure || got.Coverage == nil || got.Coverage.Totals != r.Totals {
		t.Fatalf("read back failure %q, coverage %+v", got.Failure, got.Coverage)
	}
	// a bundle without them (older ones) reads with none
	old, err := Read(bytes.NewReader(small(t)), ReadOptions{})
	if err != nil || old.Coverage != nil || old.Failure != "" {
		t.Fatalf("a bundle without them: %v, %v, %q", err, old.Coverage, old.Failure)
	}
	for name, tc := range map[string]struct{ set map[string]string }{
		"seen -1 is negative": {map[string]string{CoverageName: `{"operations":[{"method":"GET","path":"/v1/projects","seen":-1,"responses":[]}],"transitions":[],"faults":[],"totals":{"operations":{"seen":0,"total":0,"percent":0},"responses":{"seen":0,"total":0,"percent":0},"transitions":{"seen":0,"total":0,"percent":0},"percent":0}}`}},
		`unknown key "operatoins" (did you mean "operations"?)`: {map[string]string{CoverageName: `{"operatoins":[]}`}},
		"failure.txt is not UTF-8":                              {map[string]string{FailureName: "\xff\xfe"}},
		"failure.txt is 65537 bytes":                            {map[string]string{FailureName: strings.Repeat("x", MaxFailure+1)}},
	} {
		_, err := Read(bytes.NewReader(repack(t, buf.Bytes(), tc.set)), ReadOptions{})
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("want an error naming %q, got %v", name, err)
		}
	}
}

// A member's malformed value is named by its key and place, in strictjson's words, with
// no JSONError given too (hostemu replay reads so): never encoding/json's.
func TestMembersNameAMalformedValue(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, text, want string }{
		{StateName, `{"projects":[{"id":5}]}`, `state.json: field "projects.id" must be a string, not number`},
		{"lifecycles.json", `{"crt:a.test":"soon"}`, `lifecycles.json: key "crt:a.test": "soon" is not an RFC 3339 time`},
		{"faults.json", `{"faults":[{"id":"flt_1","source":"api","match":{},"status":"503"}],"scenario_faults":[],"next_id":2}`, `faults.json: field "faults.status" must be a number, not string`},
	} {
		_, err := Read(bytes.NewReader(repack(t, small(t), map[string]string{tc.name: tc.text})), ReadOptions{})
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "Go ") {
			t.Errorf("%s %s: %v, want %q", tc.name, tc.text, err, tc.want)
		}
	}
}
