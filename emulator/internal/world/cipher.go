package world

import (
	"crypto/rand"
	"errors"

	"github.com/hostemu/hostemu/emulator/internal/apperr"
	"github.com/hostemu/hostemu/emulator/internal/envelope"
)

// Encrypt seals a payload in an envelope under the first master key.
func (w *World) Encrypt(payload string) (string, error) {
	env, err := w.keyring.Load().Seal(rand.Reader, []byte(payload))
	return env, envelopeError(err)
}

// Decrypt opens an envelope and returns its payload.
func (w *World) Decrypt(env string) (string, error) {
	b, err := w.keyring.Load().Open(env)
	return string(b), envelopeError(err)
}

// envelopeError words the envelope package's refusals for the client.
func envelopeError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, envelope.ErrKeyNotFound):
		return apperr.New(apperr.KeyNotFound, "the envelope names a master key this service does not hold")
	case errors.Is(err, envelope.ErrNoKeys):
		return apperr.New(apperr.ServiceUnavailable, "the decryption service has no master keys (the fixtures have no cipher.master_keys)")
	case errors.Is(err, envelope.ErrInvalidEnvelope):
		return apperr.New(apperr.InvalidEnvelope, "the envelope is not valid")
	}
	return err
}
