// Command baregin is the baseline of hostemu's speed bar: a bare gin engine, no
// middleware, answering GET /v1/deployments/:id with fixed bytes (a deployment as
// hostemu renders it). The binary comparison in package perf runs it beside the
// hostemu binary; it is not shipped.
package main

import (
	"flag"
	"log"
	"net/http"
	"os"

	"github.com/gin-gonic/gin"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	bodyFile := flag.String("body", "", "file holding the bytes to answer")
	flag.Parse()
	body, err := os.ReadFile(*bodyFile)
	if err != nil {
		log.Fatal(err)
	}
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	r.GET("/v1/deployments/:id", func(c *gin.Context) { c.Data(http.StatusOK, "application/json; charset=utf-8", body) })
	log.Fatal(http.ListenAndServe(*addr, r))
}
