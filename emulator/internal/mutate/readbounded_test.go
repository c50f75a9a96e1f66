package mutate

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// readBounded takes no more memory than the bytes it is charged for (outputsHeld): a
// buffer of n, not io.ReadAll's growth past it; and it reads at most n bytes.
func TestReadBoundedTakesWhatItIsCharged(t *testing.T) {
	path := filepath.Join(t.TempDir(), "output")
	content := bytes.Repeat([]byte("0123456789"), 300000)
	if err := os.WriteFile(path, content, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int64{int64(len(content)), 1000, int64(len(content)) + 10, 0} {
		b, err := readBounded(path, n)
		want := content[:min(n, int64(len(content)))]
		if err != nil || !bytes.Equal(b, want) || int64(cap(b)) > n {
			t.Errorf("n %d: %d bytes (want %d), cap %d, err %v", n, len(b), len(want), cap(b), err)
		}
	}
	// one buffer of n: io.ReadAll built chunks, then copied them into a final slice,
	// taking about twice what was charged
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	b, err := readBounded(path, int64(len(content)))
	runtime.ReadMemStats(&after)
	if took := after.TotalAlloc - before.TotalAlloc; err != nil || len(b) != len(content) || took > uint64(len(content))*3/2 {
		t.Errorf("reading %d bytes allocated %d", len(content), took)
	}
}
