package testkit

import "testing"

// failedTB is a test that failed.
type failedTB struct{ testing.TB }

func (failedTB) Failed() bool { return true }

// Under hostemu mutate a failed test writes no failure bundle, as the JS and Python
// testkits do: the remote is not asked for one (a nil remote would panic if it were).
func TestNoFailureBundleUnderMutate(t *testing.T) {
	t.Setenv(MutantEnv, "http://127.0.0.1:1/r/x")
	var r remote
	r.saveOnFailure(failedTB{t})
}
