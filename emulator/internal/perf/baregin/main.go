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

	"github.com/hostemu/hostemu/emulator/internal/perf/bare"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	bodyFile := flag.String("body", "", "file holding the bytes to answer")
	flag.Parse()
	body, err := os.ReadFile(*bodyFile)
	if err != nil {
		log.Fatal(err)
	}
	_, h := bare.New(body)
	log.Fatal(http.ListenAndServe(*addr, h))
}
