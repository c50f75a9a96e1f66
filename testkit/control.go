package testkit

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

// APIError is an error answer of the control API or the hosting API: its status and
// the code and message of its error envelope.
type APIError struct {
	Status  int
	Code    string
	Message string
	// NearMisses, for an await_timeout of a requests condition, are the journaled
	// requests that almost matched it (the message lists them too).
	NearMisses []NearMiss
}

func (e *APIError) Error() string {
	return fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Message)
}

// do calls the control API: body (nil for none) is sent as JSON, with the control
// token when there is one, and a 2xx answer is decoded into out (nil to ignore it).
// A call without a deadline in ctx gets clientTimeout.
func (r *remote) do(ctx context.Context, method, path string, body, out any) error {
	var raw []byte
	header := http.Header{}
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		raw = b
		header.Set("Content-Type", "application/json")
	}
	if r.controlToken != "" {
		header.Set("Authorization", "Bearer "+r.controlToken)
	}
	start := time.Now()
	status, err := exchange(ctx, r.control, method, r.url+r.controlPath(path), raw, header, 0, out)
	if status != 0 {
		r.log.Debug("testkit control call", "method", method, "path", path, "status", status, "took", time.Since(start))
	}
	return err
}

// exchange sends one request to url (body nil for none) and decodes a 2xx answer into
// out: nil to ignore it, a *[]byte for the body as it is (ca.pem), else JSON. Any other
// answer is an *APIError. An answer over limit bytes (0: no limit) is cut there; a ctx
// without a deadline gets clientTimeout. status is the answer's, 0 when there was none.
func exchange(ctx context.Context, client *http.Client, method, url string, body []byte, header http.Header, limit int64, out any) (status int, err error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, clientTimeout)
		defer cancel()
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return 0, err
	}
	req.Header = header
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var src io.Reader = resp.Body
	if limit > 0 {
		src = io.LimitReader(resp.Body, limit)
	}
	raw, err := io.ReadAll(src)
	if err != nil {
		return resp.StatusCode, fmt.Errorf("reading the answer: %w", err)
	}
	if resp.StatusCode/100 != 2 {
		return resp.StatusCode, decodeError(resp.StatusCode, raw)
	}
	if out == nil {
		return resp.StatusCode, nil
	}
	if b, ok := out.(*[]byte); ok {
		*b = raw
		return resp.StatusCode, nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return resp.StatusCode, fmt.Errorf("the answer is not the JSON expected: %v: %.200s", err, raw)
	}
	return resp.StatusCode, nil
}

func decodeError(status int, raw []byte) error {
	var env struct {
		Error struct {
			Code       string     `json:"code"`
			Message    string     `json:"message"`
			NearMisses []NearMiss `json:"near_misses"`
		} `json:"error"`
	}
	if json.Unmarshal(raw, &env) != nil || env.Error.Code == "" {
		return &APIError{Status: status, Code: "(no error envelope)", Message: fmt.Sprintf("%.200s", raw)}
	}
	return &APIError{Status: status, Code: env.Error.Code, Message: env.Error.Message, NearMisses: env.Error.NearMisses}
}

// call is do for the methods of Emulator: any failure stops the test, naming the call
// and, for an error answer, the emulator's code and message.
func (e *Emulator) call(method, path string, body, out any) {
	e.tb.Helper()
	e.callCtx(context.Background(), method, path, body, out)
}

func (e *Emulator) callCtx(ctx context.Context, method, path string, body, out any) {
	e.tb.Helper()
	if err := e.r.do(ctx, method, path, body, out); err != nil {
		e.tb.Fatalf("testkit: %s %s: %v", method, path, err)
	}
}
