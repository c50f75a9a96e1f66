// Package gohang is mutate's check of --timeout: a test that, on an error, waits far
// longer than the run may take.
package gohang

import (
	"net/http"
	"testing"
	"time"

	"github.com/hostemu/hostemu/testkit"
)

func TestWaitsOnError(t *testing.T) {
	emu := testkit.Start(t)
	req, _ := http.NewRequest(http.MethodGet, emu.URL()+"/v1/projects", nil)
	req.Header.Set("Authorization", "Bearer "+emu.ReadToken())
	resp, err := http.DefaultClient.Do(req)
	if err == nil {
		resp.Body.Close()
	}
	if err != nil || resp.StatusCode != http.StatusOK {
		time.Sleep(10 * time.Minute) // what a client that backs off without a bound does
	}
}
