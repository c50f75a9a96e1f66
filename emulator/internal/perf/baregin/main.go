// Command baregin is the baseline of hostemu's speed bar: a bare gin engine, no
// middleware, serving the reference handlers of package bare (GET
// /v1/deployments/:id with fixed bytes, a deployment as hostemu renders it; the
// creates, uploads, encrypt and decrypt doing the same work as hostemu and nothing
// else). The binary comparison in package perf runs it beside the hostemu binary; it
// is not shipped.
package main

import (
	"flag"
	"log"
	"net/http"
	"os"
	"testing/fstest"

	"github.com/hostemu/hostemu/emulator/internal/perf/bare"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	bodyFile := flag.String("body", "", "file holding the bytes to answer")
	stateLog := flag.String("state-log", "", "a file each create is appended to and synced (hostemu's --state)")
	edgeAddr := flag.String("edge-addr", "", "an address serving -edge-file as /index.html with http.FileServer")
	edgeFile := flag.String("edge-file", "", "the edge's file")
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
	log.Fatal(http.ListenAndServe(*addr, bare.NewWithLog(body, logFile)))
}
