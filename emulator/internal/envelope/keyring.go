package envelope

import (
	"crypto/aes"
	"crypto/cipher"
	"encoding/base64"
	"errors"
	"fmt"
)

// SecretSize is the length in bytes of a master key secret and of every data key:
// both are AES-256 keys.
const SecretSize = 32

// MaxKeyIDLen is the longest key id, in bytes; the envelope stores the length in one
// byte, and 64 keeps envelopes short.
const MaxKeyIDLen = 64

// Sentinel errors, compared with errors.Is. httpapi maps ErrInvalidEnvelope to
// invalid_envelope and ErrKeyNotFound to key_not_found.
var (
	// ErrInvalidEnvelope is the one error for any envelope that is malformed,
	// truncated, extended or tampered with, so a caller learns nothing about which
	// part was wrong.
	ErrInvalidEnvelope = errors.New("envelope: invalid envelope")
	// ErrKeyNotFound means the envelope is well formed but names a master key the
	// keyring does not hold (a foreign envelope, or a key rotated out).
	ErrKeyNotFound = errors.New("envelope: key not found")
	// ErrNoKeys means Seal was called on a keyring without keys.
	ErrNoKeys = errors.New("envelope: keyring has no keys")
)

// Key is a master key: it wraps the data keys of the envelopes sealed under it. ID is
// written in clear inside each envelope so Open can pick the key: it must be non-empty,
// at most MaxKeyIDLen bytes of printable ASCII, without '.'. Secret is SecretSize bytes.
type Key struct {
	ID     string
	Secret []byte
}

// Keyring holds the master keys of a decryption service. The first key seals; every
// key opens, so a new key can be put first while envelopes sealed under the old ones
// still open (rotation). A Keyring is immutable and safe for concurrent use; the nil
// and zero Keyring hold no keys.
type Keyring struct {
	primary *masterKey
	byID    map[string]*masterKey
}

// masterKey keeps the AEAD built once, since key expansion would otherwise be paid on
// every Seal and Open. The secret itself is not kept: the AEAD holds its own copy.
type masterKey struct {
	id   string
	aead cipher.AEAD
}

// NewKeyring validates keys and builds a keyring whose first key seals. Zero keys are
// allowed (a service configured without keys); Seal then returns ErrNoKeys. The keyring
// does not retain keys' Secret slices, so the caller may reuse or wipe them.
func NewKeyring(keys []Key) (*Keyring, error) {
	k := &Keyring{byID: make(map[string]*masterKey, len(keys))}
	for i, key := range keys {
		// Errors name the id and never the secret, since they reach logs.
		if err := checkKeyID(key.ID); err != nil {
			return nil, fmt.Errorf("envelope: key %d: %w", i, err)
		}
		if _, dup := k.byID[key.ID]; dup {
			return nil, fmt.Errorf("envelope: key %d: duplicate key id %q", i, key.ID)
		}
		if len(key.Secret) != SecretSize {
			return nil, fmt.Errorf("envelope: key %q: secret is %d bytes, want %d", key.ID, len(key.Secret), SecretSize)
		}
		aead, err := newGCM(key.Secret)
		if err != nil {
			return nil, fmt.Errorf("envelope: key %q: %w", key.ID, err)
		}
		mk := &masterKey{id: key.ID, aead: aead}
		k.byID[key.ID] = mk
		if i == 0 {
			k.primary = mk
		}
	}
	return k, nil
}

// ParseKey decodes a master key secret written in base64, standard or URL alphabet,
// with or without padding, as fixture files hold it. The result must be SecretSize
// bytes.
func ParseKey(b64 string) ([]byte, error) {
	// A 32-byte secret encodes to 43 characters unpadded and 44 padded, so the
	// padding tells the variants apart; the alphabet is tried both ways because the
	// two alphabets share all but two characters.
	encodings := []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding}
	if len(b64) > 0 && b64[len(b64)-1] == '=' {
		encodings = []*base64.Encoding{base64.StdEncoding, base64.URLEncoding}
	}
	for _, enc := range encodings {
		secret, err := enc.Strict().DecodeString(b64)
		if err != nil {
			continue
		}
		if len(secret) != SecretSize {
			return nil, fmt.Errorf("envelope: key is %d bytes, want %d", len(secret), SecretSize)
		}
		return secret, nil
	}
	return nil, errors.New("envelope: key is not valid base64")
}

// checkKeyID reports why id cannot name a key. '.' is excluded so ids stay safe to
// use as separators in logs and future formats.
func checkKeyID(id string) error {
	switch {
	case id == "":
		return errors.New("empty key id")
	case len(id) > MaxKeyIDLen:
		return fmt.Errorf("key id is %d bytes, longer than %d", len(id), MaxKeyIDLen)
	case !validKeyID(id):
		return fmt.Errorf("key id %q must be printable ASCII without '.'", id)
	}
	return nil
}

// validKeyID checks the characters of id; it is generic so Open can check the id
// bytes of an envelope without converting them to a string.
func validKeyID[T string | []byte](id T) bool {
	for i := 0; i < len(id); i++ {
		if c := id[i]; c < ' ' || c > '~' || c == '.' {
			return false
		}
	}
	return true
}

func newGCM(key []byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}
