// Command baregin is the baseline of hostemu's speed bar: a bare gin engine, no
// middleware, serving the reference handlers of package bare (GET
// /v1/deployments/:id with fixed bytes, a deployment as hostemu renders it, found
// first among -ids in a map when given; the
// creates, uploads, encrypt and decrypt doing the same work as hostemu and nothing
// else). The binary comparison in package perf runs it beside the hostemu binary; it
// is not shipped.
package main

import (
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"strings"
	"testing/fstest"

	"github.com/hostemu/hostemu/emulator/internal/perf/bare"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	bodyFile := flag.String("body", "", "file holding the bytes to answer")
	stateLog := flag.String("state-log", "", "a file each create is appended to and synced (hostemu's --state)")
	edgeAddr := flag.String("edge-addr", "", "an address serving -edge-file as /index.html with http.FileServer")
	edgeFile := flag.String("edge-file", "", "the edge's file")
	idsFile := flag.String("ids", "", "a file of deployment ids, one a line: each GET finds its id among them in a map (404 if not there), as hostemu finds the deployment")
	var headers answerHeaders
	flag.Var(&headers, "header", "a header every GET's answer carries, \"Name: value\" (repeatable; a name given again adds a value): the reference writing the same header keys as hostemu's answer")
	flag.Parse()
	body, err := os.ReadFile(*bodyFile)
	if err != nil {
		log.Fatal(err)
	}
	var logFile *os.File
	if *stateLog != "" {
		if logFile, err = os.OpenFile(*stateLog, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600); err != nil {
			log.Fatal(err)
		}
	}
	if *edgeAddr != "" {
		page, err := os.ReadFile(*edgeFile)
		if err != nil {
			log.Fatal(err)
		}
		fs := http.FileServer(http.FS(fstest.MapFS{"index.html": {Data: page}}))
		go func() { log.Fatal(http.ListenAndServe(*edgeAddr, fs)) }()
	}
	var ids []string
	if *idsFile != "" {
		b, err := os.ReadFile(*idsFile)
		if err != nil {
			log.Fatal(err)
		}
		ids = strings.Fields(string(b))
	}
	h := bare.NewGet(body, logFile, ids)
	if len(headers) > 0 {
		h = headers.around(h)
	}
	log.Fatal(http.ListenAndServe(*addr, h))
}

// answerHeaders are the -header flags: constant headers set on every GET's answer
// before the reference's handler runs, as hostemu sets its own (value slices shared by
// every answer; net/http copies them when it writes the headers). A name given again
// adds a value, as Header.Add does.
type answerHeaders http.Header

func (a *answerHeaders) String() string { return fmt.Sprint(len(*a), " headers") }

func (a *answerHeaders) Set(s string) error {
	name, value, ok := strings.Cut(s, ":")
	if !ok {
		return fmt.Errorf("want \"Name: value\", got %q", s)
	}
	if *a == nil {
		*a = answerHeaders{}
	}
	http.Header(*a).Add(strings.TrimSpace(name), strings.TrimSpace(value))
	return nil
}

func (a answerHeaders) around(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			wh := w.Header()
			for name, vals := range a {
				wh[name] = vals
			}
		}
		h.ServeHTTP(w, r)
	})
}
