package testkit_test

import (
	"archive/tar"
	"compress/gzip"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hostemu/hostemu/testkit"
)

// A failed test in a child go test leaves exactly one bundle, named after it, and its
// log prints the replay command; the passing test leaves none. The bundle opens.
func TestFailedTestLeavesABundle(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a child go test")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool")
	}
	dir := filepath.Join(t.TempDir(), "my artifacts") // as on many laptops: a space
	args := []string{"test", "-count=1", "-v"}
	if raceEnabled {
		args = append(args, "-race")
	}
	args = append(args, "./testdata/childtest")
	run := func(fail bool) (string, error) {
		cmd := exec.Command(goTool, args...)
		cmd.Env = append(os.Environ(), testkit.ArtifactsEnv+"="+dir)
		if fail {
			cmd.Env = append(cmd.Env, "HOSTEMU_CHILD_FAIL=1")
		}
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := run(false)
	if err != nil {
		t.Fatalf("the passing run failed: %v\n%s", err, out)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("passing tests left %d files", len(entries))
	}
	out, err = run(true)
	if err == nil {
		t.Fatalf("the failing run passed:\n%s", out)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != "TestCheckout.hostemu.tgz" {
		t.Fatalf("want exactly TestCheckout.hostemu.tgz, got %v\n%s", entries, out)
	}
	path := filepath.Join(dir, "TestCheckout.hostemu.tgz")
	if !strings.Contains(out, `hostemu replay "`+path+`"`) { // as printed, it works in a shell
		t.Fatalf("the log does not print the replay command for %s:\n%s", path, out)
	}
	// #33: failure.txt names the test, and says Go gives no message
	if f := bundleMember(t, path, "failure.txt"); !strings.Contains(f, "TestCheckout failed (testing.T.Failed() is true)") || !strings.Contains(f, "does not give the failure's message") {
		t.Errorf("failure.txt: %q", f)
	}
	// it is a bundle of that world: the journal holds the 503
	emu := testkit.Start(t, testkit.WithoutTLS())
	emu.LoadBundle(path)
	got := emu.Requests(testkit.RequestFilter{Path: "/v1/projects"})
	if len(got) != 1 || got[0].Status != 503 {
		t.Fatalf("the replayed journal: %+v", got)
	}
}

func TestBundleAndLoadBundle(t *testing.T) {
	a := testkit.Start(t, testkit.WithoutTLS(), testkit.WithSeed(9))
	a.Advance(3_000_000_000)
	path := filepath.Join(t.TempDir(), "a.hostemu.tgz")
	a.Bundle(path)
	b := testkit.Start(t, testkit.WithoutTLS())
	b.LoadBundle(path)
	if !a.Now().Equal(b.Now()) {
		t.Fatalf("clock %s, want %s", b.Now(), a.Now())
	}
}

// bundleMember is one member of a bundle file, as text.
func bundleMember(t *testing.T, file, member string) string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err != nil {
			t.Fatalf("%s: no %s (%v)", file, member, err)
		}
		if h.Name == member {
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			return string(b)
		}
	}
}
