package journal

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// randomRequestHeaders is a request's header map as net/http could make it: a few to
// many headers, credentials among them, several values, values long enough to be cut
// at MaxHeaders (on a UTF-8 boundary), names in other cases.
func randomRequestHeaders(rng *rand.Rand) http.Header {
	names := []string{"Authorization", "Proxy-Authorization", "Cookie", "Accept", "Accept-Encoding", "User-Agent",
		"Content-Type", "X-Request-Id", "x-lower", "Idempotency-Key", "X-File-Digest", "Expect", "Traceparent"}
	values := [][]string{{""}, {"1"}, {"a", "b"}, {"Bearer hostemu-read"}, {"gzip, deflate"},
		{strings.Repeat("l", 700)}, {strings.Repeat("é", 500) + "x"}, {strings.Repeat("v", 1500)}}
	h := http.Header{}
	count := rng.IntN(8)
	if rng.IntN(8) == 0 {
		count = rng.IntN(45) // over maxHeaderCount at times
	}
	for i := range count {
		name := names[rng.IntN(len(names))]
		if rng.IntN(3) == 0 {
			name = fmt.Sprintf("X-H%02d", i)
		}
		v := values[rng.IntN(len(values))]
		if rng.IntN(4) > 0 {
			v = v[:1]
		}
		h[name] = append([]string(nil), v...)
	}
	return h
}

// An entry whose request headers were kept as their map to be made when read
// (SetServedRequestHeaders) is, to every reader, the entry made at once
// (SetRequestHeaders): the same JSON in List, the same Bytes (entry and journal), the
// same near-miss candidates, the same bundle's entries; and an entry given back by
// Record has its headers. Maps too large to stand for their Headers are made at once.
func TestServedRequestHeadersAreTheEntry(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(38, 4))
	lazyKept, eagerKept := 0, 0
	for round := range 400 {
		eager, lazy := New(8), New(8)
		for i := range 1 + rng.IntN(12) {
			h := randomRequestHeaders(rng)
			base := Entry{Method: "GET", Path: "/v1/deployments/dpl_" + fmt.Sprint(i), Query: "a=1", Status: 200,
				Time: time.Unix(int64(i), 0), HeadersTruncated: rng.IntN(20) == 0}
			base.SetResponse(200, http.Header{"Content-Type": {"application/json"}, "X-Ratelimit-Limit": {"3000"}}, []byte(`{"id":1}`))
			e1, e2 := base, base
			e1.SetRequestHeaders(h)
			e2.SetServedRequestHeaders(h.Clone(), "")
			if e2.kept&keptLazyHeaders != 0 {
				lazyKept++
			} else {
				eagerKept++
			}
			eager.RecordTo(&e1)
			lazy.RecordTo(&e2)
			if e2.raw != nil || e2.kept != 0 {
				t.Fatalf("round %d: RecordTo's entry kept the map", round)
			}
			if rng.IntN(3) == 0 { // a reader in between: some entries made early
				lazy.Count(Filter{})
			}
			if e := lazy.Record(func() Entry { x := base; x.SetServedRequestHeaders(h.Clone(), ""); return x }()); !reflect.DeepEqual(e.Headers, eager.Record(func() Entry { x := base; x.SetRequestHeaders(h); return x }()).Headers) {
				t.Fatalf("round %d: Record gave back other headers", round)
			}
		}
		if a, b := eager.Bytes(), lazy.Bytes(); a != b {
			t.Fatalf("round %d: Bytes %d eager, %d lazy", round, a, b)
		}
		c1, c2 := eager.Candidates(), lazy.Candidates()
		if !reflect.DeepEqual(c1, c2) {
			t.Fatalf("round %d: candidates differ:\n%+v\n%+v", round, c1, c2)
		}
		l1, l2 := eager.List(Filter{}), lazy.List(Filter{})
		j1, _ := json.Marshal(l1)
		j2, _ := json.Marshal(l2)
		if string(j1) != string(j2) {
			t.Fatalf("round %d: List differs:\n%s\n%s", round, j1, j2)
		}
		for i := range l1 {
			if a, b := l1[i].Bytes(), l2[i].Bytes(); a != b {
				t.Fatalf("round %d: entry %d: Bytes %d eager, %d lazy", round, i, a, b)
			}
		}
		var w1, w2 strings.Builder
		eager.WriteJSON(&w1, Filter{})
		lazy.WriteJSON(&w2, Filter{})
		if w1.String() != w2.String() {
			t.Fatalf("round %d: WriteJSON differs", round)
		}
	}
	if lazyKept == 0 || eagerKept == 0 {
		t.Fatalf("kept %d maps, made %d at once: the test must see both", lazyKept, eagerKept)
	}
}

// Bytes of an entry kept with its map, before any reader made its headers, is the
// Bytes of the same entry made at once; the map a kept entry holds is within what
// MaxEntryBytes allows its Headers.
func TestServedRequestHeadersBytes(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 38))
	for range 2000 {
		h := randomRequestHeaders(rng)
		eager, lazy := New(2), New(2)
		var e1, e2 Entry
		e1.SetRequestHeaders(h)
		e2.SetServedRequestHeaders(h.Clone(), "")
		eager.RecordTo(&e1)
		lazy.RecordTo(&e2)
		if a, b := eager.Bytes(), lazy.Bytes(); a != b {
			t.Fatalf("Bytes %d eager, %d lazy (before a read) for %v", a, b, h)
		}
		var creds [4]string
		if _, ok := keepable(h, "", &creds); ok && lazyHeadersBytes(h) > headersBytes {
			t.Fatalf("a kept map's Headers over the bound: %v", h)
		}
	}
	big := http.Header{}
	for i := range maxHeaderCount + 1 {
		big[fmt.Sprint("X-", i)] = []string{"v"}
	}
	var creds [4]string
	if _, ok := keepable(big, "", &creds); ok {
		t.Error("a map of more than maxHeaderCount headers was kept")
	}
	if _, ok := keepable(http.Header{"X-Long": {strings.Repeat("v", int(headersBytes))}}, "", &creds); ok {
		t.Error("a map holding more than the headers' bound was kept")
	}
	get := http.Header{"Authorization": {"Bearer hostemu-read"}, "User-Agent": {"loadgen"}, "Accept": {"*/*"}, "cookie": {"a=b"}}
	var e Entry
	e.SetServedRequestHeaders(get, "")
	if e.kept&keptLazyHeaders == 0 {
		t.Error("a GET's headers were not kept")
	}
	if get.Get("Authorization") != Redacted || get["cookie"][0] != Redacted || get.Get("Accept") != "*/*" {
		t.Errorf("the kept map's credentials are not redacted: %v", get)
	}
}

// Readers in many goroutines, and entries recorded meanwhile with their maps kept: the
// headers are made once, under the journal's lock (go test -race).
func TestServedRequestHeadersConcurrentReaders(t *testing.T) {
	t.Parallel()
	j := New(64)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				for _, e := range j.List(Filter{}) {
					if e.Headers.Get("Authorization") != Redacted {
						t.Errorf("entry %d: %v", e.Seq, e.Headers)
						return
					}
				}
				j.Bytes()
				j.Candidates()
			}
		})
	}
	for i := range 3000 {
		e := Entry{Method: "GET", Path: "/x", Status: 200}
		e.SetServedRequestHeaders(http.Header{"Authorization": {"Bearer t"}, "Accept": {fmt.Sprint(i)}}, "127.0.0.1")
		j.RecordTo(&e)
	}
	close(stop)
	wg.Wait()
}

// The memory a header map net/http made holds on to (measured: the heap the maps of
// many such requests keep alive) is within what MaxEntryBytes allows an entry's
// Headers whenever the journal keeps the map (keepable): for repeated lines (the map
// and the shared slice of values are sized by the lines), a long Host (its value held
// by that slice after the map lets it go), many headers, long values. Not parallel: it
// reads the heap.
func TestServedMapMemoryWithinBound(t *testing.T) {
	lines := func(n int, line string) string { return strings.Repeat(line, n) }
	distinct := func(n int, value string) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "X-H%02d: %s\r\n", i, value)
		}
		return b.String()
	}
	get := "Authorization: Bearer hostemu-read\r\nUser-Agent: Go-http-client/1.1\r\nAccept-Encoding: gzip\r\n"
	for _, c := range []struct{ name, host, head string }{
		{"get", "127.0.0.1:4000", get},
		{"repeated30", "h", lines(30, "A: \r\n")},
		{"repeated57", "h", lines(57, "A: \r\n")},
		{"repeated100", "h", lines(100, "A: \r\n")},
		{"repeated167", "h", lines(167, "A: \r\n")},
		{"8x20", "h", func() string {
			var b strings.Builder
			for i := range 20 {
				b.WriteString(distinct(8, fmt.Sprint(i)))
			}
			return b.String()
		}()},
		{"long-host", strings.Repeat("h", 2000), get},
		{"huge-host", strings.Repeat("h", 100_000), get},
		{"distinct28", "h", distinct(28, strings.Repeat("v", 40))},
		{"distinct32", "h", distinct(32, "v")},
		{"long-value", "h", "X-Long: " + strings.Repeat("v", 1500) + "\r\n"},
	} {
		raw := "GET /v1/projects HTTP/1.1\r\nHost: " + c.host + "\r\n" + c.head + "\r\n"
		parse := func() http.Header {
			r, err := http.ReadRequest(bufio.NewReaderSize(strings.NewReader(raw), 4096)) // as the server reads
			if err != nil {
				t.Fatal(err)
			}
			return r.Header
		}
		var creds [4]string
		if _, ok := keepable(parse(), c.host, &creds); !ok {
			if c.name == "get" {
				t.Fatal("a GET's map was not kept")
			}
			continue
		}
		const n = 200
		maps := make([]http.Header, n)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		for i := range maps {
			maps[i] = parse()
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		runtime.KeepAlive(maps)
		if held := (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / n; held > headersBytes {
			t.Errorf("%s: a kept map holds %d bytes, over %d", c.name, held, headersBytes)
		}
	}
}
