package persist

import (
	"encoding/binary"
	"encoding/json"
	"hash/crc32"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/state"
)

func TestParseLogTornTail(t *testing.T) {
	var b []byte
	var ends []int
	for i := range 5 {
		var err error
		b, err = AppendRecord(b, uint64(10+i), &state.Change{File: strings.Repeat("a", 64)})
		if err != nil {
			t.Fatal(err)
		}
		ends = append(ends, len(b))
	}
	whole := parseLog(b, 0)
	if whole.torn || len(whole.changes) != 5 || whole.last != 14 || whole.good != int64(len(b)) {
		t.Fatalf("whole log: torn %v, %d changes, last %d, good %d", whole.torn, len(whole.changes), whole.last, whole.good)
	}
	// cut anywhere inside the last record: the four before it stay
	for cut := ends[3] + 1; cut < ends[4]; cut++ {
		lc := parseLog(b[:cut], 0)
		if !lc.torn || len(lc.changes) != 4 || lc.good != int64(ends[3]) {
			t.Fatalf("cut at %d: torn %v, %d changes, good %d", cut, lc.torn, len(lc.changes), lc.good)
		}
	}
	// a flipped byte in the third record's payload: it and what follows are dropped
	bad := slices.Clone(b)
	bad[ends[1]+recordHeader+3] ^= 1
	if lc := parseLog(bad, 0); !lc.torn || len(lc.changes) != 2 || lc.good != int64(ends[1]) {
		t.Fatalf("corrupt record: torn %v, %d changes, good %d", lc.torn, len(lc.changes), lc.good)
	}
	// what the snapshot holds is skipped, in order
	lc := parseLog(b, 12)
	if len(lc.changes) != 2 || lc.changes[0].Seq != 13 || lc.changes[1].Seq != 14 {
		t.Fatalf("after 12: %+v", lc.changes)
	}
}

func TestRemoveTemps(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.json")
	ours := []string{".state.json.123.tmp", ".state.json.log.456.tmp"}
	others := []string{".state.json.x.tmp", ".state.json.tmp", ".other.json.123.tmp", "state.json.123.tmp", ".state.json.log.tmp"}
	for _, n := range append(slices.Clone(ours), others...) {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	removed, err := removeTemps(path)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(removed)
	if !slices.Equal(removed, ours) {
		t.Errorf("removed %v, want %v", removed, ours)
	}
	for _, n := range others {
		if _, err := os.Stat(filepath.Join(dir, n)); err != nil {
			t.Errorf("%s: %v", n, err)
		}
	}
}

// A create's and a lifecycle step's change record is json.Marshal's, byte for byte.
func FuzzMarshalChange(f *testing.F) {
	f.Add("dpl_abc", "prj_a", "https://a-abc.hostemu.localhost", "queued", "<&>\u2028", "index.html", strings.Repeat("a", 64), "Building \xff", int64(1_790_000_000_123), true, true)
	f.Add("", "", "", "", "", "", "", "", int64(-5), false, false)
	f.Fuzz(func(t *testing.T, id, project, url, status, name, path, hash, line string, ms int64, withProject, withError bool) {
		at := time.UnixMilli(ms % (1 << 45)).UTC()
		d := state.Deployment{ID: id, ProjectID: project, URL: url, Target: "preview", Status: status, CreatedAt: at,
			Env: map[string]string{name: line}, Files: map[string]string{path: hash},
			Logs: []state.LogLine{{CreatedAt: at, Text: line}}}
		d.Timings.QueuedAt = &at
		if withError {
			d.Error = &state.ErrorInfo{Code: name, Message: line}
		}
		for _, c := range []state.Change{{Deployment: &d}, {Deployment: &d, Seq: 3}} {
			if withProject {
				c.Project = &state.Project{ID: project, Name: name, CreatedAt: at, Env: map[string]string{line: path}, ProductionDeploymentID: id}
			}
			want, err := json.Marshal(&c)
			if err != nil {
				t.Fatal(err)
			}
			got, err := appendChange(nil, &c)
			if err != nil || string(got) != string(want) {
				t.Fatalf("got %s, %v\nwant %s", got, err, want)
			}
		}
	})
}

// appendChange writes a deployment's change by hand only when every other field of
// state.Change is zero: a field added to Change and not to appendChange's list would be
// dropped from the log. Each field but the two written by hand, set beside a deployment,
// leaves the record json.Marshal's.
func TestMarshalChangeChecksEveryField(t *testing.T) {
	typ := reflect.TypeFor[state.Change]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		if f.Name == "Seq" || f.Name == "Deployment" || f.Name == "Project" {
			continue
		}
		c := state.Change{Deployment: &state.Deployment{ID: "dpl_a", Env: map[string]string{}, Files: map[string]string{}}}
		v := reflect.ValueOf(&c).Elem().Field(i)
		switch f.Type.Kind() {
		case reflect.Pointer:
			v.Set(reflect.New(f.Type.Elem()))
		case reflect.String:
			v.SetString("x")
		case reflect.Slice:
			v.Set(reflect.MakeSlice(f.Type, 1, 1))
		default:
			t.Fatalf("state.Change.%s: a %s this test cannot set; check appendChange's list of fields", f.Name, f.Type)
		}
		want, werr := json.Marshal(&c)
		got, err := appendChange(nil, &c)
		if (err == nil) != (werr == nil) || string(got) != string(want) {
			t.Errorf("state.Change.%s set: appendChange %s, %v; json.Marshal %s, %v (is it in appendChange's list?)", f.Name, got, err, want, werr)
		}
	}
}

// A record is written in place after what the buffer holds: the header (length, CRC
// over seq and payload, seq) and json.Marshal's payload, as the log has always held
// them, and the bytes before it untouched.
func TestAppendRecordInPlaceIsTheLogsFormat(t *testing.T) {
	at := time.UnixMilli(1_790_000_000_123).UTC()
	d := state.Deployment{ID: "dpl_a", ProjectID: "prj_a", Status: "ready", CreatedAt: at,
		Env: map[string]string{"K": "v"}, Files: map[string]string{"index.html": strings.Repeat("a", 64)}}
	changes := []state.Change{
		{Deployment: &d},
		{Deployment: &d, Project: &state.Project{ID: "prj_a", Name: "a", CreatedAt: at, ProductionDeploymentID: "dpl_a"}},
		{File: strings.Repeat("b", 64)},
	}
	prefix := []byte("earlier records")
	b := slices.Clone(prefix)
	for i := range changes {
		var err error
		if b, err = AppendRecord(b, uint64(7+i), &changes[i]); err != nil {
			t.Fatal(err)
		}
	}
	if !strings.HasPrefix(string(b), string(prefix)) {
		t.Fatalf("the bytes before the records changed: %q", b[:len(prefix)])
	}
	off := len(prefix)
	for i := range changes {
		payload, err := json.Marshal(&changes[i])
		if err != nil {
			t.Fatal(err)
		}
		var h [recordHeader]byte
		binary.LittleEndian.PutUint32(h[0:], uint32(len(payload)))
		binary.LittleEndian.PutUint64(h[8:], uint64(7+i))
		binary.LittleEndian.PutUint32(h[4:], crc32.Update(crc32.Checksum(h[8:], crcTable), crcTable, payload))
		want := append(h[:], payload...)
		if got := b[off:min(off+len(want), len(b))]; string(got) != string(want) {
			t.Fatalf("record %d: got %q\nwant %q", i, got, want)
		}
		off += len(want)
	}
	if off != len(b) {
		t.Fatalf("%d bytes after the records", len(b)-off)
	}
	if lc := parseLog(b[len(prefix):], 0); lc.torn || len(lc.changes) != len(changes) || lc.last != 9 {
		t.Fatalf("parsed: torn %v, %d changes, last %d", lc.torn, len(lc.changes), lc.last)
	}
}

// A --state file's malformed value is named by its field, never in encoding/json's
// words ("cannot unmarshal number into Go struct field Project.projects.id of type
// string", "cannot unmarshal number -1 into Go value of type uint64").
func TestSnapshotFileNamesAMalformedValue(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct{ doc, want string }{
		{`{"projects":[{"id":5}]}`, `field "projects.id" must be a string, not number`},
		{`{"log_seq":"x"}`, `field "log_seq" must be a number, not string`},
		{`{"log_seq":-1}`, `field "log_seq" must be an integer from 0 to 18446744073709551615, not -1`},
		{`{"cipher":{"master_keys":[{"id":"m","key":"!!"}]}}`, `key "key" in cipher.master_keys: "!!" is not base64`},
	} {
		path := filepath.Join(dir, "state.json")
		if err := os.WriteFile(path, []byte(tc.doc), 0o600); err != nil {
			t.Fatal(err)
		}
		_, _, err := readSnapshotFile(path)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "Go ") {
			t.Errorf("%s: %v, want %q", tc.doc, err, tc.want)
		}
	}
}
