package httpapi

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/hostemu/hostemu/emulator/internal/openapi"
)

// The OpenAPI descriptions (internal/openapi). The public one is a docs route (door.go):
// served without a token, never rate limited, journaled or faulted, on every listener,
// with the public APIs' CORS rules so that a browser app can read it. The control API's
// is a control route, under the control guard and --control-token.

func (a *API) openapiJSON(c *gin.Context) { a.serveDescription(c, openapi.Hosting(), true, true) }
func (a *API) openapiYAML(c *gin.Context) { a.serveDescription(c, openapi.Hosting(), false, true) }

func (a *API) controlOpenAPIJSON(c *gin.Context) {
	a.serveDescription(c, openapi.Control(), true, false)
}

func (a *API) controlOpenAPIYAML(c *gin.Context) {
	a.serveDescription(c, openapi.Control(), false, false)
}

// openapiPreflight answers a CORS preflight for the public description as the public
// APIs do.
func (a *API) openapiPreflight(c *gin.Context) {
	// through gin's writer, which would otherwise write its own status after ours
	preflight(&exchange{ResponseWriter: c.Writer}, c.Request, a.allowOrigin(c.Request.Header.Get("Origin")))
}

// serveDescription writes d with servers naming where it was asked (--public-url, else
// the request's scheme and host), as JSON or YAML; public adds the public CORS headers.
func (a *API) serveDescription(c *gin.Context, d *openapi.Doc, asJSON, public bool) {
	h := c.Writer.Header()
	if public {
		a.corsHeaders(h, c.Request)
	}
	server := a.baseURL(c.Request)
	if asJSON {
		h.Set("Content-Type", "application/json")
		c.Status(http.StatusOK)
		c.Writer.Write(d.JSON(server))
		return
	}
	h.Set("Content-Type", "application/yaml")
	c.Status(http.StatusOK)
	c.Writer.Write(d.YAML(server))
}
