// Package goconnect is mutate's end-to-end check of testkit.Connect: the same sample
// client as goclient, each test in a namespace of one running hostemu ($HOSTEMU_URL),
// rounds running in parallel against it.
package goconnect

import (
	"os"
	"testing"

	"github.com/hostemu/hostemu/emulator/internal/mutate/testdata/goclient"
	"github.com/hostemu/hostemu/testkit"
)

func connect(t *testing.T) *testkit.Emulator {
	url := os.Getenv("HOSTEMU_URL")
	if url == "" {
		t.Skip("HOSTEMU_URL names no running hostemu")
	}
	return testkit.Connect(t, url)
}

func TestConnectProjectCount(t *testing.T) {
	emu := connect(t)
	if n := goclient.ProjectCount(emu.URL(), emu.ReadToken()); n < 0 {
		t.Fatalf("ProjectCount = %d", n)
	}
}

func TestConnectCreateDeployment(t *testing.T) {
	emu := connect(t)
	if _, err := goclient.CreateDeployment(emu.URL(), emu.DeployToken(), "prj_demo"); err != nil {
		t.Fatal(err)
	}
}
