package world

import (
	"crypto/rand"
	"errors"
	"unicode/utf8"

	"github.com/hostemu/hostemu/emulator/internal/apperr"
	"github.com/hostemu/hostemu/emulator/internal/envelope"
)

// MaxPayload is the largest /v1/encrypt payload, in characters of the string.
const MaxPayload = 1 << 20

// Encrypt seals a payload (required; at most MaxPayload characters) in an envelope
// under the first master key.
func (w *World) Encrypt(payload *string) (string, error) {
	if payload == nil {
		return "", apperr.New(apperr.InvalidRequest, `field "payload" is required: a string`)
	}
	if len(*payload) > MaxPayload { // more bytes than the limit's characters: count them
		if n := utf8.RuneCountInString(*payload); n > MaxPayload {
			return "", apperr.Errorf(apperr.PayloadTooLarge, `field "payload" is %d characters; the limit is %d`, n, MaxPayload)
		}
	}
	env, err := w.keyring.Load().Seal(rand.Reader, []byte(*payload))
	return env, envelopeError(err)
}

// Decrypt opens an envelope (required) and returns its payload.
func (w *World) Decrypt(env *string) (string, error) {
	if env == nil {
		return "", apperr.New(apperr.InvalidRequest, `field "envelope" is required: a string`)
	}
	b, err := w.keyring.Load().Open(*env)
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
