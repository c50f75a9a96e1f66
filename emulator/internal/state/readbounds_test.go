package state

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/hostemu/hostemu/emulator/internal/apperr"
)

// countedSource counts the bytes read from it.
type countedSource struct {
	r io.Reader
	n int64
}

func (c *countedSource) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// Nesting is bounded as the reader streams (issue 32, item 4): 263 KB of nested
// brackets held the process at 997 MB for 7.1 s before its 400. Now a value nested
// deeper than MaxDepth is refused at the bracket that goes too deep, naming the bound,
// with the first buffer of the document read and nothing decoded.
func TestReadSnapshotDepthBounded(t *testing.T) {
	t.Parallel()
	for _, doc := range []string{
		`{"tokens":[` + strings.Repeat("[", 263_000),
		`{"deployments":[{"env":` + strings.Repeat(`{"a":`, 100_000),
		`{"policy":` + strings.Repeat("[", 263_000),
	} {
		src := &countedSource{r: strings.NewReader(doc)}
		_, err := ReadSnapshot(src, ReadOptions{})
		e, coded := apperr.As(err)
		if !coded || e.Code != apperr.InvalidRequest || !strings.Contains(e.Message, "deeper than 32 levels") {
			t.Fatalf("%.30s…: %v; want 400 naming the depth bound", doc, err)
		}
		if src.n > 64<<10 {
			t.Errorf("%.30s…: read %d bytes before refusing", doc, src.n)
		}
	}
	// a state's own depth passes
	ok := `{"deployments":[{"id":"dpl_1","project_id":"prj_1","url":"https://a.test","status":"ready","env":{"A":"b"},"files":{},"logs":[{"created_at":"2026-01-01T00:00:00.000Z","text":"x"}]}]}`
	if _, err := ReadSnapshot(strings.NewReader(ok), ReadOptions{}); err != nil && strings.Contains(err.Error(), "deeper") {
		t.Errorf("a deployment with logs: %v", err)
	}
}

// One element's text, held whole while it is decoded, is charged to the caller's
// budget as it grows: an element bigger than the budget is refused (ErrRefused) before
// it is held, not after.
func TestReadSnapshotChargesElementText(t *testing.T) {
	t.Parallel()
	var charged int64
	budget := int64(256 << 10)
	charge := func(n int64) bool {
		if charged+n > budget {
			return false
		}
		charged += n
		return true
	}
	doc := `{"tokens":[{"token":"` + strings.Repeat("x", 4<<20) + `","scope":"read"}]}`
	_, err := ReadSnapshot(strings.NewReader(doc), ReadOptions{Charge: charge})
	if !errors.Is(err, ErrRefused) {
		t.Fatalf("a 4 MiB element against a 256 KiB budget: %v; want ErrRefused", err)
	}
	if charged > budget {
		t.Errorf("charged %d of %d", charged, budget)
	}
	// within the budget, it is read
	charged, budget = 0, 64<<20
	if _, err := ReadSnapshot(strings.NewReader(doc), ReadOptions{Charge: charge}); err != nil {
		t.Fatalf("within the budget: %v", err)
	}
	if charged < 4<<20 {
		t.Errorf("a 4 MiB element charged %d bytes", charged)
	}
}
