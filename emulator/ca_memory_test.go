package emulator

import (
	"context"
	"os"
	"testing"
)

// CADir ":memory:" is a CA in memory for a Go caller too: no directory of that name
// appears where the process runs.
func TestCADirMemoryMakesNoDirectory(t *testing.T) {
	t.Chdir(t.TempDir())
	srv, err := Listen(Options{Addr: "127.0.0.1:0", TLSAddr: "127.0.0.1:0", CADir: CAInMemory})
	if err != nil {
		t.Fatal(err)
	}
	srv.Shutdown(context.Background())
	if _, err := os.Stat(CAInMemory); !os.IsNotExist(err) {
		t.Errorf("a directory %q was made: %v", CAInMemory, err)
	}
}
