// Package httpapi here is the shapes of code TestStrictDestinationsSeeEveryShape holds
// strictDestinations to: calls the walk must see, and destinations it must type right
// or refuse. It is never built (testdata).
package httpapi

import "github.com/gin-gonic/gin"

const maxJSONBody = 1 << 20

type (
	inFuncLit     struct{}
	outer         struct{}
	shadowedInner struct{}
	inMethod      struct{}
	param         struct{}
	untyped       struct{}
)

func decodeStrict(c *gin.Context, dst any, limit int64) error { return nil }

// a function literal at package level, outside every FuncDecl
var handler = func(c *gin.Context) error {
	var req inFuncLit
	return decodeStrict(c, &req, maxJSONBody)
}

// req in the call is outer's: the inner one's scope ended before it
func shadow(c *gin.Context, x bool) error {
	var req outer
	if x {
		var req shadowedInner
		_ = req
	}
	return decodeStrict(c, &req, maxJSONBody)
}

type api struct{}

func (a *api) method(c *gin.Context) error {
	var req inMethod
	return decodeStrict(c, &req, maxJSONBody)
}

func fromParam(c *gin.Context, req param) error {
	return decodeStrict(c, &req, maxJSONBody)
}

// req := untyped{} shadows a typed req: its type is not written, so untold
func shortDecl(c *gin.Context) error {
	var req outer
	_ = req
	{
		req := untyped{}
		return decodeStrict(c, &req, maxJSONBody)
	}
}

// the decoder as a value: what it decodes is out of sight
func asValue(c *gin.Context) error {
	dec := decodeStrict
	var req outer
	return dec(c, &req, maxJSONBody)
}
