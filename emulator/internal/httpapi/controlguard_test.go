package httpapi

import (
	"net/http/httptest"
	"testing"

	"github.com/hostemu/hostemu/emulator/internal/edge"
)

// --public-url's host and origin pass the control guard, in any case and with any
// port on the Host header; other names do not.
func TestControlGuardKnowsPublicURL(t *testing.T) {
	a := &API{publicHost: publicHostOf("https://Emu.Example:8443/"), publicOrigin: publicOriginOf("https://Emu.Example:8443/")}
	for host, want := range map[string]bool{
		"emu.example": true, "EMU.example:8443": true, "emu.example.": true, "localhost:4700": true, "[::1]:4700": true,
		"evil.example": false, "emu.example.evil": false, "10.0.0.1": false, "": false,
		// the edge's names are never the control API's
		"x.pwn.localhost:4700": false, "demo-abc.hostemu.localhost": false,
	} {
		if got := a.controlHost(edge.NormalizeHost(host)); got != want {
			t.Errorf("controlHost(%q) = %v, want %v", host, got, want)
		}
	}
	r := httptest.NewRequest("GET", "http://127.0.0.1:4700/_emulator/clock", nil)
	for origin, want := range map[string]bool{
		"https://emu.example:8443": true, "HTTPS://EMU.EXAMPLE:8443": true, "http://127.0.0.1:4700": true,
		"https://emu.example": false, "http://emu.example:8443": false, "https://evil.example": false,
	} {
		if got := a.ownOrigin(r, origin); got != want {
			t.Errorf("ownOrigin(%q) = %v, want %v", origin, got, want)
		}
	}
	if none := (&API{publicOrigin: publicOriginOf("")}); none.publicOrigin != "" || none.controlHost("emu.example") {
		t.Errorf("without --public-url: origin %q, emu.example allowed %v", none.publicOrigin, none.controlHost("emu.example"))
	}
}
