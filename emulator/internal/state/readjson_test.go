package state

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/apperr"
)

func TestSqueezer(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{`{ "a" :  [1,  2] }`, `{ "a" : [1, 2] }`},
		{"{\n\t\"a  b\":\"c\\\"  d\"  }", `{ "a  b":"c\"  d" }`},
		{`"\\"  "x"`, `"\\" "x"`},
		{`  `, ` `},
	}
	for _, tt := range tests {
		got, err := io.ReadAll(&squeezer{r: strings.NewReader(tt.in)})
		if err != nil || string(got) != tt.want {
			t.Errorf("squeeze(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

// The --state file's log_seq reaches ReadOptions.Extra; a key neither it nor the state
// has is refused, named, with the closest known one.
func TestReadSnapshotOffersExtraKeys(t *testing.T) {
	var seq uint64
	extra := func(key string, value []byte) (bool, error) {
		if key != "log_seq" {
			return false, nil
		}
		return true, json.Unmarshal(value, &seq)
	}
	snap, err := ReadSnapshot(strings.NewReader(`{"log_seq":42,"tokens":[{"token":"t","scope":"read"}]}`), ReadOptions{Extra: extra})
	if err != nil || seq != 42 || len(snap.Tokens) != 1 || snap.Tokens[0].Token != "t" {
		t.Fatalf("seq %d, tokens %+v, err %v", seq, snap.Tokens, err)
	}
	_, err = ReadSnapshot(strings.NewReader(`{"log_seq":42,"unknown":{"a":[1]},"tokens":[]}`), ReadOptions{Extra: extra})
	if e, ok := apperr.As(err); !ok || e.Code != apperr.InvalidRequest || !strings.Contains(err.Error(), `unknown key "unknown"`) {
		t.Fatalf("an unknown key beside log_seq: %v", err)
	}
}

// A typo never passes: an unknown key, at the top or in any element, is 400 naming it
// and the closest known one (a state document is the control API's input).
func TestReadSnapshotRefusesUnknownKeys(t *testing.T) {
	for _, tc := range []struct{ doc, want string }{
		{`{"deploymnets":[]}`, `unknown key "deploymnets" in the state (did you mean "deployments"?)`},
		{`{"tokens":[{"token":"t","scop":"read"}]}`, `unknown key "scop" in tokens (did you mean "scope"?)`},
		{`{"deployments":[{"id":"dpl_1","staus":"ready"}]}`, `unknown key "staus" in deployments (did you mean "status"?)`},
		{`{"deployments":[{"id":"dpl_1","timings":{"redy_at":null}}]}`, `unknown key "redy_at" in deployments.timings (did you mean "ready_at"?)`},
		{`{"policy":{"domain_write_scop":"admin"}}`, `unknown key "domain_write_scop" in policy (did you mean "domain_write_scope"?)`},
		{`{"x":` + strings.Repeat("[", 20_000) + `}`, `unknown key "x" in the state`}, // refused before its value is read
		{`{"tokens":[{"token":"t","scope":"read"}],"projects":[],"tokens":[]}`, `key "tokens" in the state is given twice: give it once`},
		{`{"tokens":[],"Tokens":[]}`, `key "Tokens" in the state is given twice`},
		// inside an element too
		{`{"tokens":[{"token":"t","scope":"admin","scope":"read"}]}`, `key "scope" in tokens is given twice: give it once`},
		{`{"projects":[{"id":"prj_1","name":"p","env":{"A":"1","A":"2"}}]}`, `key "A" in projects.env is given twice`},
		{`{"domains":[{"hostname":"a.test","hostname":"b.test"}]}`, `key "hostname" in domains is given twice`},
		{`{"policy":{"domain_write_scope":"admin","domain_write_scope":"deploy"}}`, `key "domain_write_scope" in policy is given twice`},
		{`{"cipher":{"api_keys":[],"api_keys":["k"]}}`, `key "api_keys" in cipher is given twice`},
		// a deployment's, which its own reader gives up on for the strict decoder to refuse
		{`{"deployments":[{"id":"dpl_1","env":{"A":"1","A":"2"}}]}`, `key "A" in deployments.env is given twice: give it once`},
		{`{"deployments":[{"id":"dpl_1","files":{"a":"1","b":"2","a":"1"}}]}`, `key "a" in deployments.files is given twice`},
		{`{"deployments":[{"id":"dpl_1","env":{"A":"1","\u0041":"2"}}]}`, `key "A" in deployments.env is given twice`},
		{`{"deployments":[{"id":"dpl_1","url":"u","id":"dpl_2"}]}`, `key "id" in deployments is given twice`},
		{`{"deployments":[{"id":"dpl_1","env":{},"env":{"A":"1"}}]}`, `key "env" in deployments is given twice`},
		{`{"deployments":[{"id":"dpl_1","timings":{"ready_at":null,"ready_at":null}}]}`, `key "ready_at" in deployments.timings is given twice`},
		{`{"deployments":[{"id":"dpl_1","logs":[{"text":"a","text":"b"}]}]}`, `key "text" in deployments.logs is given twice`},
		{`{"deployments":[{"id":"dpl_1","error":{"code":"a","code":"b"}}]}`, `key "code" in deployments.error is given twice`},
		// an unknown key in the value a later one replaces: the key twice, not encoding/json's
		// bare "json: unknown field" (FuzzReadSnapshot found it)
		{`{"deployments":[{"timings":{"x":""},"timings":{}}]}`, `key "timings" in deployments is given twice: give it once`},
		{`{"deployments":[{"logs":[{"x":1}],"logs":[]}]}`, `key "logs" in deployments is given twice: give it once`},
		{`{"deployments":[{"id":"dpl_1","env":{"A":"` + strings.Repeat("x", 20<<10) + `","A":"2"}}]}`, `key "A" in deployments.env is given twice`}, // longer than inPlaceRoom
		// one field in two cases, as the control API words it
		{`{"tokens":[{"token":"t","scope":"admin","SCOPE":"read"}]}`, `keys "SCOPE" and "scope" in tokens both set "scope": give it once`},
		{`{"deployments":[{"id":"dpl_1","ID":"dpl_2"}]}`, `keys "ID" and "id" in deployments both set "id"`},
		{`{"deployments":[{"id":"dpl_1","timings":{"ready_at":null,"Ready_At":null}}]}`, `keys "Ready_At" and "ready_at" in deployments.timings both set "ready_at"`},
		{`{"policy":{"domain_write_scope":"admin","DOMAIN_WRITE_SCOPE":"deploy"}}`, `keys "DOMAIN_WRITE_SCOPE" and "domain_write_scope" in policy both set`},
	} {
		_, err := ReadSnapshot(strings.NewReader(tc.doc), ReadOptions{})
		if e, ok := apperr.As(err); !ok || e.Code != apperr.InvalidRequest || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%.60s: %v; want invalid_request %q", tc.doc, err, tc.want)
		}
	}
	// keys in another case are encoding/json's to match, as they always were (once
	// each); a map's keys that differ in case are two keys
	snap, err := ReadSnapshot(strings.NewReader(`{"Tokens":[{"Token":"t","SCOPE":"read"}],"projects":[{"id":"prj_1","env":{"A":"1","a":"2"}}]}`), ReadOptions{})
	if err != nil || len(snap.Tokens) != 1 || snap.Tokens[0].Scope != ScopeRead || len(snap.Projects[0].Env) != 2 {
		t.Fatalf("%+v, %+v, %v", snap.Tokens, snap.Projects, err)
	}
}

// errorKind is what a caller can tell of a ReadSnapshot error: the catalogue's code, or
// which of encoding/json's errors it is.
var mapValueType = regexp.MustCompile(`^key "(?:[^"\\]|\\.)*" in (\S+) must be `)

func errorKind(err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case err == nil:
		return "none"
	case errors.As(err, &syn), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return "syntax"
	case errors.As(err, &typ):
		return "type " + typ.Field
	}
	if e, ok := apperr.As(err); ok {
		if strings.Contains(e.Message, " is not an RFC 3339 time like ") || strings.Contains(e.Message, " is not base64 ") {
			return "field" // named by strictjson.RefusedValue, where the oracle has the decoder's words
		}
		if m := mapValueType.FindStringSubmatch(e.Message); m != nil {
			return "type " + m[1] // a map's value of the wrong type, named by its key (strictjson.Explain)
		}
		return string(e.Code)
	}
	return "field" // a value's own decoder refused it (a time)
}

// ReadSnapshot reads every document as encoding/json's Decoder did: the same snapshot,
// or the same kind of error.
func FuzzReadSnapshot(f *testing.F) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	snap := Snapshot{
		Tokens:      []Token{{Token: "t", Scope: ScopeRead}},
		Policy:      Policy{DomainWriteScope: ScopeAdmin},
		Cipher:      Cipher{APIKeys: []string{"k"}, MasterKeys: []MasterKey{{ID: "m", Key: []byte("0123456789abcdef0123456789abcdef")}}},
		Projects:    []Project{{ID: "prj_1", Name: "p", CreatedAt: t0, Env: map[string]string{"A": "1"}}},
		Deployments: sampleDeployments(),
		Domains:     []Domain{{Hostname: "a.example", ProjectID: "prj_1", Status: StatusActive, CreatedAt: t0, TLS: TLS{Status: TLSIssued, ExpiresAt: &t0}}},
		Files:       []string{"abc"},
		Detaching:   []Detachment{{Hostname: "b.example", DeleteAt: t0, DetachAt: t0}},
		Uploads:     []Upload{{Digest: "abc", Content: []byte("hi")}},
	}
	var buf bytes.Buffer
	if err := WriteSnapshot(&buf, &snap, ""); err != nil {
		f.Fatal(err)
	}
	doc := buf.String()
	f.Add(doc)
	indented, _ := json.MarshalIndent(json.RawMessage(doc), "", "  ")
	f.Add(string(indented))
	for _, s := range []string{
		``, ` `, `[]`, `"x"`, `x`, `{`, `{}`, `{} x`, `{}{}`, `{"tokens":null}`, `{"tokens":5}`, `{"tokens":{}}`, `{"tokens":nul}`,
		`{"deployments":[1]}`, `{"deployments":[{"id":1}]}`, `{"deployments":[{"ID":"x","Logs":[]}]}`, `{"deployments":[{},]}`,
		`{"deployments":[{}}`, `{"x":[1,{"a":[true,null]}],"DEPLOYMENTS":[]}`, `{"x":{"a" 1}}`, `{"x":[1,]}`, `{"x":{,}}`,
		`{"a":1,}`, `{"a" 1}`, `{1:2}`, `{"policy":{"domain_write_scope":"deploy"}}`, `{"policy":[]}`, `{"tok\u0065ns":[]}`,
		`{"deployments":[{"created_at":"2026-13-01T00:00:00Z"}]}`, `{"projects":[{"created_at":"x"}]}`, "{\"a\n\":1}", `{"a":"\x"}`,
		`{"deployments":[{"id":"a"} {"id":"b"}]}`, `{"deployments":[{"id":"a"}]`, `{"files":["a",1]}`, `{"files":[-]}`,
		`{"deployments":[{"id":"a","env":{"A":"1","A":"2"}}]}`, `{"tokens":[{"scope":"read","SCOPE":"admin"}]}`, `{"projects":[{"env":{"A":"1","a":"2"}}]}`,
		`{"cipher":{"master_keys":[{"id":"m","key":"!!"}]}}`, `{"uploads":[{"digest":"abc","content":"!!"}]}`,
		`{"projects":[{"env":{"A":5}}]}`, `{"deployments":[{"id":"d","env":{"A":5}}]}`, `{"deployments":[{"id":"d","files":{"a":5}}]}`,
		`{"deployments":[{"id":"d","env":{"A":"1","B":[]}}]}`, `{"projects":[{"env":5}]}`,
	} {
		f.Add(s)
	}
	// a deployment longer than the room read in place (inPlaceRoom), and strings with
	// what ends a plain run at every place in an eight-byte word
	long := sampleDeployments()[2]
	for range 300 {
		long.Logs = append(long.Logs, LogLine{CreatedAt: t0, Text: "a line of a long build log, \"quoted\", é"})
	}
	longText, _ := long.MarshalJSON()
	f.Add(`{"deployments":[` + string(longText) + `,` + string(longText) + `]}`)
	for i := range 9 {
		pad := strings.Repeat("x", i)
		f.Add(`{"deployments":[{"id":"` + pad + `\"` + pad + `é` + pad + `\u00e9` + pad + `"}],"files":["` + pad + `\n` + pad + `"]}`)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		got, gerr := ReadSnapshot(strings.NewReader(doc), ReadOptions{})
		want, werr := oracleReadSnapshot(strings.NewReader(doc), ReadOptions{})
		// the same document in small reads: elements cut by the buffer's end are read
		// as those that are not
		cut, cerr := ReadSnapshot(&chunked{s: doc, n: 1 + len(doc)%13}, ReadOptions{})
		if errorKind(cerr) != errorKind(gerr) || (gerr == nil && !reflect.DeepEqual(cut, got)) {
			t.Fatalf("%q in reads of %d bytes: %v, in one: %v", doc, 1+len(doc)%13, cerr, gerr)
		}
		// an unknown top-level key is refused when the key is read, the Decoder's syntax
		// errors around it (a missing colon, a cut value) when the next token is: either
		// way refused
		unknownTop := func(err error) bool {
			return err != nil && strings.Contains(err.Error(), "unknown key") && (strings.Contains(err.Error(), " in the state") || !strings.Contains(err.Error(), " in "))
		}
		if (unknownTop(gerr) || unknownTop(werr)) && gerr != nil && werr != nil {
			return
		}
		// a key given twice (at the top, or in any element), or one field in two cases,
		// is refused, where the oracle, encoding/json, keeps the last
		if gerr != nil && strings.Contains(gerr.Error(), ": give it once") {
			return
		}
		if gk, wk := errorKind(gerr), errorKind(werr); gk != wk {
			t.Fatalf("%q: error %v (%s), before %v (%s)", doc, gerr, gk, werr, wk)
		}
		if gerr == nil && !reflect.DeepEqual(unverdicted(t, got), want) {
			t.Fatalf("%q:\n got %#v\nwant %#v", doc, got, want)
		}
	})
}

// A string cut by the scanner's buffer at any byte, an escape's included, reads the same.
func TestReadSnapshotAcrossReads(t *testing.T) {
	doc := `{"deployments":[{"id":"a\\\"b\"c","env":{"k\"":"v\\"},"logs":[{"text":"x\"y"}]}],"files":["\"]\""]}`
	want, err := oracleReadSnapshot(strings.NewReader(doc), ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for n := 1; n < 8; n++ {
		got, err := ReadSnapshot(&chunked{s: doc, n: n}, ReadOptions{})
		if err != nil || !reflect.DeepEqual(unverdicted(t, got), want) {
			t.Fatalf("in reads of %d bytes: %#v, %v", n, got, err)
		}
	}
}

// chunked reads s n bytes at a time.
type chunked struct {
	s string
	n int
}

func (c *chunked) Read(p []byte) (int, error) {
	if c.s == "" {
		return 0, io.EOF
	}
	k := copy(p[:min(len(p), c.n)], c.s)
	c.s = c.s[k:]
	return k, nil
}

// Deployments read where they lie in the scanner's buffer (inPlace), those cut by its
// end and those longer than the room it makes included, read as encoding/json reads
// them, whatever the sizes of the reads.
func TestReadSnapshotInPlaceAcrossTheBuffer(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var snap Snapshot
	for i := range 300 {
		d := sampleDeployments()[i%4]
		d.ID = fmt.Sprintf("dpl_%d", i)
		for j := range (i * 37) % 400 { // up to about 30 KB a deployment
			d.Logs = append(d.Logs, LogLine{CreatedAt: t0.Add(time.Duration(j) * time.Millisecond), Text: fmt.Sprintf("line %d of %d \"é\"", j, i)})
		}
		snap.Deployments = append(snap.Deployments, d)
		snap.Files = append(snap.Files, fmt.Sprintf("%064x", i))
	}
	var doc bytes.Buffer
	if err := WriteSnapshot(&doc, &snap, ""); err != nil {
		t.Fatal(err)
	}
	want, err := oracleReadSnapshot(bytes.NewReader(doc.Bytes()), ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{doc.Len(), 64 << 10, 7777, 1000, 17} {
		got, err := ReadSnapshot(&chunked{s: doc.String(), n: n}, ReadOptions{})
		if err == nil {
			got = unverdicted(t, got)
		}
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("in reads of %d bytes: %v (equal: %v)", n, err, reflect.DeepEqual(got, want))
		}
	}
}

// unverdicted is s, read by ReadSnapshot, without the reader's verdict on its
// deployments' files, which a snapshot decoded otherwise does not have; it fails t
// unless the verdict is FilesProblem's for every deployment.
func unverdicted(t testing.TB, s Snapshot) Snapshot {
	t.Helper()
	for i, d := range s.Deployments {
		if got, want := s.filesRead.problem(i, d.Files), FilesProblem(d.Files); got != want {
			t.Fatalf("deployment %d: the reader's verdict on its files is %q, FilesProblem's %q", i, got, want)
		}
	}
	s.filesRead = nil
	return s
}

// A time a state's element cannot hold is named by its key and place, 400
// invalid_request, wherever it is: a deployment's (which its own reader gives up on for
// the strict decoder), its timings' and log lines', a project's, a domain's certificate's.
// A state import answered `field parsing time "yesterday" as "2006-01-02T15:04:05Z07:00":
// cannot parse "yesterday" as "2006"`, which names no field.
func TestReadSnapshotNamesRefusedTimes(t *testing.T) {
	for _, tc := range []struct{ doc, want string }{
		{`{"deployments":[{"id":"dpl_1","created_at":"yesterday"}]}`, `key "created_at" in deployments: "yesterday" is not an RFC 3339 time like 2026-11-01T10:00:00Z`},
		{`{"deployments":[{"id":"dpl_1","timings":{"queued_at":""}}]}`, `key "queued_at" in deployments.timings: "" is not an RFC 3339 time`},
		{`{"deployments":[{"id":"dpl_1","logs":[{"created_at":"2026-13-01T00:00:00Z","text":"x"}]}]}`, `key "created_at" in deployments.logs: "2026-13-01T00:00:00Z" is not an RFC 3339 time like 2026-11-01T10:00:00Z (month out of range)`},
		{`{"projects":[{"id":"prj_1","created_at":5}]}`, `key "created_at" in projects: 5 is not an RFC 3339 time`},
		{`{"domains":[{"hostname":"a.test","tls":{"expires_at":"soon"}}]}`, `key "expires_at" in domains.tls: "soon" is not an RFC 3339 time`},
	} {
		_, err := ReadSnapshot(strings.NewReader(tc.doc), ReadOptions{})
		if e, ok := apperr.As(err); !ok || e.Code != apperr.InvalidRequest || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want invalid_request %q", tc.doc, err, tc.want)
		}
	}
}
