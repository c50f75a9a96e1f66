package mutate

import (
	"reflect"
	"strings"
	"testing"
)

func TestGoRunnerCommand(t *testing.T) {
	r := goRunner{}
	for _, tc := range []struct {
		argv []string
		only []string
		want string
	}{
		{[]string{"go", "test", "./..."}, nil, "go test ./... -json -count=1"},
		{[]string{"go", "test", "-race", "./x", "-run", "TestA"}, []string{"p TestB/sub", "p TestA", "q TestA"}, "go test -race ./x -run TestA -json -count=1 -run ^(TestA|TestB)$"},
		{[]string{"go", "test", "./x", "-args", "-flag"}, []string{"p Test.Dot"}, `go test ./x -json -count=1 -run ^(Test\.Dot)$ -args -flag`},
	} {
		got, err := r.Command(tc.argv, "", tc.only)
		if err != nil || strings.Join(got, " ") != tc.want {
			t.Errorf("Command(%q, %q) = %q, %v; want %q", tc.argv, tc.only, strings.Join(got, " "), err, tc.want)
		}
	}
	if _, err := r.Command([]string{"go", "vet"}, "", nil); err == nil {
		t.Error("go vet: no error")
	}
}

func TestGoRunnerResults(t *testing.T) {
	out := strings.Join([]string{
		`# some build line`,
		`{"Action":"run","Package":"p","Test":"TestA"}`,
		`{"Action":"output","Package":"p","Test":"TestA","Output":"=== RUN   TestA\n"}`,
		`{"Action":"output","Package":"p","Test":"TestA","Output":"    a_test.go:9: boom\n"}`,
		`{"Action":"fail","Package":"p","Test":"TestA","Elapsed":0}`,
		`{"Action":"pass","Package":"p","Test":"TestB/sub"}`,
		`{"Action":"pass","Package":"p","Test":"TestB"}`,
		`{"Action":"skip","Package":"q","Test":"TestC"}`,
		`{"Action":"run","Package":"q","Test":"TestD"}`,
		`not json {`,
		`{"Action":"fail","Package":"p"}`,
	}, "\n")
	got, err := goRunner{}.Results("", []byte(out))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Outcome{
		"p TestA":     {Failed: true, Output: "=== RUN   TestA\n    a_test.go:9: boom\n"},
		"p TestB/sub": {},
		"p TestB":     {},
		"q TestC":     {},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Results = %#v\nwant %#v", got, want)
	}
	if k := (goRunner{}).Key(Hello{Test: "TestA", Package: "p"}); k != "p TestA" {
		t.Errorf("Key = %q", k)
	}
	if k := (goRunner{}).Key(Hello{}); k != "" {
		t.Errorf("Key of a nameless hello = %q", k)
	}
}

func TestFindRunner(t *testing.T) {
	for _, argv := range [][]string{{"go", "test", "./..."}, {"/usr/local/go/bin/go", "test"}} {
		r, err := FindRunner("", argv)
		if err != nil || r.Name() != "go" {
			t.Errorf("%q: %v %v", argv, r, err)
		}
	}
	if _, err := FindRunner("", []string{"go", "build"}); err == nil {
		t.Error("go build: found a runner")
	}
}
