package state

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/hostemu/hostemu/emulator/internal/strictjson"
)

// A deployment as hostemu writes it is read by decodeDeployment itself (not handed to
// encoding/json), into what encoding/json reads.
func TestDecodeDeploymentReadsWhatHostemuWrites(t *testing.T) {
	for i, d := range sampleDeployments() {
		text, _ := d.MarshalJSON()
		indented, _ := json.MarshalIndent(json.RawMessage(text), "", "\t")
		for _, form := range [][]byte{text, indented} {
			var got, want Deployment
			if !decodeDeployment(form, &got, &arena{}) {
				t.Fatalf("deployment %d: gave up on %s", i, form)
			}
			if err := json.Unmarshal(form, &want); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("deployment %d:\n got %#v\nwant %#v", i, got, want)
			}
		}
	}
}

// Keys in another order than hostemu's (here sorted, in every object) are read the
// same: members compares the key hostemu writes next first, then looks a key up.
func TestDecodeDeploymentInAnyKeyOrder(t *testing.T) {
	for i, d := range sampleDeployments() {
		text, _ := d.MarshalJSON()
		var tree any
		if err := json.Unmarshal(text, &tree); err != nil {
			t.Fatal(err)
		}
		sorted, _ := json.Marshal(tree) // every object's keys sorted
		if string(sorted) == string(text) {
			t.Fatalf("deployment %d: sorting changed no key's place", i)
		}
		var got, want Deployment
		if !decodeDeployment(sorted, &got, &arena{}) {
			t.Fatalf("deployment %d: gave up on %s", i, sorted)
		}
		if err := json.Unmarshal(sorted, &want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("deployment %d:\n got %#v\nwant %#v", i, got, want)
		}
	}
}

// What decodeDeployment does not read as hostemu writes it, it gives up on, for
// encoding/json to read or refuse.
func TestDecodeDeploymentGivesUp(t *testing.T) {
	for _, text := range []string{
		`{"ID":"x"}`,          // another case: encoding/json matches it
		`{"id":"x","id":"y"}`, // twice
		`{"id":"x","project_id":"p","project_id":"q"}`,    // twice, the first in hostemu's order
		`{"url":"u","id":"x","url":"v"}`,                  // twice, the second out of order
		`{"logs":[{"text":"a","text":"b"}]}`,              // a log line's key twice
		`{"timings":{"queued_at":null,"queued_at":null}}`, // a timing twice
		`{"error":{"code":"a","message":"m","code":"b"}}`, // an error's key twice
		`{"env":{"A":"1","A":"2"}}`,                       // an env key twice
		`{"env":{"A":"1","\u0041":"2"}}`,                  // an env key twice, once escaped
		`{"files":{"a.html":"x","b":"y","a.html":"x"}}`,   // a file twice
		"{\"env\":{\"\xff\":\"1\",\"\xfe\":\"2\"}}",       // two keys that both read as U+FFFD
		`{"idx":"x"}`, `{"i":"x"}`, `{"Id":"x"}`, `{"id\"":"x"}`, // like a known key, not one
		`{"i\u0064":"x"}`,            // an escaped key
		`{"id":null}`,                // null leaves a string alone
		`{"id":1}`,                   // a number
		`{"extra":1}`,                // unknown
		`{"created_at":null}`,        // null leaves a time alone
		`{"created_at":"yesterday"}`, // not a time
		`{"timings":null}`,           // null leaves the struct alone
		`{"logs":[null]}`,            // a null log line
		`{"logs":[{"text":"a"},]}`,   // malformed
		`{"env":{"a":"b",}}`,         // malformed
		`{"id":"x"} x`,               // trailing
		`{"id":"a` + "\n" + `b"}`,    // a control character
		`{"id":"\x"}`,                // an unknown escape
		`{"id":"\'"}`,                // an escape the scanner refuses
		`[]`, `null`, `"x"`, ``, `{`, // not a deployment
	} {
		var d Deployment
		if decodeDeployment([]byte(text), &d, nil) {
			t.Errorf("read %s as %#v", text, d)
		}
	}
}

func TestParseTimestamp(t *testing.T) {
	for _, s := range []string{
		"2026-01-02T03:04:05Z", "2026-01-02T03:04:05.1Z", "2026-01-02T03:04:05.123Z", "2026-01-02T03:04:05.123456789Z",
		"2024-02-29T23:59:59.999Z", "0001-01-01T00:00:00Z", "9999-12-31T23:59:59.999999999Z", "0000-01-01T00:00:00Z",
	} {
		var got, want time.Time
		if !parseTimestamp([]byte(s), &got) {
			t.Errorf("%s: gave up", s)
			continue
		}
		if err := want.UnmarshalJSON([]byte(`"` + s + `"`)); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%s: got %v, want %v", s, got, want)
		}
	}
	for _, s := range []string{
		"2023-02-29T00:00:00Z", "2026-13-01T00:00:00Z", "2026-01-02T24:00:00Z", "2026-01-02T03:04:60Z",
		"2026-01-02T03:04:05.Z", "2026-01-02T03:04:05.1234567890Z", "2026-01-02t03:04:05Z", "2026-01-02T03:04:05+01:00",
		"2026-01-02T03:04:05z", "+026-01-02T03:04:05Z",
	} {
		var got time.Time
		if parseTimestamp([]byte(s), &got) {
			t.Errorf("%s: read as %v; should be left to time.Time", s, got)
		}
	}
}

// Whatever decodeDeployment reads, encoding/json reads the same way; what it gives up
// on is encoding/json's to read. An input of several deployments (cut at NUL bytes,
// which no JSON text holds) is read in turn with one arena, as a state's are: a string
// read where the project's last deployment had one (recent) is byte for byte the one
// read, whether it is shared or not.
func FuzzDecodeDeployment(f *testing.F) {
	for _, d := range sampleDeployments() {
		text, _ := d.MarshalJSON()
		f.Add(string(text))
	}
	f.Add(`{"id":"\ud83d\ude00\ud800x\udc00","env":{"\u00e9":"\u2028"},"logs":[]}`)
	f.Add(`{"created_at":"2026-02-29T00:00:00Z","timings":{"ready_at":"2026-01-01T00:00:00.5Z"}}`)
	f.Add("{\"id\":\"\xff\xed\xa0\x80\"}")
	f.Add(`{"id":"x","project_id":"p","project_id":"q"}`)
	f.Add(`{ "id" : "x" , "url":"u","id":"y"}`)
	f.Add(`{"env":{"A":"1","\u0041":"2"},"files":{"b":"1","a":"2","b":"3"}}`)
	for i := range 17 { // what ends a plain run at every place in an eight-byte word
		pad := strings.Repeat("0123456789abcdef", 2)[:i]
		f.Add(`{"id":"` + pad + `\"` + pad + "\x01" + pad + `é` + pad + `\\` + pad + `","url":"` + pad + `"}`)
	}
	// deployments of one project in turn: the same strings, and strings of the same
	// length whose first eight bytes agree, or that agree past them, shorter than eight
	// bytes, empty, escaped, not UTF-8; project_id after the files; more files and lines
	// than recent keeps
	dep := func(project, name, digest, line string) string {
		return `{"id":"d","project_id":"` + project + `","files":{"` + name + `":"` + digest + `","b":"` + digest + `"},"logs":[{"text":"` + line + `","created_at":"2026-11-27T14:50:32.000Z"}]}`
	}
	f.Add(dep("p", "index.html", "0123456789abcdef", "Building dpl_a") + "\x00" + dep("p", "index.html", "0123456789abcdef", "Building dpl_b"))
	f.Add(dep("p", "index.html", "0123456789abcdef", "Building") + "\x00" + dep("p", "index.htmm", "1123456789abcdef", "Building"))
	f.Add(dep("p", "a", "ab", "") + "\x00" + dep("p", "b", "ac", "") + "\x00" + dep("p", "a", "ab", "x"))
	f.Add(dep("p", `\u0061`, `a\"b`, "\xff\xfe") + "\x00" + dep("p", "a", `a\"b`, "\xff\xfe") + "\x00" + dep("p", "a", `a"b`, "\ufffd\ufffd"))
	f.Add(`{"files":{"a":"1"},"project_id":"p"}` + "\x00" + `{"project_id":"p","files":{"a":"1"}}` + "\x00" + `{"project_id":null,"files":{"a":"1"}}`)
	f.Add(`{"project_id":"p","files":{"a":"1"},"logs":[{"text":"x"}],"URL":""}` + "\x00" + `{"project_id":"p","files":{"a":"1"},"logs":[{"text":"x"}]}`)
	var many strings.Builder
	for i := range maxRecentItems + 1 {
		if i > 0 {
			many.WriteByte(',')
		}
		many.WriteString(`"` + strings.Repeat("f", i+1) + `":"d"`)
	}
	f.Add(`{"project_id":"p","files":{` + many.String() + `}}` + "\x00" + `{"project_id":"p","files":{` + many.String() + `}}`)
	f.Fuzz(func(t *testing.T, text string) {
		var ar arena
		for _, one := range strings.Split(text, "\x00") {
			decodeAsStrict(t, one, &ar)
		}
	})
}

// decodeAsStrict holds what decodeDeployment reads of text, with a, to what the strict
// decoder reads (nothing when it gives up).
func decodeAsStrict(t *testing.T, text string, a *arena) {
	t.Helper()
	var got Deployment
	if !decodeDeployment([]byte(text), &got, a) {
		return
	}
	var want Deployment
	// strict, as the state's reader is: a fast reader that skipped an unknown key
	// would pass encoding/json's plain Unmarshal
	if err := strictjson.Decode([]byte(text), &want, "deployments"); err != nil {
		t.Fatalf("read %q, which the strict decoder refuses: %v", text, err)
	}
	if err := strictjson.DuplicateKeys([]byte(text), "deployments"); err != nil {
		t.Fatalf("read %q, which gives a key twice: %v", text, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%q:\n got %#v\nwant %#v", text, got, want)
	}
}

func FuzzParseTimestamp(f *testing.F) {
	f.Add("2026-01-02T03:04:05.678Z")
	f.Add("2024-02-29T00:00:00Z")
	f.Fuzz(func(t *testing.T, s string) {
		if strings.ContainsAny(s, `"\`) {
			return
		}
		var got, want time.Time
		if !parseTimestamp([]byte(s), &got) {
			return
		}
		if err := want.UnmarshalJSON([]byte(`"` + s + `"`)); err != nil {
			t.Fatalf("read %q, which time.Time refuses: %v", s, err)
		}
		if got != want {
			t.Fatalf("%q: got %v, want %v", s, got, want)
		}
	})
}

func BenchmarkDecodeDeployment(b *testing.B) {
	d := sampleDeployments()[2]
	for i := range 20 {
		d.Logs = append(d.Logs, LogLine{CreatedAt: time.Now(), Text: "Step " + string(rune('a'+i)) + ": running npm run build for the production bundle"})
	}
	text, _ := d.MarshalJSON()
	b.Run("decodeDeployment", func(b *testing.B) {
		var ar arena
		for b.Loop() {
			var d Deployment
			if !decodeDeployment(text, &d, &ar) {
				b.Fatal("gave up")
			}
		}
	})
	b.Run("encoding/json", func(b *testing.B) {
		for b.Loop() {
			var d Deployment
			if err := json.Unmarshal(text, &d); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// A timestamp in the same hour as the one read before it is read from that one's hour
// (withinHour) rather than parsed whole: the two ways give the same time.Time (==
// where the zone is shared, as UTC's is), for any pair, read in one deployment or in
// two sharing an arena.
func FuzzTimestampsOfOneHour(f *testing.F) {
	f.Add("2026-01-02T03:04:05.678Z", "2026-01-02T03:59:59.999Z")
	f.Add("2026-01-02T03:04:05.678Z", "2026-01-02T03:04:05.679Z")
	f.Add("2026-01-02T03:04:05.678Z", "2026-01-02T03:60:05.000Z")
	f.Add("2026-01-02T03:04:05.678Z", "2026-01-02T03:04:60.000Z")
	f.Add("2026-01-02T03:04:05.678Z", "2026-01-02T03:00:00.000Z")
	f.Add("2024-02-29T23:59:59.999Z", "2024-02-29T23:00:00.001Z")
	f.Add("2026-01-02T03:04:05.678Z", "2026-01-02T03:04:05.6789")
	f.Add("2026-01-02T03:04:05.678Z", "2026-01-02T03:4:05.678ZZ")
	f.Add("2026-01-02T03:04:05.678Z", "2026-01-02T03:04:05,678Z")
	f.Fuzz(func(t *testing.T, a, b string) {
		if strings.ContainsAny(a+b, `"\`) || !utf8.ValidString(a+b) {
			return
		}
		one := `{"created_at":"` + a + `","timings":{"queued_at":"` + b + `"},"logs":[{"text":"x","created_at":"` + a + `"},{"text":"y","created_at":"` + b + `"}]}`
		first, second := `{"created_at":"`+a+`"}`, `{"created_at":"`+b+`"}`
		var ar arena
		for _, text := range []string{one, first, second} {
			var got Deployment
			if !decodeDeployment([]byte(text), &got, &ar) {
				continue
			}
			var want Deployment
			if err := json.Unmarshal([]byte(text), &want); err != nil {
				t.Fatalf("read %q, which encoding/json refuses: %v", text, err)
			}
			// DeepEqual compares each time.Time's wall and ext as == does, and its zone
			// by value: where both share a *Location (time.Date's UTC and time.Parse's
			// "Z" do) that is ==; an offset that is not whole hours ("-00:30") gets a
			// new zone from each time.Parse, which == tells apart in two right reads
			// and DeepEqual does not.
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%q:\n got %#v\nwant %#v", text, got, want)
			}
		}
	})
}
