package emulator_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/hostemu/hostemu/emulator"
	"github.com/hostemu/hostemu/emulator/internal/journal"
)

// emulator.JournalEntry is the public face of the journal's entries: every field the
// journal writes decodes into it, none left over, so a field added to the journal
// fails here until the public type has it too.
func TestJournalEntryHasEveryField(t *testing.T) {
	j := journal.New(1)
	e := journal.Entry{Method: "POST", Path: "/v1/x", Query: "a=1", Status: 201, DurationMS: 1.5, Body: "{}", ErrorCode: "c",
		Scope: "deploy", Service: "hosting", Host: "h.test", FaultID: "flt_1", Time: time.Unix(1, 0).UTC(),
		BodyTruncated: true, BodyUnread: true, PathTruncated: true, QueryTruncated: true, HeadersTruncated: true}
	e.SetRequestHeaders(http.Header{"X-Test": {"v"}})
	e.SetResponse(201, http.Header{"Retry-After": {"3"}}, []byte(`{"id":1}`))
	j.Add(e)
	if err := j.Load(j.List(journal.Filter{})); err != nil { // marks it replayed
		t.Fatal(err)
	}
	raw, err := json.Marshal(j.List(journal.Filter{})[0])
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var pub emulator.JournalEntry
	if err := dec.Decode(&pub); err != nil {
		t.Fatalf("a journal entry does not decode into emulator.JournalEntry: %v\n%s", err, raw)
	}
	if pub.Headers.Get("x-test") != "v" || !pub.Replayed || pub.Seq != 1 || pub.Response == nil || pub.Response.Headers.Get("retry-after") != "3" {
		t.Fatalf("decoded: %+v", pub)
	}
	var all map[string]any
	json.Unmarshal(raw, &all)
	if n := reflect.TypeFor[emulator.JournalEntry]().NumField(); len(all) != n {
		t.Fatalf("the journal writes %d fields, emulator.JournalEntry has %d", len(all), n)
	}
	e.Response.BodyTruncated, e.Response.HeadersTruncated = true, true
	j.Add(e)
	raw, _ = json.Marshal(j.List(journal.Filter{})[0])
	json.Unmarshal(raw, &all)
	if n, m := reflect.TypeFor[emulator.JournalResponse]().NumField(), len(all["response"].(map[string]any)); m != n {
		t.Fatalf("the journal writes %d fields of a response, emulator.JournalResponse has %d", m, n)
	}
}
