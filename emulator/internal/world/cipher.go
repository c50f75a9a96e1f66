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
	env, err := w.AppendEncrypt(nil, []byte(*payload))
	return string(env), err
}

// AppendEncrypt is Encrypt of a payload given (at most MaxPayload characters), the
// envelope appended to dst; payload is only read.
func (w *World) AppendEncrypt(dst, payload []byte) ([]byte, error) {
	if len(payload) > MaxPayload { // more bytes than the limit's characters: count them
		if n := utf8.RuneCount(payload); n > MaxPayload {
			return dst, apperr.Errorf(apperr.PayloadTooLarge, `field "payload" is %d characters; the limit is %d`, n, MaxPayload)
		}
	}
	if dst == nil {
		dst = make([]byte, 0, envelope.MaxLen(len(payload)))
	}
	env, err := w.keyring.Load().AppendSeal(dst, rand.Reader, payload)
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

// DecryptBytes is Decrypt of an envelope given in bytes, which it only reads; the
// payload returned is the caller's.
func (w *World) DecryptBytes(env []byte) ([]byte, error) {
	b, err := w.keyring.Load().OpenBytes(env)
	return b, envelopeError(err)
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
