// Package openapitest holds every request and answer of hostemu's black-box tests to
// its OpenAPI descriptions, so that an answer hostemu gives cannot differ from its
// description without a test failing. Only tests import it.
//
// The validator is pb33f's libopenapi-validator: it reads OpenAPI 3.1 natively (JSON
// Schema 2020-12: type arrays for nullable fields, const, propertyNames), and checks
// paths, query, header and path parameters, security, request bodies, and response
// statuses, headers and bodies. kin-openapi's openapi3filter was built for 3.0 and only
// recently learnt 3.1's schema dialect.
package openapitest

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/pb33f/libopenapi-validator/config"
	"github.com/pb33f/libopenapi-validator/paths"
	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"

	"github.com/hostemu/hostemu/emulator/internal/openapi"
)

// Validator checks exchanges against one description.
type Validator struct {
	mu    sync.Mutex // guards v and model: the validator's caches are not documented as safe for concurrent use
	v     validator.Validator
	model *v3.Document
	doc   *openapi.Doc
}

var (
	built   sync.Map // *openapi.Doc → *Validator
	buildMu sync.Mutex
)

// For is the validator of doc, built once per test binary (building compiles every
// schema).
func For(doc *openapi.Doc) (*Validator, error) {
	if v, ok := built.Load(doc); ok {
		return v.(*Validator), nil
	}
	buildMu.Lock()
	defer buildMu.Unlock()
	if v, ok := built.Load(doc); ok {
		return v.(*Validator), nil
	}
	v, err := New(doc.Raw())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", doc.Name(), err)
	}
	v.doc = doc
	built.Store(doc, v)
	return v, nil
}

// New builds a validator of a description's source (YAML or JSON).
func New(src []byte) (*Validator, error) {
	d, err := libopenapi.NewDocument(src)
	if err != nil {
		return nil, err
	}
	m, err := d.BuildV3Model()
	if err != nil {
		return nil, err
	}
	v, errs := validator.NewValidator(d, config.WithFormatAssertions())
	if len(errs) > 0 {
		return nil, errs[0]
	}
	if ok, verrs := v.ValidateDocument(); !ok {
		return nil, fmt.Errorf("not a valid OpenAPI document: %s", join(verrs))
	}
	return &Validator{v: v, model: &m.Model}, nil
}

// Exchange is one request and its answer, bodies read.
type Exchange struct {
	Method     string
	Path       string // with the query
	Header     http.Header
	Body       []byte
	Status     int
	RespHeader http.Header
	RespBody   []byte
	// Faulted says faults or scenarios may have changed the answer: any status the
	// operation's default response allows is then acceptable, not only those it lists.
	Faulted bool
}

// Check returns what is wrong with ex against the description, or nil:
//   - a path or method the description lacks must have been answered 404 or 405;
//   - the answer must match the operation's response for its status (headers, body);
//   - the status must be one the operation lists (unless ex.Faulted);
//   - a request the description refuses must not have been answered 2xx.
func (v *Validator) Check(ex Exchange) []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	ex.Header, ex.Body = decoded(ex.Header, ex.Body)
	ex.RespHeader, ex.RespBody = decoded(ex.RespHeader, ex.RespBody)
	req, err := http.NewRequest(ex.Method, "http://127.0.0.1:4700"+ex.Path, bytes.NewReader(ex.Body))
	if err != nil {
		return []string{err.Error()}
	}
	req.Header = ex.Header.Clone()
	pathItem, _, pathValue := paths.FindPath(req, v.model, config.NewValidationOptions())
	var op *v3.Operation
	if pathItem != nil {
		op = pathItem.GetOperations().GetOrZero(strings.ToLower(ex.Method))
	}
	if op == nil || notServedHere(ex) {
		if ex.Status == http.StatusNotFound || ex.Status == http.StatusMethodNotAllowed {
			return nil
		}
		return []string{fmt.Sprintf("%s %s is not described (path %q), yet it was answered %d", ex.Method, ex.Path, pathValue, ex.Status)}
	}
	var problems []string
	code := strconv.Itoa(ex.Status)
	if _, listed := op.Responses.Codes.Get(code); !listed && !(ex.Faulted && op.Responses.Default != nil) {
		problems = append(problems, fmt.Sprintf("%s %s answered %d, a status the operation %s does not list", ex.Method, ex.Path, ex.Status, op.OperationId))
	}
	res := &http.Response{StatusCode: ex.Status, Header: ex.RespHeader.Clone(), Body: io.NopCloser(bytes.NewReader(ex.RespBody)), Request: req}
	if ok, errs := v.v.ValidateHttpResponse(req, res); !ok {
		problems = append(problems, fmt.Sprintf("answer %d to %s %s does not match the description: %s", ex.Status, ex.Method, ex.Path, join(errs)))
	}
	req.Body = io.NopCloser(bytes.NewReader(ex.Body))
	if ok, errs := v.v.ValidateHttpRequest(req); !ok && ex.Status < 400 {
		problems = append(problems, fmt.Sprintf("%s %s was answered %d, but the description refuses the request: %s", ex.Method, ex.Path, ex.Status, join(errs)))
	}
	return problems
}

// notServedHere reports whether the answer is 404 not_found: the route is not served
// on this listener (the decryption service on its own --cipher-addr, say), as if it
// did not exist.
func notServedHere(ex Exchange) bool {
	return ex.Status == http.StatusNotFound && bytes.Contains(ex.RespBody, []byte(`"code":"not_found"`))
}

// decoded is a body without its gzip Content-Encoding, as the operation sees it.
func decoded(h http.Header, body []byte) (http.Header, []byte) {
	if enc := strings.ToLower(h.Get("Content-Encoding")); enc != "gzip" && enc != "x-gzip" {
		return h, body
	}
	zr, err := gzip.NewReader(bytes.NewReader(body))
	if err != nil {
		return h, body // left as sent: the answer says what hostemu made of it
	}
	plain, err := io.ReadAll(zr)
	if err != nil {
		return h, body
	}
	h = h.Clone()
	h.Del("Content-Encoding")
	h.Del("Content-Length")
	return h, plain
}

func join[E interface{ Error() string }](errs []E) string {
	var b strings.Builder
	for i, e := range errs {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(e.Error())
	}
	return b.String()
}
