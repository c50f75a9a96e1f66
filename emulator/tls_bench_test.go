package emulator_test

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/hostemu/hostemu/emulator"
	"github.com/hostemu/hostemu/emulator/internal/clock"
)

// BenchmarkTLSHandshakeGet is a new TLS connection (a full TLS 1.3 handshake, no
// resumption) and one small GET per iteration: hostemu serving a deployment's page at
// its host, against Go's TLS server with one fixed certificate (a P-256 leaf, as
// hostemu's) returning the same bytes. After the first handshake hostemu's certificate
// comes from its cache.
func BenchmarkTLSHandshakeGet(b *testing.B) {
	o := emulator.Options{Fixtures: "testdata/fixtures.yaml", ClockMode: clock.Manual, ClockStart: testStart, TLSAddr: "127.0.0.1:0", RateLimitsOff: true}
	srv, err := emulator.Listen(o)
	if err != nil {
		b.Fatal(err)
	}
	go srv.Serve()
	defer srv.Shutdown(context.Background())
	e := &tlsEnv{env: &env{t: b, emu: srv.Emulator(), url: srv.URL()}, srv: srv}
	var dep struct{ URL string }
	jsonUnmarshal(e.get("/v1/deployments/dpl_first", "t-read").Body, &dep)
	page := e.do(req{Method: "GET", Path: "/", Host: strings.TrimPrefix(dep.URL, "https://")}).Body

	// the baseline: a fixed certificate for the same name, from the same CA
	fixed, err := e.emu.TLSConfig().GetCertificate(&tls.ClientHelloInfo{ServerName: strings.TrimPrefix(dep.URL, "https://")})
	if err != nil || fixed == nil {
		b.Fatalf("certificate: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	base := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(page)
	}), TLSConfig: &tls.Config{Certificates: []tls.Certificate{*fixed}}}
	go base.ServeTLS(ln, "", "")
	defer base.Close()

	run := func(b *testing.B, addr string) {
		tr := &http.Transport{
			DisableKeepAlives: true,
			TLSClientConfig:   e.clientTLS(""),
			DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
				return (&net.Dialer{Timeout: ioTimeout}).DialContext(ctx, network, addr)
			},
		}
		defer tr.CloseIdleConnections()
		c := &http.Client{Transport: tr, Timeout: ioTimeout}
		b.ReportAllocs()
		for b.Loop() {
			res, err := c.Get(dep.URL + "/")
			if err != nil {
				b.Fatal(err)
			}
			n, _ := io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode != 200 || n != int64(len(page)) {
				b.Fatalf("%s: %d bytes", res.Status, n)
			}
		}
	}
	b.Run("hostemu", func(b *testing.B) { run(b, strings.TrimPrefix(srv.TLSURL(), "https://")) })
	b.Run("go-tls-fixed-cert", func(b *testing.B) { run(b, ln.Addr().String()) })
}
