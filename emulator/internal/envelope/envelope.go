// Package envelope is the envelope encryption behind the decryption service: each
// payload is sealed with AES-256-GCM under a fresh data key, and the data key is
// wrapped with AES-256-GCM under a master key that the envelope names by id, so
// master keys can rotate while old envelopes keep opening. It knows nothing of HTTP.
//
// An envelope is Prefix followed by the unpadded base64url encoding of
//
//	version      1 byte, Version
//	id length    1 byte, 1..MaxKeyIDLen
//	key id       id length bytes
//	data nonce   12 bytes, nonce of the payload seal
//	wrap nonce   12 bytes, nonce of the data key seal
//	wrapped key  48 bytes, the data key sealed under the master key (32 + 16-byte tag)
//	ciphertext   the payload sealed under the data key (len(payload) + 16-byte tag)
//
// The data key seal authenticates everything before the wrapped key as additional
// data, and the payload seal everything before the ciphertext, so no byte of an
// envelope can change without Open refusing it.
package envelope

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"io"
)

// Prefix starts every envelope; it names the format and its version so an envelope is
// recognisable in logs and a later format can be told apart without decoding.
const Prefix = "hx1."

// Version is the first byte of the decoded envelope. It repeats the version in Prefix
// so that the version is also authenticated as additional data.
const Version = 1

const (
	nonceSize = 12 // the standard GCM nonce
	tagSize   = 16
	// wrappedSize is the sealed data key: the key and its tag.
	wrappedSize = SecretSize + tagSize
	// fixedSize is every byte of an envelope but the key id and the payload.
	fixedSize = 2 + 2*nonceSize + wrappedSize + tagSize
)

// b64 is strict so that each envelope has exactly one string form: otherwise
// non-zero trailing bits would let several strings open to the same payload.
var b64 = base64.RawURLEncoding.Strict()

// layout holds the offsets of the parts of a decoded envelope whose key id is idLen
// bytes long.
type layout struct {
	dataNonce, wrapNonce, wrapped, ciphertext int
}

func layoutFor(idLen int) layout {
	l := layout{dataNonce: 2 + idLen}
	l.wrapNonce = l.dataNonce + nonceSize
	l.wrapped = l.wrapNonce + nonceSize
	l.ciphertext = l.wrapped + wrappedSize
	return l
}

// Seal encrypts plaintext into a new envelope under the keyring's first key, with a
// data key and nonces read from random (crypto/rand.Reader when nil; tests pass a
// deterministic reader to get reproducible envelopes). It returns ErrNoKeys if the
// keyring is empty.
func (k *Keyring) Seal(random io.Reader, plaintext []byte) (string, error) {
	out, err := k.AppendSeal(make([]byte, 0, MaxLen(len(plaintext))), random, plaintext)
	return string(out), err
}

// MaxLen is the length of the longest envelope of a payload of n bytes (its key id
// MaxKeyIDLen bytes long): room enough for AppendSeal.
func MaxLen(n int) int {
	return len(Prefix) + b64.EncodedLen(fixedSize+MaxKeyIDLen+n)
}

// AppendSeal is Seal appending the envelope to dst: the answer that carries it is
// written with no copy of the envelope (or of its base64) between.
func (k *Keyring) AppendSeal(dst []byte, random io.Reader, plaintext []byte) ([]byte, error) {
	if k == nil || k.primary == nil {
		return dst, ErrNoKeys
	}
	if random == nil {
		random = rand.Reader
	}
	mk := k.primary
	var fresh [SecretSize + 2*nonceSize]byte
	if _, err := io.ReadFull(random, fresh[:]); err != nil {
		return dst, fmt.Errorf("envelope: reading random: %w", err)
	}
	dek := fresh[:SecretSize]
	dataAEAD, err := newGCM(dek)
	if err != nil {
		return dst, fmt.Errorf("envelope: data key: %w", err)
	}

	l := layoutFor(len(mk.id))
	// Both seals append into raw's spare capacity, so the envelope is built in one
	// allocation whatever the payload size.
	raw := make([]byte, l.ciphertext, l.ciphertext+len(plaintext)+tagSize)
	raw[0] = Version
	raw[1] = byte(len(mk.id))
	copy(raw[2:], mk.id)
	copy(raw[l.dataNonce:l.wrapped], fresh[SecretSize:])
	mk.aead.Seal(raw[l.wrapped:l.wrapped], raw[l.wrapNonce:l.wrapped], dek, raw[:l.wrapped])
	dataAEAD.Seal(raw[l.ciphertext:l.ciphertext], raw[l.dataNonce:l.wrapNonce], plaintext, raw[:l.ciphertext])
	raw = raw[:cap(raw)]

	dst = append(dst, Prefix...)
	return b64.AppendEncode(dst, raw), nil
}

// Open decrypts an envelope made by Seal with any key of the keyring. It returns
// ErrInvalidEnvelope for anything that is not such an envelope, intact, and an error
// matching ErrKeyNotFound for a well-formed envelope naming a key the keyring does not
// hold. The returned slice is the caller's.
func (k *Keyring) Open(envelope string) ([]byte, error) {
	return k.OpenBytes([]byte(envelope)) // a copy, as base64's DecodeString makes
}

// OpenBytes is Open of an envelope held in bytes (a request body's), which it only
// reads: the envelope is decoded straight from them.
func (k *Keyring) OpenBytes(envelope []byte) ([]byte, error) {
	body, ok := bytes.CutPrefix(envelope, []byte(Prefix))
	if !ok {
		return nil, ErrInvalidEnvelope
	}
	raw := make([]byte, b64.DecodedLen(len(body)))
	n, err := b64.Decode(raw, body)
	raw = raw[:n]
	// The decoder skips CR and LF; a length that does not re-encode to the body
	// means some were there, and a second spelling of an envelope is refused.
	if err != nil || b64.EncodedLen(len(raw)) != len(body) {
		return nil, ErrInvalidEnvelope
	}
	return k.openRaw(raw)
}

// openRaw opens a decoded envelope, in place.
func (k *Keyring) openRaw(raw []byte) ([]byte, error) {
	if len(raw) < fixedSize+1 || raw[0] != Version {
		return nil, ErrInvalidEnvelope
	}
	idLen := int(raw[1])
	l := layoutFor(idLen)
	if idLen == 0 || idLen > MaxKeyIDLen || len(raw) < l.ciphertext+tagSize {
		return nil, ErrInvalidEnvelope
	}
	id := raw[2:l.dataNonce]
	if !validKeyID(id) {
		return nil, ErrInvalidEnvelope
	}
	var mk *masterKey
	if k != nil {
		mk = k.byID[string(id)]
	}
	if mk == nil {
		return nil, fmt.Errorf("%w: %q", ErrKeyNotFound, id)
	}

	dek, err := mk.aead.Open(make([]byte, 0, SecretSize), raw[l.wrapNonce:l.wrapped], raw[l.wrapped:l.ciphertext], raw[:l.wrapped])
	if err != nil {
		return nil, ErrInvalidEnvelope
	}
	dataAEAD, err := newGCM(dek)
	if err != nil {
		return nil, ErrInvalidEnvelope
	}
	// Decrypting in place: raw is ours, so the payload costs no further allocation.
	ciphertext := raw[l.ciphertext:]
	plaintext, err := dataAEAD.Open(ciphertext[:0], raw[l.dataNonce:l.wrapNonce], ciphertext, raw[:l.ciphertext])
	if err != nil {
		return nil, ErrInvalidEnvelope
	}
	return plaintext, nil
}
