package transport

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// bodyGrace is the grace of the servers below: a stalled body is cut this long after
// its request started (their rate makes the bytes' share negligible).
const bodyGrace = 50 * time.Millisecond

// bodyServer serves, on a listener of Conns (over TLS when tlsOn), a handler that
// reads the whole body and answers "got N" or "error ERR"; /skip answers at once
// without reading it. Each answer starts "lazy " when the body's deadline was handed to
// the connection (limitedConn.setBodyDeadline). It returns a dial function.
func bodyServer(t *testing.T, tlsOn bool) func() (net.Conn, *bufio.Reader) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	lim := Limits{ReadHeaderTimeout: 10 * time.Second, IdleTimeout: time.Minute, BodyReadTimeout: bodyGrace, MinBodyRate: 1 << 30, WriteStallTimeout: 10 * time.Second}
	conns := newConns(8, lim)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		lazy := ""
		if b, ok := r.Body.(*rateBody); ok && b.conn != nil {
			lazy = "lazy " // the deadline handed to the connection
		}
		if r.URL.Path == "/skip" {
			io.WriteString(w, lazy+"skipped")
			return
		}
		n, err := io.Copy(io.Discard, r.Body)
		if err != nil {
			fmt.Fprintf(w, "%serror %v", lazy, err)
			return
		}
		if r.URL.Path == "/trailer" {
			fmt.Fprintf(w, "%sgot %d, trailer %q", lazy, n, r.Trailer.Get("X-Sum"))
			return
		}
		if r.URL.Path == "/again" {
			// a read after the end, and whether the server's own body is closed
			_, again := r.Body.Read(make([]byte, 1))
			closed := false
			if b, ok := r.Body.(*rateBody); ok {
				_, err := b.ReadCloser.Read(make([]byte, 1))
				closed = err == http.ErrBodyReadAfterClose
			}
			fmt.Fprintf(w, "%sgot %d, again %v, closed %v", lazy, n, again, closed)
			return
		}
		fmt.Fprintf(w, "%sgot %d", lazy, n)
	})
	log := slog.New(slog.DiscardHandler)
	var srv *http.Server
	if tlsOn {
		srv = TLSServer(h, lim, conns, &tls.Config{Certificates: []tls.Certificate{selfSigned(t)}}, log)
		go srv.ServeTLS(conns.Listener(ln), "", "")
	} else {
		srv = HTTPServer(h, lim, conns, log)
		go srv.Serve(conns.Listener(ln))
	}
	t.Cleanup(func() { srv.Close() })
	return func() (net.Conn, *bufio.Reader) {
		t.Helper()
		var c net.Conn
		var err error
		if tlsOn {
			c, err = tls.Dial("tcp", ln.Addr().String(), &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"http/1.1"}})
		} else {
			c, err = net.Dial("tcp", ln.Addr().String())
		}
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c, bufio.NewReader(c)
	}
}

func selfSigned(t *testing.T) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "x"}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), DNSNames: []string{"x"}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// answer reads one answer on c (within a generous limit: a stalled body never cut
// fails here) and checks that its body contains each of want.
func answer(t *testing.T, c net.Conn, br *bufio.Reader, want ...string) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	defer c.SetReadDeadline(time.Time{})
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("no answer (want %q): %v", want, err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, w := range want {
		if !strings.Contains(string(b), w) {
			t.Fatalf("answered %d %q, want %q", resp.StatusCode, b, want)
		}
	}
}

func send(t *testing.T, c net.Conn, s string) {
	t.Helper()
	if _, err := io.WriteString(c, s); err != nil {
		t.Fatal(err)
	}
}

// A body stalled after a first part that came with the request's head (in net/http's
// buffer, and past it) is cut by its deadline, however it is framed, over TLS too, and
// its connection closed.
func TestBodyDeadlineCutsAStalledBody(t *testing.T) {
	part := strings.Repeat("x", 6000) // more than net/http's 4 KiB buffer
	for _, tlsOn := range []bool{false, true} {
		for _, tc := range []struct{ name, head, sent string }{
			{"length", "Content-Length: 100000\r\n", part},
			{"length, head only", "Content-Length: 100000\r\n", ""},
			{"chunked", "Transfer-Encoding: chunked\r\n", fmt.Sprintf("%x\r\n%s\r\n", len(part), part)},
			{"chunked, mid-chunk", "Transfer-Encoding: chunked\r\n", "100000\r\n" + part},
		} {
			t.Run(fmt.Sprintf("tls=%v/%s", tlsOn, tc.name), func(t *testing.T) {
				c, br := bodyServer(t, tlsOn)()
				send(t, c, "POST / HTTP/1.1\r\nHost: x\r\n"+tc.head+"\r\n"+tc.sent)
				answer(t, c, br, "lazy error", "timeout")
				waitClosed(t, c) // a cut body's connection does not live on
			})
		}
	}
}

// With Expect: 100-continue the body is asked for by the first read; one stalled
// after the 100 Continue is cut.
func TestBodyDeadlineCutsAStalledBodyAfterContinue(t *testing.T) {
	for _, tlsOn := range []bool{false, true} {
		t.Run(fmt.Sprintf("tls=%v", tlsOn), func(t *testing.T) {
			c, br := bodyServer(t, tlsOn)()
			send(t, c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\nExpect: 100-continue\r\n\r\n")
			answer(t, c, br) // 100 Continue
			send(t, c, strings.Repeat("x", 6000))
			answer(t, c, br, "lazy error", "timeout")
			waitClosed(t, c)
		})
	}
}

// A body read from the connection under its deadline, to its end or not, leaves no
// deadline behind: the keep-alive connection, idle past the body's deadline, serves
// its next request.
func TestBodyDeadlineEndsWithItsRequest(t *testing.T) {
	body := strings.Repeat("x", 40000) // past the buffer and the 16 KiB step
	for _, tlsOn := range []bool{false, true} {
		for _, path := range []string{"/", "/skip"} {
			t.Run(fmt.Sprintf("tls=%v%s", tlsOn, path), func(t *testing.T) {
				c, br := bodyServer(t, tlsOn)()
				send(t, c, fmt.Sprintf("POST %s HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s", path, len(body), body))
				if path == "/" {
					answer(t, c, br, "lazy got 40000")
				} else {
					answer(t, c, br, "lazy skipped")
				}
				time.Sleep(2 * bodyGrace) // idle past the body's deadline
				send(t, c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
				answer(t, c, br, "got 0")
				send(t, c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello")
				answer(t, c, br, "got 5")
			})
		}
	}
}

// An HTTP/1 body read to its end is closed at once (net/http then has nothing to
// discard after the handler), and a read after its end still answers io.EOF: the
// connection serves its next requests, the body framed by length or chunked.
func TestBodyReadToItsEndClosed(t *testing.T) {
	for _, tlsOn := range []bool{false, true} {
		t.Run(fmt.Sprintf("tls=%v", tlsOn), func(t *testing.T) {
			c, br := bodyServer(t, tlsOn)()
			send(t, c, "POST /again HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello")
			answer(t, c, br, "lazy got 5, again EOF, closed true")
			send(t, c, "POST /again HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n")
			answer(t, c, br, "lazy got 3, again EOF, closed true")
			send(t, c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello")
			answer(t, c, br, "lazy got 5")
		})
	}
}

// The close at the body's end keeps what the server's body gave: a chunked body's
// trailer, read as it hits its end, is the handler's; a body sent on Expect:
// 100-continue is read (the 100 answered) and the connection then serves its next
// request; two requests pipelined in one write are both served.
func TestBodyClosedAtItsEndKeepsTheConnection(t *testing.T) {
	for _, tlsOn := range []bool{false, true} {
		t.Run(fmt.Sprintf("tls=%v", tlsOn), func(t *testing.T) {
			c, br := bodyServer(t, tlsOn)()
			send(t, c, "POST /trailer HTTP/1.1\r\nHost: x\r\nTrailer: X-Sum\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\nX-Sum: 42\r\n\r\n")
			answer(t, c, br, `lazy got 3, trailer "42"`)

			send(t, c, "POST /again HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n")
			c.SetReadDeadline(time.Now().Add(5 * time.Second))
			resp, err := http.ReadResponse(br, nil)
			c.SetReadDeadline(time.Time{})
			if err != nil || resp.StatusCode != http.StatusContinue {
				t.Fatalf("no 100 Continue: %v %v", resp, err)
			}
			send(t, c, "hello")
			answer(t, c, br, "lazy got 5, again EOF, closed true")

			send(t, c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nhi"+
				"POST /again HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc")
			answer(t, c, br, "lazy got 2")
			answer(t, c, br, "lazy got 3, again EOF, closed true")
		})
	}
}

// Pipelined requests, the first with a body that came in part with its head and in
// part later: the second is served, and the connection then idles past the first
// body's deadline without being cut.
func TestBodyDeadlinePipelined(t *testing.T) {
	c, br := bodyServer(t, false)()
	body := strings.Repeat("x", 10000)
	send(t, c, fmt.Sprintf("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s", len(body), body[:3000]))
	send(t, c, body[3000:]+"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc")
	answer(t, c, br, "got 10000")
	answer(t, c, br, "got 3")
	time.Sleep(2 * bodyGrace)
	send(t, c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	answer(t, c, br, "got 0")
}

// A handler that answers without reading the body: net/http reads what is left of it
// (up to 256 KiB) to keep the connection, under the body's deadline, so a body stalled
// there neither holds the answer nor keeps the connection.
func TestBodyDeadlineCutsAStalledBodyLeftUnread(t *testing.T) {
	for _, tlsOn := range []bool{false, true} {
		t.Run(fmt.Sprintf("tls=%v", tlsOn), func(t *testing.T) {
			c, br := bodyServer(t, tlsOn)()
			send(t, c, "POST /skip HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n"+strings.Repeat("x", 6000))
			answer(t, c, br, "lazy skipped")
			waitClosed(t, c)
		})
	}
}
