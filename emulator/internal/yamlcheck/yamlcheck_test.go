package yamlcheck_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hostemu/hostemu/emulator/internal/scenario"
	"github.com/hostemu/hostemu/emulator/internal/yamlcheck"
)

// TestSyntaxErrorLines: a syntax error is reported on the line a user sees it on:
// yaml.v3 counts its parser's lines from 0 and its scanner's from 1, and the checker
// counts both from 1. A construct left open is reported where it opens.
func TestSyntaxErrorLines(t *testing.T) {
	t.Parallel()
	tests := []struct {
		yaml string
		line int
	}{
		{"a: 1\nb: 2\n- c\n", 3},         // the stray item
		{"a:\n  b: 1\n c: 2\n", 3},       // the misindented key
		{"- a\nb: 1\n", 2},               // a key after a list item
		{"a: 1\nb: {x: 1\nc: 2\n", 2},    // the flow mapping left open
		{"a: 1\n\tb: 2\n", 2},            // the tab (a scanner error)
		{"a: 1\nb: \"open\nc: 3\n", 2},   // the quote left open (a scanner error)
		{"a: 1\nb: *nope\n", 2},          // the unknown alias
		{"a: b: c\n", 1},                 // yaml names no line
		{"[a, b\n\n", 2},                 // past the end: the last line
		{"a: 1\nb:\n  - x\n  y: 2\n", 3}, // the list left open
	}
	for _, tt := range tests {
		c := yamlcheck.New("f.yaml", []byte(tt.yaml))
		if root, ok := c.Document([]byte(tt.yaml), "file", nil); root != nil || ok {
			t.Errorf("%q: parsed", tt.yaml)
			continue
		}
		ps := c.Problems()
		if len(ps) != 1 || ps[0].Line != tt.line || !strings.HasPrefix(ps[0].Message, "invalid YAML: ") {
			t.Errorf("%q: %v, want one invalid YAML at line %d", tt.yaml, ps, tt.line)
		}
	}
}

func TestClip(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", 100)
	if got, want := yamlcheck.Excerpt(long), strings.Repeat("é", 80)+"…"; got != want {
		t.Errorf("Excerpt = %q", got)
	}
	if got := yamlcheck.Excerpt("short"); got != "short" {
		t.Errorf("Excerpt(short) = %q", got)
	}
	msg := `k: unknown "` + long + `" (want "a", "b")`
	if got, want := yamlcheck.Clip(msg), `k: unknown "`+strings.Repeat("é", 80)+`…" (want "a", "b")`; got != want {
		t.Errorf("Clip = %q", got)
	}
	if got := yamlcheck.Clip(strings.Repeat("x", 10_000)); len(got) > 410 || !strings.HasSuffix(got, "…") {
		t.Errorf("Clip of a long unquoted message: %d bytes", len(got))
	}
}

func TestAliasLimit(t *testing.T) {
	t.Parallel()
	// Reuse that stays under the limit.
	ok := "x: &x {k: v, l: w}\ny: [" + strings.Repeat("*x, ", 200) + "]\n"
	c := yamlcheck.New("f.yaml", []byte(ok))
	if root, _ := c.Document([]byte(ok), "file", nil); root == nil || c.Failed() {
		t.Errorf("reuse refused: %v", c.Problems())
	}
	// Ten levels of tenfold reuse: 10^10 nodes from a few hundred bytes.
	bomb := "l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n"
	for i := 1; i < 10; i++ {
		p := "*l" + string(rune('0'+i-1))
		bomb += "l" + string(rune('0'+i)) + ": &l" + string(rune('0'+i)) + " [" + strings.Repeat(p+", ", 9) + p + "]\n"
	}
	c = yamlcheck.New("f.yaml", []byte(bomb))
	if root, ok := c.Document([]byte(bomb), "file", nil); root != nil || ok {
		t.Fatal("bomb parsed")
	}
	if ps := c.Problems(); len(ps) != 1 || !strings.HasPrefix(ps[0].Message, "too many aliases") || ps[0].Line != 5 {
		t.Errorf("bomb: %v", ps)
	}
}

// Deeply nested blocks without aliases are reported as too deep, naming the bound, not
// as "too many aliases" (issue 32).
func TestDepthLimit(t *testing.T) {
	t.Parallel()
	for _, deep := range []string{
		"x: " + strings.Repeat("[", 1500) + strings.Repeat("]", 1500) + "\n",
		"x: " + strings.Repeat("{a: ", 1500) + "1" + strings.Repeat("}", 1500) + "\n",
	} {
		c := yamlcheck.New("f.yaml", []byte(deep))
		if root, ok := c.Document([]byte(deep), "file", nil); root != nil || ok {
			t.Fatal("1,500 levels parsed")
		}
		if ps := c.Problems(); len(ps) != 1 || ps[0].Message != "the file nests mappings and sequences deeper than 1000 levels" {
			t.Errorf("1,500 levels: %v", ps)
		}
	}
}

func TestDir(t *testing.T) {
	t.Parallel()
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.yaml")
	if err := os.WriteFile(secret, []byte("secret: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "d")
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := func(target, name string) {
		t.Helper()
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Skip("no symlinks here:", err)
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	write("a.yaml", "a: 1\n")
	write("big.yml", strings.Repeat("#", 2000)+"\n")
	write(".hidden.yaml", "h: 1\n")
	write("notes.txt", "n\n")
	write(filepath.Join("sub", "in.yaml"), "in: 1\n")
	link("a.yaml", "b.yaml")                                                         // inside
	link(filepath.Join("sub", "in.yaml"), "c.yaml")                                  // inside, below
	link(secret, "d.yaml")                                                           // out, absolute
	link(filepath.Join("..", "..", filepath.Base(outside), "secret.yaml"), "e.yaml") // out, relative (target may not resolve)
	link(filepath.Join("..", "d", "a.yaml"), "f.yaml")                               // out and back in: refused, as os.Root does
	link("sub", "g.yaml")                                                            // a directory
	link("missing.yaml", "h.yaml")                                                   // dangling inside

	d, err := yamlcheck.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	names, err := d.Files()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(names, " "); got != "a.yaml b.yaml big.yml c.yaml d.yaml e.yaml f.yaml" {
		t.Errorf("Files = %s", got)
	}
	for name, want := range map[string]string{"a.yaml": "a: 1\n", "b.yaml": "a: 1\n", "c.yaml": "in: 1\n"} {
		if data, err := d.Read(name, 100); string(data) != want || err != nil {
			t.Errorf("Read(%s) = %q, %v", name, data, err)
		}
	}
	for _, name := range []string{"d.yaml", "e.yaml", "f.yaml"} {
		if data, err := d.Read(name, 100); !errors.Is(err, yamlcheck.ErrOutside) || data != nil {
			t.Errorf("Read(%s) = %q, %v; want ErrOutside", name, data, err)
		}
	}
	var big *yamlcheck.TooLargeError
	if _, err := d.Read("big.yml", 1024); !errors.As(err, &big) || err.Error() != "file too large: at most 1 KiB" {
		t.Errorf("Read(big.yml) = %v", err)
	}
	if data, err := d.Read("big.yml", 2001); err != nil || len(data) != 2001 {
		t.Errorf("Read(big.yml) at its size: %d bytes, %v", len(data), err)
	}
	if _, err := yamlcheck.ReadFile(filepath.Join(dir, "big.yml"), 2000); !errors.As(err, &big) {
		t.Errorf("ReadFile(big.yml) = %v", err)
	}
	if data, err := yamlcheck.ReadFile(filepath.Join(dir, "d.yaml"), 100); err != nil || string(data) != "secret: 1\n" {
		t.Errorf("ReadFile follows a link the user named: %q, %v", data, err)
	}
}

// Every problem at a node carries its column, and String shows file:line:column.
func TestColumns(t *testing.T) {
	t.Parallel()
	_, problems := scenario.Parse("s.yaml", []byte("name: x\ndeployments:\n  uploads: sloppy\n  lifecyle: []\n"))
	var got []string
	for _, p := range problems {
		got = append(got, p.String())
	}
	want := []string{
		`s.yaml:3:12: deployments.uploads: "sloppy": want lenient or strict`,
		`s.yaml:4:3: deployments: unknown key "lifecyle" (did you mean "lifecycle"?)`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("problems\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A syntax error points at a line and a column, and says what a user would look for: a
// tab is named a tab, and a block yaml.v3 reports left open at its start is pointed at
// the line whose indentation lines up with nothing above it (issue 33 item 6).
func TestSyntaxErrorColumnsAndWords(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, yaml string
		line, col  int
		want       []string
	}{
		{"tab that starts no token", "a:\n\tb: 1\n", 2, 1, []string{"tab"}},
		{"tab after spaces", "a:\n  b:\n  \tc: 1\n", 3, 3, []string{"tab"}},
		{"tab that violates indentation", "a: 1\n\tb: 2\n", 2, 1, []string{"tab"}},
		{"key between two levels", "a:\n  b:\n    c: 1\n   d: 2\n", 4, 4, []string{"did not find expected key", "indented by 3 spaces", "0, 2, 4"}},
		{"key short of its siblings", "a:\n  b: 1\n c: 2\n", 3, 2, []string{"indented by 1 space,"}},
		{"under a line that opens nothing", "name: x\ndeployments:\n  lifecycle: []\n    extra: 1\n", 4, 5, []string{"indented by 4 spaces"}},
		{"after a list item", "name: x\ndeployments:\n  lifecycle:\n    - {status: queued}\n   building: 2\n", 5, 4, []string{"indented by 3 spaces", "0, 2, 4, 6"}},
		{"a stray item: its first column", "a: 1\nb: 2\n- c\n", 3, 1, []string{"did not find expected key"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := yamlcheck.New("f.yaml", []byte(tt.yaml))
			if root, ok := c.Document([]byte(tt.yaml), "file", nil); root != nil || ok {
				t.Fatalf("%q parsed", tt.yaml)
			}
			ps := c.Problems()
			if len(ps) != 1 || ps[0].Line != tt.line || ps[0].Column != tt.col {
				t.Fatalf("%q: %v, want one problem at %d:%d", tt.yaml, ps, tt.line, tt.col)
			}
			for _, w := range tt.want {
				if !strings.Contains(ps[0].Message, w) {
					t.Errorf("%q: %q does not say %q", tt.yaml, ps[0].Message, w)
				}
			}
		})
	}
}
