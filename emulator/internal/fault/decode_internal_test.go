package fault

import (
	"reflect"
	"strings"
	"testing"
)

// The answer fields are listed once, by Step: each of Spec's reaches its answer, and the
// refusal of a then beside them names them all.
func TestAnswerFieldsOnce(t *testing.T) {
	t.Parallel()
	var sp Spec
	v := reflect.ValueOf(&sp).Elem()
	for _, f := range answerField {
		switch x := v.Field(f[1]); x.Kind() {
		case reflect.Int:
			x.SetInt(1)
		case reflect.String:
			x.SetString("x")
		case reflect.Bool:
			x.SetBool(true)
		case reflect.Pointer:
			x.Set(reflect.New(x.Type().Elem()))
		case reflect.Map:
			x.Set(reflect.MakeMap(x.Type()))
		default:
			t.Fatalf("a field of kind %v", x.Kind())
		}
	}
	st := reflect.ValueOf(sp.answer())
	for i := range st.NumField() {
		if name := st.Type().Field(i).Name; name != "Pass" && st.Field(i).IsZero() {
			t.Errorf("Spec's %s does not reach its answer", name)
		}
	}
	if len(AnswerFields) != st.NumField()-1 || AnswerFields[0] != "status" || AnswerFields[len(AnswerFields)-1] != "bytes_per_second" {
		t.Errorf("AnswerFields %v", AnswerFields)
	}
	sp.Then = []Step{{Pass: true}}
	err := sp.Validate()
	if err == nil || !strings.Contains(err.Error(), "then excludes the answer fields ("+strings.Join(AnswerFields, ", ")+")") {
		t.Errorf("%v", err)
	}
}

// A request's body is decoded once for all the body matches weighed on it.
func TestBodyDecodedOnce(t *testing.T) {
	t.Parallel()
	c, problems := compile(Match{Body: map[string]BodyValue{"a": "1", "b": `"x"`}})
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	r := &Request{Body: `{"a":1,"b":"x"}`}
	if !bodyHolds(c, r) || !r.docRead {
		t.Fatalf("body match: held %v, decoded %v", bodyHolds(c, r), r.docRead)
	}
	r.Body = `{}` // the body decoded stands: not decoded again
	if !bodyHolds(c, r) {
		t.Error("the body was decoded again")
	}
}

// An enum value far from every known one is refused with the list once: the sentence
// lists them already, and yamlcheck.Suggest's "(want …)" said it again.
func TestEnumRefusalListsOnce(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		spec Spec
		want string
	}{
		{Spec{Status: 503, Match: Match{Service: "zzzzzz"}}, `match.service "zzzzzz": want hosting, cipher or edge`},
		{Spec{Status: 503, Match: Match{Service: "hostin"}}, `match.service "hostin": want hosting, cipher or edge (did you mean "hosting"?)`},
		{Spec{Status: 503, DelayClock: "zzzzzz"}, `delay_clock "zzzzzz": want wall or emulated`},
		{Spec{Status: 503, DelayClock: "wal"}, `delay_clock "wal": want wall or emulated (did you mean "wall"?)`},
	} {
		err := tc.spec.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "(want ") {
			t.Errorf("%+v: %v, want %q", tc.spec, err, tc.want)
		}
	}
}
