package state

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

// The --state file's log_seq reaches ReadOptions.Extra; other unknown keys are skipped.
func TestReadSnapshotOffersExtraKeys(t *testing.T) {
	var seq uint64
	snap, err := ReadSnapshot(strings.NewReader(`{"log_seq":42,"unknown":{"a":[1]},"tokens":[{"token":"t","scope":"read"}]}`), ReadOptions{
		Extra: func(key string, value []byte) (bool, error) {
			if key != "log_seq" {
				return false, nil
			}
			return true, json.Unmarshal(value, &seq)
		},
	})
	if err != nil || seq != 42 || len(snap.Tokens) != 1 || snap.Tokens[0].Token != "t" {
		t.Fatalf("seq %d, tokens %+v, err %v", seq, snap.Tokens, err)
	}
}

// errorKind is what a caller can tell of a ReadSnapshot error: the catalogue's code, or
// which of encoding/json's errors it is.
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
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		got, gerr := ReadSnapshot(strings.NewReader(doc), ReadOptions{})
		want, werr := oracleReadSnapshot(strings.NewReader(doc), ReadOptions{})
		if gk, wk := errorKind(gerr), errorKind(werr); gk != wk {
			t.Fatalf("%q: error %v (%s), before %v (%s)", doc, gerr, gk, werr, wk)
		}
		if gerr == nil && !reflect.DeepEqual(got, want) {
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
		if err != nil || !reflect.DeepEqual(got, want) {
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

// An unknown key's value is skipped at any depth, as the Decoder skipped it, holding a
// byte per level; malformed, it is refused at any depth.
func TestReadSnapshotSkipsAnyDepth(t *testing.T) {
	const n = 20_000
	for _, doc := range []string{
		`{"x":` + strings.Repeat("[", n) + strings.Repeat("]", n) + `,"tokens":[{"token":"t","scope":"read"}]}`,
		`{"x":` + strings.Repeat(`{"a":[1,{"b":`, n) + "null" + strings.Repeat("}]}", n) + `,"tokens":[]}`,
		`{"x":` + strings.Repeat("[", n) + strings.Repeat("]", n-1) + `}`,
		`{"x":` + strings.Repeat(`{"a":`, n) + "1" + strings.Repeat("}", n) + "]}",
	} {
		got, gerr := ReadSnapshot(strings.NewReader(doc), ReadOptions{})
		want, werr := oracleReadSnapshot(strings.NewReader(doc), ReadOptions{})
		if errorKind(gerr) != errorKind(werr) || !reflect.DeepEqual(got, want) {
			t.Errorf("%.40s…: %v (%s), the Decoder: %v (%s)", doc, gerr, errorKind(gerr), werr, errorKind(werr))
		}
	}
}
