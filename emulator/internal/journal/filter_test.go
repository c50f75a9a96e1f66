package journal_test

import (
	"testing"

	"github.com/hostemu/hostemu/emulator/internal/fault"
	"github.com/hostemu/hostemu/emulator/internal/journal"
)

// TestFilters: issue 25 item 5, the journal queried by status, service, code, since,
// limit and body, each entry numbered.
func TestFilters(t *testing.T) {
	t.Parallel()
	j := journal.New(10)
	j.Add(journal.Entry{Method: "POST", Path: "/v1/deployments", Status: 201, Service: "hosting", Body: `{"target":"production","files":[{"path":"/a"}]}`})
	j.Add(journal.Entry{Method: "POST", Path: "/v1/deployments/d/promote", Status: 503, Service: "hosting", ErrorCode: "service_unavailable"})
	j.Add(journal.Entry{Method: "POST", Path: "/v1/encrypt", Status: 200, Service: "cipher"})
	j.Add(journal.Entry{Method: "POST", Path: "/v1/deployments", Status: 201, Service: "hosting", Body: `{"n":3,"s":"3","x":null}`})
	st := 503
	body := func(s string) *fault.BodyMatch {
		m, err := fault.ParseBodyMatch(s)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	for _, tt := range []struct {
		name string
		f    journal.Filter
		want []uint64
	}{
		{"all, numbered", journal.Filter{}, []uint64{1, 2, 3, 4}},
		{"status", journal.Filter{Status: &st}, []uint64{2}},
		{"service", journal.Filter{Service: "cipher"}, []uint64{3}},
		{"code", journal.Filter{Code: "service_unavailable"}, []uint64{2}},
		{"since", journal.Filter{Since: 1}, []uint64{2, 3, 4}},
		{"limit", journal.Filter{Limit: 2}, []uint64{1, 2}},
		{"body value", journal.Filter{Body: body("$.target=production")}, []uint64{1}},
		{"body index", journal.Filter{Body: body("files[0].path=/a")}, []uint64{1}},
		{"body other value", journal.Filter{Body: body("target=preview")}, nil},
		// the text form cannot tell "3" from 3: it matches both; a number by value
		{"body text form, number", journal.Filter{Body: body("n=3.0")}, []uint64{4}},
		{"body text form, string", journal.Filter{Body: body("s=3")}, []uint64{4}},
		{"body text form, null", journal.Filter{Body: body("x=null")}, []uint64{4}},
		{"body text form, not one value", journal.Filter{Body: body("n=3 x")}, nil},
	} {
		var got []uint64
		for _, e := range j.List(tt.f) {
			got = append(got, e.Seq)
		}
		if len(got) != len(tt.want) || (len(got) > 0 && got[len(got)-1] != tt.want[len(tt.want)-1]) || (len(got) > 0 && got[0] != tt.want[0]) {
			t.Errorf("%s: seqs %v, want %v", tt.name, got, tt.want)
		}
	}
}

// ParseMatches reads a query's and an await's body, header and response_header
// matches alike, and names the one that is wrong.
func TestParseMatches(t *testing.T) {
	t.Parallel()
	s := func(v string) *string { return &v }
	var f journal.Filter
	if field, err := f.ParseMatches(s("target=production"), s("Retry-After"), s("Content-Type:application/json*")); err != nil {
		t.Fatalf("%s: %v", field, err)
	}
	if f.Body.String() != "target=production" || f.Header.String() != "Retry-After" || f.ResponseHeader.String() != "Content-Type:application/json*" {
		t.Fatalf("parsed %+v", f)
	}
	var none journal.Filter
	if _, err := none.ParseMatches(nil, nil, nil); err != nil || none.Body != nil || none.Header != nil || none.ResponseHeader != nil {
		t.Fatalf("no matches given: %+v, %v", none, err)
	}
	for _, c := range []struct {
		body, header, response *string
		field                  string
	}{
		{s("=x"), nil, nil, "body"},
		{nil, s("Bad Name:1"), nil, "header"},
		{nil, nil, s(""), "response_header"},
	} {
		var g journal.Filter
		if field, err := g.ParseMatches(c.body, c.header, c.response); err == nil || field != c.field {
			t.Errorf("want an error naming %s, got %q, %v", c.field, field, err)
		}
	}
}
