package httpapi

import (
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/hostemu/hostemu/emulator/internal/apperr"
)

// recovery turns a panic into a 500 in the documented envelope.
func (a *API) recovery() gin.HandlerFunc {
	return func(c *gin.Context) {
		defer func() {
			if r := recover(); r != nil {
				if r == http.ErrAbortHandler {
					panic(r)
				}
				a.panicked(c, r)
			}
		}()
		c.Next()
	}
}

// panicked logs a recovered panic and answers 500 in the envelope, unless the answer
// was already on its way.
func (a *API) panicked(c *gin.Context, r any) {
	a.log.Error("panic serving request", "method", c.Request.Method, "path", c.Request.URL.Path, "panic", r)
	if c.Writer.Written() {
		c.Abort()
		return
	}
	a.renderError(c, apperr.New(apperr.InternalError, "internal error; see the emulator's log"))
}
