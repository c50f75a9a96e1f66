package emulator

import "net/http"

// Emulator is one emulated world and its HTTP handlers.
type Emulator struct {
	opts Options
}

// New builds an emulator from opts.
func New(opts Options) (*Emulator, error) { return &Emulator{opts: opts}, nil }

// Handler serves the hosting service, the control API and the docs (and the
// decryption service unless Options.CipherAddr gives it its own listener).
func (e *Emulator) Handler() http.Handler { return http.NotFoundHandler() }

// CipherHandler serves the decryption service alone.
func (e *Emulator) CipherHandler() http.Handler { return http.NotFoundHandler() }

// Banner is the start-up text: where each service listens and the well-known credentials.
func (e *Emulator) Banner(url, cipherURL string) string { return "" }

// Close stops the world's clock and watchers and saves state when configured.
func (e *Emulator) Close() error { return nil }
