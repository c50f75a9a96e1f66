package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/apperr"
	"github.com/hostemu/hostemu/emulator/internal/state"
)

func sampleSnapshot() state.Snapshot {
	at := time.Date(2026, 11, 21, 12, 0, 3, 800e6, time.UTC)
	return state.Snapshot{
		Tokens: []state.Token{{Token: "hostemu-read", Scope: "read"}, {Token: "<&>", Scope: "admin"}},
		Policy: state.Policy{DomainWriteScope: "admin"},
		Cipher: state.Cipher{APIKeys: []string{"k"}, MasterKeys: []state.MasterKey{{ID: "m1", Key: bytes.Repeat([]byte{7}, 32)}}},
		Projects: []state.Project{
			{ID: "prj_1", Name: "shop \"é\"", CreatedAt: at, Env: map[string]string{"B": "2", "A": "1"}},
			{ID: "prj_2", Name: "blog", CreatedAt: at},
		},
		Deployments: []state.Deployment{{ID: "dpl_1", ProjectID: "prj_1", Status: "ready", CreatedAt: at}},
		Files:       []string{strings.Repeat("a", 64)},
	}
}

// writeSnapshot writes what json.Marshal would, without building it whole.
func TestWriteSnapshotMatchesMarshal(t *testing.T) {
	t.Parallel()
	for name, snap := range map[string]state.Snapshot{
		"empty":  {},
		"sample": sampleSnapshot(),
		"empty slices": {Tokens: []state.Token{}, Projects: []state.Project{}, Deployments: []state.Deployment{},
			Domains: []state.Domain{}, Files: []string{}, Detaching: []state.Detachment{}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			want, err := json.Marshal(snap)
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			if err := state.WriteSnapshot(&b, &snap, ""); err != nil {
				t.Fatal(err)
			}
			if b.String() != string(want) {
				t.Errorf("got  %s\nwant %s", b.String(), want)
			}
		})
	}
}

func TestWriteSnapshotStopsOnError(t *testing.T) {
	t.Parallel()
	snap := sampleSnapshot()
	for range 1000 {
		snap.Deployments = append(snap.Deployments, snap.Deployments[0])
	}
	w := &failingWriter{left: 5000}
	if err := state.WriteSnapshot(w, &snap, ""); !errors.Is(err, io.ErrClosedPipe) {
		t.Fatalf("writeSnapshot = %v", err)
	}
	if w.calls > w.failedAt+1 {
		t.Errorf("%d writes after the first failure", w.calls-w.failedAt-1)
	}
}

type failingWriter struct{ left, calls, failedAt int }

func (w *failingWriter) Write(p []byte) (int, error) {
	w.calls++
	if len(p) > w.left {
		if w.failedAt == 0 {
			w.failedAt = w.calls
		}
		return 0, io.ErrClosedPipe
	}
	w.left -= len(p)
	return len(p), nil
}

func TestReadSnapshotRoundTrip(t *testing.T) {
	t.Parallel()
	want := sampleSnapshot()
	text, _ := json.Marshal(want)
	for name, body := range map[string]string{
		"compact":       string(text),
		"indented":      indent(t, text),
		"spaces around": " \n\t" + string(text) + "\r\n  ",
		"key case":      strings.Replace(string(text), `"deployments"`, `"Deployments"`, 1),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, err := readSnapshot(strings.NewReader(body), 1<<20, chargeAll)
			if err != nil {
				t.Fatal(err)
			}
			var viaUnmarshal state.Snapshot
			if err := json.Unmarshal([]byte(body), &viaUnmarshal); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(exportedFields(got), viaUnmarshal) {
				t.Errorf("readSnapshot and json.Unmarshal differ:\n%+v\n%+v", got, viaUnmarshal)
			}
		})
	}
}

// A state with a key it does not have is refused (the control API is strict): before,
// such keys were skipped, and a typo ("deploymnets") made an empty world.
func TestReadSnapshotRefusesUnknownKeys(t *testing.T) {
	t.Parallel()
	text, _ := json.Marshal(sampleSnapshot())
	_, err := readSnapshot(strings.NewReader(`{"extra":{"a":[1,{"b":null}]},`+string(text[1:])), 1<<20, chargeAll)
	if e, ok := apperr.As(err); !ok || e.Code != apperr.InvalidRequest || !strings.Contains(err.Error(), `unknown key "extra" in the state`) {
		t.Fatalf("an unknown key: %v", err)
	}
}

func indent(t *testing.T, b []byte) string {
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "    "); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

func TestReadSnapshotRefuses(t *testing.T) {
	t.Parallel()
	text, _ := json.Marshal(sampleSnapshot())
	tests := []struct {
		name, body string
		max        int64
		code       string // "" wants errStateTooLarge
		inMessage  string
	}{
		{"empty", "", 1 << 20, "invalid_request", "empty"},
		{"whitespace", strings.Repeat(" ", 4096), 1 << 20, "invalid_request", "empty"},
		{"array", `[]`, 1 << 20, "invalid_request", "JSON object"},
		{"string", `"x"`, 1 << 20, "invalid_request", "JSON object"},
		{"leading garbage", `x{}`, 1 << 20, "invalid_json", ""},
		{"trailing garbage", string(text) + `x`, 1 << 20, "invalid_json", "after the JSON value"},
		{"two objects", `{}{}`, 1 << 20, "invalid_json", "after the JSON value"},
		{"cut", string(text[:len(text)/2]), 1 << 20, "invalid_json", ""},
		{"wrong type", `{"deployments":{}}`, 1 << 20, "invalid_request", `"deployments"`},
		{"wrong element", `{"deployments":[{"id":5}]}`, 1 << 20, "invalid_request", `deployments.id`},
		{"wrong policy", `{"policy":[]}`, 1 << 20, "invalid_request", `policy`},
		{"over the limit", string(text), int64(len(text)) - 1, "", ""},
		{"spaces over the limit", `{` + strings.Repeat(" ", 100) + `}`, 50, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := readSnapshot(strings.NewReader(tt.body), tt.max, chargeAll)
			if tt.code == "" {
				if !errors.Is(err, errStateTooLarge) {
					t.Fatalf("err = %v, want errStateTooLarge", err)
				}
				return
			}
			ae, ok := apperr.As(err)
			if !ok || string(ae.Code) != tt.code || !strings.Contains(ae.Message, tt.inMessage) {
				t.Fatalf("err = %v, want %s naming %q", err, tt.code, tt.inMessage)
			}
		})
	}
	if _, err := readSnapshot(strings.NewReader(string(text)), int64(len(text)), chargeAll); err != nil {
		t.Errorf("a body of exactly the limit: %v", err)
	}
}

// A body of whitespace does not fill the decoder's buffer.
func TestReadSnapshotSqueezesWhitespace(t *testing.T) {
	var got state.Snapshot
	allocs := testing.AllocsPerRun(1, func() {
		body := io.MultiReader(strings.NewReader(`{"files":`), &repeatReader{b: ' ', n: 64 << 20}, strings.NewReader(`["a  b"]}`))
		var err error
		if got, err = readSnapshot(body, 128<<20, chargeAll); err != nil {
			t.Fatal(err)
		}
	})
	if len(got.Files) != 1 || got.Files[0] != "a  b" {
		t.Errorf("files = %q; spaces inside a string must stay", got.Files)
	}
	if allocs > 100 {
		t.Errorf("%v allocations for 64 MiB of spaces", allocs)
	}
}

type repeatReader struct {
	b byte
	n int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, io.EOF
	}
	n := min(len(p), r.n)
	for i := range n {
		p[i] = r.b
	}
	r.n -= n
	return n, nil
}

// chargeAll accepts every charge: the budget is not what these tests test.
func chargeAll(int64) bool { return true }

// The decoded state is charged element by element, and a refusal stops the decoding
// at once with errBodyBudget.
func TestReadSnapshotChargesWhatItDecodes(t *testing.T) {
	body := `{"projects":[{"id":"prj_a","name":"a","created_at":"2026-01-01T00:00:00Z"}],"deployments":[` +
		strings.Repeat(`{"id":"dpl_x","project_id":"prj_a","url":"https://a-x.hostemu.localhost","status":"ready","target":"preview","created_at":"2026-01-01T00:00:00Z"},`, 99) +
		`{"id":"dpl_x","project_id":"prj_a","url":"https://a-x.hostemu.localhost","status":"ready","target":"preview","created_at":"2026-01-01T00:00:00Z"}]}`
	var charged int64
	snap, err := readSnapshot(strings.NewReader(body), 1<<20, func(n int64) bool { charged += n; return true })
	if err != nil || len(snap.Deployments) != 100 {
		t.Fatalf("%v, %d deployments", err, len(snap.Deployments))
	}
	if w := snap.Weight(); charged < w {
		t.Fatalf("charged %d, less than the state's weight %d", charged, w)
	}
	budget := charged / 2
	_, err = readSnapshot(strings.NewReader(body), 1<<20, func(n int64) bool { budget -= n; return budget >= 0 })
	if !errors.Is(err, errBodyBudget) {
		t.Fatalf("over the budget: %v", err)
	}
}

// exportedFields is s with only its exported fields: what a state document says. The
// reader leaves an unexported verdict on the deployments' files for Check beside them,
// which a snapshot decoded by encoding/json does not have.
func exportedFields(s state.Snapshot) state.Snapshot {
	var out state.Snapshot
	from, to := reflect.ValueOf(s), reflect.ValueOf(&out).Elem()
	for i := range from.NumField() {
		if from.Type().Field(i).IsExported() {
			to.Field(i).Set(from.Field(i))
		}
	}
	return out
}
