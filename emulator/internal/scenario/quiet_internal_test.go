package scenario

import (
	"maps"
	"os"
	"path/filepath"
	"testing"
)

// The quiet check sees a file that grew without the watcher hearing of it: the stamps
// before and after a second chunk differ, and equal stamps mean a quiet directory.
func TestStampsSeeASecondChunk(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(p, []byte("name: s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	first := stamps(dir)
	if again := stamps(dir); !maps.Equal(first, again) {
		t.Fatalf("an untouched directory is not quiet: %v then %v", first, again)
	}
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("description: second chunk\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if maps.Equal(first, stamps(dir)) {
		t.Error("a file that grew looks quiet")
	}
	if stamps(filepath.Join(dir, "missing")) != nil {
		t.Error("stamps of a missing directory")
	}
}
