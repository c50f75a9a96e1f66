package mutate

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// fakeAlone is a runner whose tests run alone and whose runs do nothing: the outcomes
// are canned, and test "B" cannot be narrowed to.
type fakeAlone struct{}

func (fakeAlone) Name() string       { return "fake" }
func (fakeAlone) Alone() bool        { return true }
func (fakeAlone) Key(h Hello) string { return h.Test }
func (fakeAlone) Command(argv []string, dir string, only []string) ([]string, error) {
	if len(only) == 1 && only[0] == "B" {
		return nil, errors.New("two tests are named B")
	}
	return []string{"sh", "-c", "exit 0"}, nil
}
func (fakeAlone) Results(dir string, out []byte) (map[string]Outcome, error) {
	return map[string]Outcome{"A": {}, "B": {}}, nil
}

// A test that cannot run alone is not mutated, and says why; it does not stop the run.
func TestAloneSkipsWhatCannotRunAlone(t *testing.T) {
	cat, err := DefaultCatalogue()
	if err != nil {
		t.Fatal(err)
	}
	run, err := Execute(context.Background(), Config{Argv: []string{"fake"}, Runner: fakeAlone{}, Parallel: 2, Catalogue: cat})
	if errors.Is(err, ErrBaseline) || err == nil || !strings.Contains(err.Error(), "no mutants") {
		t.Fatalf("err = %v, want no mutants (the fake's runs make no world), not a failed baseline", err)
	}
	if len(run.Baseline.Skipped) != 1 || run.Baseline.Skipped[0].Test != "B" || !strings.Contains(run.Baseline.Skipped[0].Why, "two tests are named B") {
		t.Errorf("skipped = %+v", run.Baseline.Skipped)
	}
}
