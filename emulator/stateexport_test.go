package emulator_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hostemu/hostemu/emulator"
	"github.com/hostemu/hostemu/emulator/internal/statetest"
)

// Readers of GET /_emulator/state that never read share one encoding of the state
// rather than hold a copy each (issue 32 item 6: 48 readers of an 18.5 MB state took
// RSS 147 → 871 MB). The heap they hold, measured once all of them are being served,
// stays under twice the state's text however many there are; a reader after a change
// gets the change, not the encoding being read; the last reader gone, nothing is held.
func TestStateExportsShareOneEncoding(t *testing.T) {
	const readers = 16
	e := newEnv(t)
	big := statetest.BigJSON(4000) // 18.4 MB, the state
	put := e.do(req{Method: "PUT", Path: "/_emulator/state", Body: big})
	mustStatus(t, put, 200)
	text := int64(len(put.Body))
	base := heapInUse()

	host := strings.TrimPrefix(e.url, "http://")
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range readers {
		c, err := net.Dial("tcp", host)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		c.(*net.TCPConn).SetReadBuffer(4 << 10)
		fmt.Fprintf(c, "GET /_emulator/state HTTP/1.1\r\nHost: %s\r\n\r\n", host) // and never read
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if _, _, err := emulator.WaitStateExports(ctx, e.emu, func(n int, b int64) bool { return n == readers && b > 0 }); err != nil {
		t.Fatalf("the readers are not all served: %v", err)
	}
	held := heapInUse() - base
	_, encoded, _ := emulator.WaitStateExports(ctx, e.emu, func(int, int64) bool { return true })
	t.Logf("%d readers that never read a state of %d bytes: heap +%d MB, encodings %d MB", readers, text, held>>20, encoded>>20)
	if encoded != text {
		t.Errorf("the readers hold %d bytes of encodings, want one of %d", encoded, text)
	}
	if held > 2*text {
		t.Errorf("%d readers hold %d bytes of heap, over twice the state's %d", readers, held, text)
	}

	// a change, then a reader: it sees the change, not the encoding being read
	small := `{"tokens":[{"token":"t-small","scope":"read"}]}`
	after := e.do(req{Method: "PUT", Path: "/_emulator/state", Body: small})
	mustStatus(t, after, 200)
	if bytes.Contains(after.Body, []byte("prj_big")) || !bytes.Contains(after.Body, []byte("t-small")) {
		t.Fatalf("the export after an import is not the imported state: %.200s", after.Body)
	}
	for _, c := range conns {
		c.Close()
	}
	conns = nil
	if _, _, err := emulator.WaitStateExports(ctx, e.emu, func(n int, b int64) bool { return n == 0 && b == 0 }); err != nil {
		t.Fatalf("the readers gone, encodings are still held: %v", err)
	}
	res, err := http.Get(e.url + "/_emulator/state")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if string(got) != string(after.Body) {
		t.Errorf("a later export differs from the import's answer")
	}
}

// Encodings of different versions are bounded: with four held by readers that never
// read (a change between each), a fifth version waits its turn, then is 503 with
// Retry-After; once one is let go, exports are served again.
func TestStateExportsOfDifferentVersionsAreBounded(t *testing.T) {
	e := newEnv(t, func(o *emulator.Options) { emulator.SetImportWait(o, 200*time.Millisecond) })
	mustStatus(t, e.do(req{Method: "PUT", Path: "/_emulator/state", Body: statetest.BigJSON(2000)}), 200) // 9 MB of JSON
	host := strings.TrimPrefix(e.url, "http://")
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := range 4 {
		c, err := net.Dial("tcp", host)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		c.(*net.TCPConn).SetReadBuffer(4 << 10)
		fmt.Fprintf(c, "GET /_emulator/state HTTP/1.1\r\nHost: %s\r\n\r\n", host) // and never read
		if _, _, err := emulator.WaitStateExports(ctx, e.emu, func(n int, _ int64) bool { return n == i+1 }); err != nil {
			t.Fatalf("reader %d not served: %v", i+1, err)
		}
		mustStatus(t, e.post("/_emulator/tokens", "", map[string]string{"scope": "read"}), 201) // a new version
	}
	r := e.get("/_emulator/state", "")
	if r.Status != 503 || r.Code() != "service_unavailable" || r.Header.Get("Retry-After") == "" || !strings.Contains(r.Err(t).Message, "state exports") {
		t.Fatalf("a fifth version: %d %v %.300s, want 503 with Retry-After", r.Status, r.Header, r.Body)
	}
	conns[0].Close()
	if _, _, err := emulator.WaitStateExports(ctx, e.emu, func(n int, _ int64) bool { return n == 3 }); err != nil {
		t.Fatal(err)
	}
	mustStatus(t, e.get("/_emulator/state", ""), 200)
}
