// Command loadgen is the speed bar's load generator where wrk is not installed: c
// keep-alive connections, each sending one fixed request and reading its answer in
// turn, for d, or until n requests have been answered (-n: a fixed amount of work, the
// same on both sides of a comparison, with d as its limit). It prints what the perf
// tests read of wrk's output ("Requests/sec:", and "Non-2xx" with the first such answer
// when there was one), and with -n the requests and the seconds they took; with -n it
// exits 1 when d ran out before n requests were answered. It is not shipped.
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

type headers []string

func (h *headers) String() string     { return strings.Join(*h, ", ") }
func (h *headers) Set(v string) error { *h = append(*h, v); return nil }

func main() {
	conns := flag.Int("c", 16, "connections")
	d := flag.Duration("d", 3*time.Second, "duration (with -n, the longest it may take)")
	n := flag.Int64("n", 0, "send this many requests in all, then stop (0: as many as d allows)")
	method := flag.String("method", "GET", "method")
	bodyFile := flag.String("body", "", "file holding the request body")
	host := flag.String("host", "", "Host header (default: the URL's)")
	var hdr headers
	flag.Var(&hdr, "H", "a header, \"Name: value\" (repeatable)")
	flag.Parse()
	u, err := url.Parse(flag.Arg(0))
	if err != nil || u.Host == "" {
		log.Fatalf("loadgen [flags] URL: %v", err)
	}
	var body []byte
	if *bodyFile != "" {
		if body, err = os.ReadFile(*bodyFile); err != nil {
			log.Fatal(err)
		}
	}
	if *host == "" {
		*host = u.Host
	}
	var req bytes.Buffer
	fmt.Fprintf(&req, "%s %s HTTP/1.1\r\nHost: %s\r\n", *method, u.RequestURI(), *host)
	for _, h := range hdr {
		fmt.Fprintf(&req, "%s\r\n", h)
	}
	if body != nil || *method == "POST" || *method == "PUT" {
		fmt.Fprintf(&req, "Content-Length: %d\r\n", len(body))
	}
	req.WriteString("\r\n")
	req.Write(body)
	raw := req.Bytes()

	var done, bad, claimed atomic.Int64
	var firstBad atomic.Value
	start := time.Now()
	stop := start.Add(*d)
	var wg sync.WaitGroup
	for range *conns {
		wg.Go(func() {
			c, err := net.Dial("tcp", u.Host)
			if err != nil {
				log.Fatal(err)
			}
			defer c.Close()
			br := bufio.NewReaderSize(c, 64<<10)
			for time.Now().Before(stop) {
				if *n > 0 && claimed.Add(1) > *n {
					return
				}
				if _, err := c.Write(raw); err != nil {
					log.Fatal(err)
				}
				res, err := http.ReadResponse(br, nil)
				if err != nil {
					log.Fatal(err)
				}
				b, _ := io.ReadAll(res.Body)
				res.Body.Close()
				if res.StatusCode/100 != 2 {
					bad.Add(1)
					firstBad.CompareAndSwap(nil, fmt.Sprintf("%d %s", res.StatusCode, b))
				}
				done.Add(1)
			}
		})
	}
	wg.Wait()
	if *n > 0 {
		took := time.Since(start)
		fmt.Printf("Requests: %d\nSeconds: %.6f\nRequests/sec: %.2f\n", done.Load(), took.Seconds(), float64(done.Load())/took.Seconds())
	} else {
		fmt.Printf("Requests/sec: %.2f\n", float64(done.Load())/d.Seconds())
	}
	if n := bad.Load(); n > 0 {
		fmt.Printf("Non-2xx or 3xx responses: %d, the first: %s\n", n, firstBad.Load())
	}
	if *n > 0 && done.Load() < *n { // -d cut the fixed amount of work short: not the measure asked for
		fmt.Fprintf(os.Stderr, "loadgen: %d of the %d requests in %s\n", done.Load(), *n, *d)
		os.Exit(1)
	}
}
