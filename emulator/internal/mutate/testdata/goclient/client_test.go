package goclient

import (
	"os"
	"testing"

	"github.com/hostemu/hostemu/testkit"
)

// TestProjectCount calls ProjectCount and looks at nothing that an error changes: its
// mutants survive.
func TestProjectCount(t *testing.T) {
	emu := testkit.Start(t)
	if n := ProjectCount(emu.URL(), emu.ReadToken()); n < 0 {
		t.Fatalf("ProjectCount = %d", n)
	}
}

// TestCreateDeployment checks the error: its mutants are killed.
func TestCreateDeployment(t *testing.T) {
	if os.Getenv("GOCLIENT_FAIL") != "" {
		t.Fatal("GOCLIENT_FAIL is set: the baseline fails")
	}
	emu := testkit.Start(t)
	id, err := CreateDeployment(emu.URL(), emu.DeployToken(), "prj_demo")
	if err != nil {
		t.Fatal(err)
	}
	if id == "" {
		t.Fatal("no id")
	}
}
