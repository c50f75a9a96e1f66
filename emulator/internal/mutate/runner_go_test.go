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

func TestGoArgs(t *testing.T) {
	for _, tc := range []struct {
		args              []string
		build, test, pkgs string
		ok                bool
	}{
		{[]string{"./..."}, "", "", "./...", true},
		{[]string{}, "", "", ".", true},
		{[]string{"-race", "-tags", "integration", "-short", "-timeout=30s", "-run", "TestX", "-v", "./a", "./b"}, "-race -tags=integration", "-test.short -test.timeout=30s", "./a ./b", true},
		{[]string{"-count", "3", "-json", "-parallel", "4", "."}, "", "-test.parallel=4", ".", true},
		{[]string{"./x", "-args", "-flag"}, "", "", "", false},
		{[]string{"-coverprofile", "c.out", "./x"}, "", "", "", false},
		{[]string{"-exec", "sudo", "./x"}, "", "", "", false},
		{[]string{"-timeout"}, "", "", "", false},
	} {
		b, te, p, ok := goArgs(tc.args)
		if ok != tc.ok || (ok && (strings.Join(b, " ") != tc.build || strings.Join(te, " ") != tc.test || strings.Join(p, " ") != tc.pkgs)) {
			t.Errorf("goArgs(%q) = %q %q %q %v", tc.args, b, te, p, ok)
		}
	}
}

// The binary's test2json framing: outcomes by package and name, each test's own output.
func TestGoBinResults(t *testing.T) {
	dir := t.TempDir()
	r := &goBinRunner{pkgs: map[string]goBinary{"p": {bin: "/bin/p.test", dir: "/src/p"}}, test: []string{"-test.short"}}
	argv, err := r.Command(nil, dir, []string{"p TestX/a_b", "p TestY"})
	if err != nil || strings.Join(argv, " ") != "/bin/p.test -test.v=test2json -test.count=1 -test.run=^(TestX|TestY)$ -test.short" {
		t.Fatalf("Command = %q, %v", argv, err)
	}
	if d := r.Dir([]string{"p TestY"}); d != "/src/p" {
		t.Errorf("Dir = %q", d)
	}
	out := "\x16=== RUN   TestX\n    x_test.go:3: hello\n\x16=== RUN   TestX/a_b\nprinted\n    x_test.go:3: bad\n" +
		"\x16--- FAIL: TestX/a_b (0.00s)\n\x16=== NAME  TestX\n\x16--- FAIL: TestX (0.00s)\n\x16=== NAME  \n" +
		"\x16=== RUN   TestY\n\x16=== PAUSE TestY\n\x16=== CONT  TestY\nno newline\x16--- SKIP: TestY (0.00s)\n\x16FAIL\n"
	got, err := r.Results(dir, []byte(out))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || !got["p TestX/a_b"].Failed || !got["p TestX"].Failed || got["p TestY"].Failed {
		t.Fatalf("Results = %+v", got)
	}
	if o := got["p TestX/a_b"].Output; !strings.Contains(o, "printed\n") || !strings.Contains(o, "bad") || strings.Contains(o, "hello") {
		t.Errorf("TestX/a_b's output = %q", o)
	}
	if o := got["p TestY"].Output; !strings.Contains(o, "no newline\n") {
		t.Errorf("TestY's output = %q", o)
	}
}
