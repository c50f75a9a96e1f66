// Package childtest is run by testkit's TestFailedTestLeavesABundle as a child go test:
// one test passes, one fails when HOSTEMU_CHILD_FAIL is set.
package childtest

import (
	"net/http"
	"os"
	"testing"

	"github.com/hostemu/hostemu/testkit"
)

func TestPasses(t *testing.T) {
	emu := testkit.Start(t, testkit.WithoutTLS())
	res, err := http.Get(emu.URL() + "/v1/projects")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
}

func TestCheckout(t *testing.T) {
	emu := testkit.Start(t, testkit.WithoutTLS())
	emu.InjectFault(testkit.FaultSpec{Match: testkit.FaultMatch{Path: "/v1/projects"}, Status: 503})
	req, _ := http.NewRequest("GET", emu.URL()+"/v1/projects", nil)
	req.Header.Set("Authorization", "Bearer "+emu.ReadToken())
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if os.Getenv("HOSTEMU_CHILD_FAIL") != "" && res.StatusCode != 200 {
		t.Errorf("GET /v1/projects: %d", res.StatusCode)
	}
}
