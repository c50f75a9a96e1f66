package emulator_test

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/hostemu/hostemu/emulator"
	"github.com/hostemu/hostemu/emulator/internal/envelope"
)

// sealed is the answer to POST /v1/encrypt, opened to POST /v1/decrypt; the HTTP layer
// writes both by hand, so they have no product type.
type (
	sealed struct {
		Envelope string `json:"envelope"`
	}
	opened struct {
		Payload *string `json:"payload"`
	}
)

func (e *env) encrypt(t *testing.T, payload string) string {
	t.Helper()
	r := e.post("/v1/encrypt", "t-cipher", map[string]string{"payload": payload})
	mustStatus(t, r, 200)
	env := decode[sealed](t, r).Envelope
	if env == "" {
		t.Fatalf("no envelope: %.200s", r.Body)
	}
	return env
}

// payload is the payload r opened, or "null" when it has none.
func (r resp) payload(t testing.TB) string {
	t.Helper()
	return orNull(decode[opened](t, r).Payload)
}

func TestCipherRoundTrip(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, p := range []string{"", "hello", "héllo wörld ✓ 🚀", `{"a":[1,2,{"b":null}]}`, strings.Repeat("é", 1<<19), strings.Repeat("x", 1<<20)} {
		env := e.encrypt(t, p)
		if !strings.HasPrefix(env, "hx1.") || strings.ContainsAny(env, "+/=") {
			t.Fatalf("envelope %.40q is not URL-safe hx1", env)
		}
		r := e.post("/v1/decrypt", "t-cipher", map[string]string{"envelope": env})
		mustStatus(t, r, 200)
		if got := decode[opened](t, r).Payload; got == nil || *got != p {
			t.Fatalf("round trip of %d chars gave %d chars", len(p), len(orNull(got)))
		}
		if r.Header.Get("X-RateLimit-Limit") == "" {
			t.Error("no rate-limit headers on the decryption API")
		}
	}
	if a, b := e.encrypt(t, "same"), e.encrypt(t, "same"); a == b {
		t.Error("two envelopes of one payload are equal: no fresh data key or nonce")
	}
}

func TestCipherErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	good := e.encrypt(t, "secret")
	raw, _ := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(good, "hx1."))
	flip := func(i int) string {
		b := append([]byte{}, raw...)
		b[i] ^= 1
		return "hx1." + base64.RawURLEncoding.EncodeToString(b)
	}
	foreign, _ := envelope.NewKeyring([]envelope.Key{{ID: "k9", Secret: make([]byte, 32)}})
	alien, _ := foreign.Seal(nil, []byte("x"))
	tests := []struct {
		name   string
		body   any
		token  string
		status int
		code   string
	}{
		{"missing envelope", map[string]any{}, "t-cipher", 400, "invalid_request"},
		{"envelope number", `{"envelope":5}`, "t-cipher", 400, "invalid_request"},
		{"envelope null", `{"envelope":null}`, "t-cipher", 400, "invalid_request"},
		{"not json", `envelope=x`, "t-cipher", 400, "invalid_json"},
		{"garbage", map[string]string{"envelope": "nope"}, "t-cipher", 400, "invalid_envelope"},
		{"truncated", map[string]string{"envelope": good[:len(good)-5]}, "t-cipher", 400, "invalid_envelope"},
		{"extended", map[string]string{"envelope": good + "AAAA"}, "t-cipher", 400, "invalid_envelope"},
		{"version byte", map[string]string{"envelope": flip(0)}, "t-cipher", 400, "invalid_envelope"},
		{"wrapped key", map[string]string{"envelope": flip(len(raw) - 40)}, "t-cipher", 400, "invalid_envelope"},
		{"ciphertext", map[string]string{"envelope": flip(len(raw) - 1)}, "t-cipher", 400, "invalid_envelope"},
		{"foreign key", map[string]string{"envelope": alien}, "t-cipher", 400, "key_not_found"},
		{"no key", map[string]string{"envelope": good}, "", 401, "missing_token"},
		{"hosting token", map[string]string{"envelope": good}, "t-admin", 401, "invalid_token"},
		{"body over 2 MiB", `{"envelope":"` + strings.Repeat("A", 2<<20) + `"}`, "t-cipher", 413, "payload_too_large"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.post("/v1/decrypt", tt.token, tt.body)
			if r.Status != tt.status || r.Code() != tt.code {
				t.Fatalf("got %d %s, want %d %s: %.200s", r.Status, r.Code(), tt.status, tt.code, r.Body)
			}
		})
	}
	// one message whatever part failed
	msgs := map[string]bool{}
	for _, i := range []int{0, 10, 20, len(raw) - 40, len(raw) - 1} { // not the key id (bytes 2-3)
		r := e.post("/v1/decrypt", "t-cipher", map[string]string{"envelope": flip(i)})
		msgs[r.Err(t).Message] = true
	}
	if len(msgs) != 1 {
		t.Errorf("invalid_envelope messages differ by the part that failed: %v", msgs)
	}
	over := `{"payload":"` + strings.Repeat("x", 1<<20+1) + `"}`
	if r := e.post("/v1/encrypt", "t-cipher", over); r.Status != 413 || r.Code() != "payload_too_large" {
		t.Errorf("payload over 1 MiB: %d %s", r.Status, r.Code())
	}
	if r := e.post("/v1/encrypt", "t-cipher", `{"payload":["x"]}`); r.Status != 400 || r.Code() != "invalid_request" {
		t.Errorf("non-string payload: %d %s", r.Status, r.Code())
	}
	if r := e.do(req{Method: "GET", Path: "/v1/decrypt", Token: "t-cipher"}); r.Status != 405 {
		t.Errorf("GET /v1/decrypt: %d", r.Status)
	}
}

// A payload that JSON cannot carry back exactly (a lone surrogate escape, bytes that are
// not UTF-8) is refused, naming the field, rather than encrypted as U+FFFD; everything
// that JSON can carry comes back exactly as sent.
func TestCipherPayloadExact(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	refused := []struct{ name, body, says string }{
		{"lone high surrogate", `{"payload":"\ud800"}`, "surrogate"},
		{"lone low surrogate", `{"payload":"a\uDC00b"}`, "surrogate"},
		{"high surrogate then a letter", `{"payload":"\ud83d\u0041"}`, "surrogate"},
		{"high surrogate at the end", `{"payload":"x\ud83d"}`, "surrogate"},
		{"two high surrogates", `{"payload":"\ud83d\ud83d\ude80"}`, "surrogate"},
		{"invalid byte", "{\"payload\":\"\xff\"}", "UTF-8"},
		{"truncated sequence", "{\"payload\":\"caf\xc3\"}", "UTF-8"},
		{"encoded surrogate", "{\"payload\":\"\xed\xa0\x80\"}", "UTF-8"},
		{"other case", `{"PAYLOAD":"\ud800"}`, "surrogate"},
		{"last of two", `{"payload":"ok","payload":"\ud800"}`, "surrogate"},
		{"with other fields", `{"a":1,"payload":"\ud800"}`, "surrogate"},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			r := e.post("/v1/encrypt", "t-cipher", tt.body)
			msg := r.Err(t).Message
			if r.Status != 400 || r.Code() != "invalid_request" || !strings.HasPrefix(msg, `field "payload" `) || !strings.Contains(msg, tt.says) {
				t.Fatalf("got %d %s %q, want 400 invalid_request naming the payload and %q", r.Status, r.Code(), msg, tt.says)
			}
		})
	}
	kept := []struct{ name, body, want string }{
		{"surrogate pair", `{"payload":"\ud83d\ude80"}`, "🚀"},
		{"upper-case pair", `{"payload":"\uD83D\uDE80!"}`, "🚀!"},
		{"escaped backslash", `{"payload":"\\ud800"}`, `\ud800`},
		{"replacement character", `{"payload":"\ufffd�"}`, "\ufffd\ufffd"},
		{"first of two refused", `{"payload":"\ud800","payload":"ok"}`, "ok"},
		{"not UTF-8 elsewhere", "{\"x\":\"\xff\",\"payload\":\"ok\"}", "ok"},
	}
	for _, tt := range kept {
		t.Run(tt.name, func(t *testing.T) {
			r := e.post("/v1/encrypt", "t-cipher", tt.body)
			mustStatus(t, r, 200)
			d := e.post("/v1/decrypt", "t-cipher", map[string]any{"envelope": decode[sealed](t, r).Envelope})
			mustStatus(t, d, 200)
			if got := d.payload(t); got != tt.want {
				t.Fatalf("round trip gave %q, want %q", got, tt.want)
			}
		})
	}
}

// Envelopes survive a restart (the fixture's keys are fixed) and key rotation (an
// envelope of an older key still opens once a newer key encrypts).
func TestCipherRestartAndRotation(t *testing.T) {
	t.Parallel()
	env := newEnv(t).encrypt(t, "kept")
	if got := newEnv(t).post("/v1/decrypt", "t-cipher", map[string]string{"envelope": env}).payload(t); got != "kept" {
		t.Fatalf("a second emulator could not open the first's envelope: %v", got)
	}
	dir := t.TempDir()
	writeFile(t, dir+"/old.yaml", "tokens: [{token: t-read, scope: read}]\ncipher:\n  api_keys: [t-cipher]\n  master_keys:\n    - {id: k1, key: \"AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=\"}\n")
	old := newEnv(t, func(o *emulator.Options) { o.Fixtures = dir + "/old.yaml" })
	env = old.encrypt(t, "from k1")
	rotated := newEnv(t) // testdata: [k2, k1]
	if got := rotated.post("/v1/decrypt", "t-cipher", map[string]string{"envelope": env}).payload(t); got != "from k1" {
		t.Fatalf("rotated keys could not open a k1 envelope: %v", got)
	}
	newer := rotated.encrypt(t, "from k2")
	if r := old.post("/v1/decrypt", "t-cipher", map[string]string{"envelope": newer}); r.Code() != "key_not_found" {
		t.Errorf("a k1-only world opening a k2 envelope: %d %s", r.Status, r.Code())
	}
}

func TestCipherKeylessAndSeparateListener(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, dir+"/f.yaml", "tokens: [{token: t-read, scope: read}]\n")
	e := newEnv(t, func(o *emulator.Options) { o.Fixtures = dir + "/f.yaml" })
	if r := e.post("/v1/encrypt", "anything", map[string]string{"payload": "x"}); r.Status != 401 || r.Code() != "invalid_token" {
		t.Errorf("keyless decryption service: %d %s", r.Status, r.Code())
	}

	srv, err := emulator.Listen(emulator.Options{Fixtures: "testdata/fixtures.yaml", CipherAddr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve()
	t.Cleanup(func() { srv.Shutdown(t.Context()) })
	if srv.CipherURL() == srv.URL() {
		t.Fatal("--cipher-addr did not give the decryption service its own listener")
	}
	c := &env{t: t, emu: srv.Emulator(), url: srv.CipherURL()}
	mustStatus(t, c.post("/v1/encrypt", "t-cipher", map[string]string{"payload": "x"}), 200)
	if r := c.get("/v1/projects", "t-read"); r.Status != 404 {
		t.Errorf("the cipher listener serves the hosting API: %d", r.Status)
	}
	h := &env{t: t, emu: srv.Emulator(), url: srv.URL()}
	if r := h.post("/v1/encrypt", "t-cipher", map[string]string{"payload": "x"}); r.Status != 404 {
		t.Errorf("the hosting listener still serves the cipher API: %d", r.Status)
	}
	mustStatus(t, h.get("/v1/projects", "t-read"), 200)
}

func TestCipherFaultAndJournal(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	mustStatus(t, e.post("/_emulator/faults", "", map[string]any{"match": map[string]string{"service": "cipher"}, "status": 503}), 201)
	if r := e.post("/v1/encrypt", "t-cipher", map[string]string{"payload": "x"}); r.Status != 503 {
		t.Errorf("cipher fault: %d", r.Status)
	}
	mustStatus(t, e.get("/v1/projects", "t-read"), 200)
	out := decode[journalPage](t, e.get("/_emulator/requests?path=/v1/encrypt", ""))
	if len(out.Requests) != 1 || out.Requests[0].Service != "cipher" || out.Requests[0].Scope != "api_key" {
		t.Errorf("journal of a cipher call: %+v", out.Requests)
	}
}
