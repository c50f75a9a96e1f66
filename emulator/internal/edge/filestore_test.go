package edge_test

import (
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/hostemu/hostemu/emulator/internal/edge"
)

func TestFileStorePut(t *testing.T) {
	t.Parallel()
	s := edge.NewFileStore(10)
	a := []byte("hello") // 5 bytes
	da := edge.Digest(a)
	if err := s.Put(da, a); err != nil {
		t.Fatal(err)
	}
	if err := s.Put(da, a); err != nil || s.Used() != 5 || s.Len() != 1 {
		t.Fatalf("second Put of the same digest: err %v, used %d, len %d; want free", err, s.Used(), s.Len())
	}
	if got, ok := s.Get(da); !ok || string(got) != "hello" {
		t.Fatalf("Get = %q, %v", got, ok)
	}
	cases := []struct {
		name   string
		digest string
		data   string
		want   error
	}{
		{"mismatch", edge.Digest([]byte("other")), "hello!", edge.ErrDigestMismatch},
		{"upper-case digest", strings.ToUpper(edge.Digest([]byte("x"))), "x", edge.ErrInvalidDigest},
		{"short digest", "abc", "x", edge.ErrInvalidDigest},
		{"past the budget", edge.Digest([]byte("world!")), "world!", edge.ErrStorageFull},
		{"larger than the budget", edge.Digest([]byte("0123456789a")), "0123456789a", edge.ErrStorageFull},
	}
	for _, c := range cases {
		if err := s.Put(c.digest, []byte(c.data)); !errors.Is(err, c.want) {
			t.Errorf("%s: Put = %v, want %v", c.name, err, c.want)
		}
		if s.Has(c.digest) {
			t.Errorf("%s: stored after a failed Put", c.name)
		}
	}
	if s.Used() != 5 || s.Len() != 1 {
		t.Fatalf("failed Puts changed the store: used %d, len %d", s.Used(), s.Len())
	}
	b := []byte("world") // exactly fills the budget
	if err := s.Put(edge.Digest(b), b); err != nil || s.Used() != 10 {
		t.Fatalf("filling to the budget: %v, used %d", err, s.Used())
	}
}

func TestFileStoreDefaultLimit(t *testing.T) {
	t.Parallel()
	if got := edge.NewFileStore(0).Limit(); got != 256<<20 {
		t.Fatalf("Limit = %d, want 256 MiB", got)
	}
}

func TestFileStoreSnapshotLoadReset(t *testing.T) {
	t.Parallel()
	s := edge.NewFileStore(100)
	da := mustPut(t, s, "alpha")
	db := mustPut(t, s, "beta")
	snap := s.Snapshot()
	if len(snap) != 2 || string(snap[da]) != "alpha" || string(snap[db]) != "beta" {
		t.Fatalf("Snapshot = %q", snap)
	}

	other := edge.NewFileStore(100)
	if err := other.Load(snap); err != nil || other.Used() != 9 || !other.Has(da) || !other.Has(db) {
		t.Fatalf("Load: %v, used %d", err, other.Used())
	}

	bad := map[string][]byte{da: []byte("alpha"), db: []byte("tampered")}
	if err := other.Load(bad); !errors.Is(err, edge.ErrDigestMismatch) {
		t.Fatalf("Load of a tampered snapshot = %v", err)
	}
	big := map[string][]byte{edge.Digest(make([]byte, 101)): make([]byte, 101)}
	if err := other.Load(big); !errors.Is(err, edge.ErrStorageFull) {
		t.Fatalf("Load past the budget = %v", err)
	}
	if other.Used() != 9 || other.Len() != 2 {
		t.Fatalf("failed Loads changed the store: used %d, len %d", other.Used(), other.Len())
	}

	other.Reset()
	if other.Used() != 0 || other.Len() != 0 || other.Has(da) {
		t.Fatal("Reset left files behind")
	}
	if !s.Has(da) {
		t.Fatal("Reset of one store emptied another")
	}
}

// TestFileStoreConcurrentPuts races writers of distinct and shared contents against a
// budget that fits only some: the budget holds, and used is the sum of what was stored.
func TestFileStoreConcurrentPuts(t *testing.T) {
	t.Parallel()
	const limit = 1000
	s := edge.NewFileStore(limit)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 50 {
				data := []byte(strings.Repeat(string(rune('a'+i%26)), 10+(i+g)%7))
				err := s.Put(edge.Digest(data), data)
				if err != nil && !errors.Is(err, edge.ErrStorageFull) {
					t.Errorf("Put: %v", err)
				}
				s.Get(edge.Digest(data))
			}
		})
	}
	wg.Wait()
	var sum int64
	for _, b := range s.Snapshot() {
		sum += int64(len(b))
	}
	if sum != s.Used() || s.Used() > limit {
		t.Fatalf("used %d, contents %d, limit %d", s.Used(), sum, limit)
	}
}
