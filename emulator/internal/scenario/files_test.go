package scenario_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/hostemu/hostemu/emulator/internal/scenario"
)

// secret stands for a file outside the scenarios directory, such as /etc/passwd: YAML
// reads it as one long plain scalar.
const secret = "root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\nhunter2:the-secret-line\n"

func TestLoadDirRefusesLinksOut(t *testing.T) {
	t.Parallel()
	r := newRegistry(t)
	dir := t.TempDir()
	target := writeFile(t, t.TempDir(), "passwd", secret)
	if err := os.Symlink(target, filepath.Join(dir, "leak.yaml")); err != nil {
		t.Skip("no symlinks here:", err)
	}
	if err := os.Symlink(filepath.Join("..", filepath.Base(dir), "..", "x", "y.yaml"), filepath.Join(dir, "dangling-out.yaml")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "good.yaml", "description: good\n")
	problems := r.LoadDir(dir)
	// A link out is refused whether or not its target exists, and nothing of it is read.
	want := []scenario.Problem{
		{File: filepath.Join(dir, "dangling-out.yaml"), Message: "symlink leads outside the directory"},
		{File: filepath.Join(dir, "leak.yaml"), Message: "symlink leads outside the directory"},
	}
	if !reflect.DeepEqual(problems, want) {
		t.Fatalf("problems %v, want %v", problems, want)
	}
	if description(t, r, "good") != "good" {
		t.Errorf("the good file next to it: %v", r.List())
	}
	if _, ok := r.Get("leak"); ok {
		t.Error("a link out of the directory was loaded")
	}
}

func TestWatchRefusesLinksOut(t *testing.T) {
	t.Parallel()
	dir := newWatchedDir(t)
	w := startWatch(t, dir)
	target := writeFile(t, t.TempDir(), "passwd", secret)
	if err := os.Symlink(target, filepath.Join(dir, "leak.yaml")); err != nil {
		t.Skip("no symlinks here:", err)
	}
	w.waitFor(t, "the link's problem", func() bool { return len(w.r.Problems()) > 0 })
	if got := w.r.Problems(); len(got) != 1 || got[0].Message != "symlink leads outside the directory" {
		t.Errorf("problems %v", got)
	}
	if log := w.log.String(); strings.Contains(log, "hunter2") || !strings.Contains(log, "symlink leads outside") {
		t.Errorf("log:\n%s", log)
	}
}

func TestLoadDirRefusesHugeFiles(t *testing.T) {
	t.Parallel()
	r := newRegistry(t)
	dir := t.TempDir()
	big := writeFile(t, dir, "big.yaml", "description: big\n")
	if err := os.Truncate(big, 1<<20+1); err != nil { // sparse: cheap to make
		t.Fatal(err)
	}
	atLimit := writeFile(t, dir, "at-limit.yaml", "description: at the limit\n")
	padTo(t, atLimit, 1<<20)
	problems := r.LoadDir(dir)
	if len(problems) != 1 || problems[0].File != big || problems[0].Message != "file too large: at most 1 MiB for a scenario file" {
		t.Fatalf("problems %v", problems)
	}
	if description(t, r, "at-limit") != "at the limit" {
		t.Errorf("a file of exactly 1 MiB: %v", r.List())
	}
}

// padTo appends a comment to the file so that it is size bytes long.
func padTo(tb testing.TB, path string, size int) {
	tb.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	pad := "#" + strings.Repeat("x", size-len(data)-2) + "\n"
	if err := os.WriteFile(path, append(data, pad...), 0o644); err != nil {
		tb.Fatal(err)
	}
}

// TestProblemsQuoteOnlyExcerpts: whatever a file holds, a problem quotes at most
// yamlcheck.MaxExcerpt characters of it.
func TestProblemsQuoteOnlyExcerpts(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("A", 500_000)
	for name, text := range map[string]string{
		"passwd":              secret,
		"one long line":       "deployments: " + long + "\n",
		"long key":            "name: x\n" + long + ": 1\n",
		"long status":         "deployments:\n  lifecycle:\n    - status: " + long + "\n",
		"long unknown anchor": "name: x\ndescription: *" + long + "\n",
		"long env key":        "deployments:\n  rules:\n    - when: {env: {" + long + ": [1]}}\n      lifecycle: [{status: queued}]\n",
	} {
		_, problems := scenario.Parse("s.yaml", []byte(text))
		if len(problems) == 0 {
			t.Errorf("%s: no problem", name)
		}
		for _, p := range problems {
			if len(p.Message) > 400 || strings.Contains(p.Message, "hunter2") || strings.Contains(p.Message, strings.Repeat("A", 81)) {
				t.Errorf("%s: %d-byte message quotes too much: %.300s", name, len(p.Message), p.Message)
			}
		}
	}
	_, problems := scenario.Parse("s.yaml", []byte(secret))
	want := `a scenario is a mapping with keys name, description, deployments, domains, certificates, rate_limits, faults, got "root:x:0:0:root:/root:/bin/bash daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin …"`
	if len(problems) != 1 || problems[0].Message != want {
		t.Errorf("passwd: %v\nwant %s", problems, want)
	}
}
