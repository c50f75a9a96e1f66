package httpapi

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/clock"
	"github.com/hostemu/hostemu/emulator/internal/edge"
	"github.com/hostemu/hostemu/emulator/internal/scenario"
	"github.com/hostemu/hostemu/emulator/internal/state"
	"github.com/hostemu/hostemu/emulator/internal/world"
)

// newTLSTestAPI serves a world with an issued domain, an issued wildcard and a pending
// domain, on a manual clock.
func newTLSTestAPI(tb testing.TB) *API {
	tb.Helper()
	reg, err := scenario.NewRegistry()
	if err != nil {
		tb.Fatal(err)
	}
	at := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	issuer, exp := "Fuzz CA", at.Add(60*24*time.Hour)
	issued := state.TLS{Status: state.TLSIssued, ExpiresAt: &exp, Issuer: &issuer}
	w, err := world.New(world.Config{Scenarios: reg, ClockMode: clock.Manual, ClockStart: at, Fixtures: func() (state.Snapshot, error) {
		return state.Snapshot{
			Projects: []state.Project{{ID: "prj_a", Name: "a", CreatedAt: at}},
			Domains: []state.Domain{
				{Hostname: "shop.test", ProjectID: "prj_a", Status: state.StatusActive, CreatedAt: at, TLS: issued},
				{Hostname: "*.wild.test", ProjectID: "prj_a", Status: state.StatusActive, CreatedAt: at, TLS: issued},
				{Hostname: "pend.test", ProjectID: "prj_a", Status: state.StatusPending, CreatedAt: at, TLS: state.TLS{Status: state.TLSPending}},
			},
		}, nil
	}})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(w.Close)
	return New(w, Config{PublicURL: "https://emu.example"})
}

// FuzzServerName: whatever name a client asks for, hostemu serves a certificate that
// covers it (and is signed for a custom domain only while that domain's certificate is
// issued), or none; and CONNECT stays with hostemu only for the hosts it emulates.
func FuzzServerName(f *testing.F) {
	for _, s := range []string{"", "localhost", "shop.test", "SHOP.test.", "a.wild.test", "wild.test", "a.b.wild.test",
		"pend.test", "demo-abc.hostemu.localhost", "x.y.hostemu.localhost", "hostemu.localhost", "127.0.0.1", "::1",
		"[::1]", "10.0.0.1", "emu.example", "example.com", "a b.hostemu.localhost", "*.wild.test", "shop.test:443",
		"xn--bcher-kva.hostemu.localhost", strings.Repeat("a", 64) + ".hostemu.localhost", "\x00.shop.test"} {
		f.Add(s)
	}
	a := newTLSTestAPI(f)
	local := net.ParseIP("192.0.2.7")
	f.Fuzz(func(t *testing.T, name string) {
		spec, ok := a.certSpec(a.w, name, local)
		host := edge.NormalizeHost(name)
		if !ok {
			return
		}
		// a name hostemu serves a certificate for is one a CONNECT tunnel stays with
		// hostemu for (the reverse need not hold: a pending domain has no certificate)
		if name != "" && !a.emulatedHost(a.w, host, addrOf(local)) {
			t.Fatalf("%q: a certificate is served for it, yet CONNECT refuses it", name)
		}
		if spec.Issuer != "" {
			_, parent, _ := strings.Cut(host, ".")
			if host != "shop.test" && parent != "wild.test" {
				t.Fatalf("%q: a custom domain certificate for a name with none issued", name)
			}
			if spec.Issuer != "Fuzz CA" {
				t.Fatalf("%q: issuer %q", name, spec.Issuer)
			}
		}
		cert, err := a.cfg.CA.Leaf(spec)
		if err != nil {
			t.Fatalf("%q: minting %+v: %v", name, spec, err)
		}
		check := host
		if name == "" {
			check = local.String() // no SNI: a client dialling an address
		}
		if err := cert.Leaf.VerifyHostname(check); err != nil {
			t.Fatalf("%q: the certificate served does not cover it: %v", name, err)
		}
	})
}
