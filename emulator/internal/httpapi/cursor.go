package httpapi

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"

	"github.com/hostemu/hostemu/emulator/internal/apperr"
	"github.com/hostemu/hostemu/emulator/internal/state"
)

// A cursor is opaque to clients: the sort key of the last item of a page (not an offset,
// so a walk stays correct while items are created), bound to the list and its filters,
// and signed, so a malformed, forged or foreign cursor is invalid_cursor.
//
// Layout before base64url: version(1) | scope-hash(8) | created-at ns(8) | id | mac(12).

const (
	cursorVersion = 1
	cursorMACLen  = 12
)

func scopeHash(scope string) []byte {
	h := sha256.Sum256([]byte(scope))
	return h[:8]
}

func (a *API) mac(b []byte) []byte {
	m := hmac.New(sha256.New, a.cursorKey)
	m.Write(b)
	return m.Sum(nil)[:cursorMACLen]
}

// encodeCursor makes the cursor after key for the list described by scope.
func (a *API) encodeCursor(scope string, k *state.Key) *string {
	if k == nil {
		return nil
	}
	b := make([]byte, 0, 17+len(k.ID)+cursorMACLen)
	b = append(b, cursorVersion)
	b = append(b, scopeHash(scope)...)
	b = binary.BigEndian.AppendUint64(b, uint64(k.At))
	b = append(b, k.ID...)
	b = append(b, a.mac(b)...)
	s := base64.RawURLEncoding.EncodeToString(b)
	return &s
}

// decodeCursor checks and reads a cursor for the list described by scope.
func (a *API) decodeCursor(scope, s string) (*state.Key, error) {
	if s == "" {
		return nil, nil
	}
	bad := apperr.New(apperr.InvalidCursor, "the cursor is not one this list returned")
	b, err := base64.RawURLEncoding.Strict().DecodeString(s)
	// the decoder skips '\r' and '\n' even when strict, so a cursor with a line break in it
	// would decode as the one without: only the text encodeCursor wrote is that cursor
	if err != nil || base64.RawURLEncoding.EncodedLen(len(b)) != len(s) || len(b) < 17+cursorMACLen || len(b) > 17+128+cursorMACLen || b[0] != cursorVersion {
		return nil, bad
	}
	body, sum := b[:len(b)-cursorMACLen], b[len(b)-cursorMACLen:]
	if !hmac.Equal(sum, a.mac(body)) || !hmac.Equal(body[1:9], scopeHash(scope)) {
		return nil, bad
	}
	return &state.Key{At: int64(binary.BigEndian.Uint64(body[9:17])), ID: string(body[17:])}, nil
}
