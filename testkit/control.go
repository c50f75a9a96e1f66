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
}

func (e *APIError) Error() string {
	return fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Message)
}

// do calls the control API: body (nil for none) is sent as JSON, with the control
// token when there is one, and a 2xx answer is decoded into out (nil to ignore it).
// A call without a deadline in ctx gets clientTimeout.
func (r *remote) do(ctx context.Context, method, path string, body, out any) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, clientTimeout)
		defer cancel()
	}
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, r.url+r.controlPath(path), rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if r.controlToken != "" {
		req.Header.Set("Authorization", "Bearer "+r.controlToken)
	}
	start := time.Now()
	resp, err := r.control.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	r.log.Debug("testkit control call", "method", method, "path", path, "status", resp.StatusCode, "took", time.Since(start))
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("reading the answer: %w", err)
	}
	if resp.StatusCode/100 != 2 {
		return decodeError(resp.StatusCode, raw)
	}
	if out == nil {
		return nil
	}
	if b, ok := out.(*[]byte); ok { // a body that is not JSON (ca.pem)
		*b = raw
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("the answer is not the JSON expected: %v: %.200s", err, raw)
	}
	return nil
}

func decodeError(status int, raw []byte) error {
	var env struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(raw, &env) != nil || env.Error.Code == "" {
		return &APIError{Status: status, Code: "(no error envelope)", Message: fmt.Sprintf("%.200s", raw)}
	}
	return &APIError{Status: status, Code: env.Error.Code, Message: env.Error.Message}
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
