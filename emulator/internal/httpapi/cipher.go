package httpapi

import (
	"encoding/json"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/hostemu/hostemu/emulator/internal/envelope"
	"github.com/hostemu/hostemu/emulator/internal/state"
)

type encryptRequest struct {
	Payload *string `json:"payload"`
}

type decryptRequest struct {
	Envelope *string `json:"envelope"`
}

func (a *API) encrypt(c *gin.Context) (any, error) {
	var req encryptRequest
	payload, present, err := stringFieldBytes(c, maxCipherBody, "payload", true, &req, func() *string { return req.Payload })
	if err != nil {
		return nil, err
	}
	if !present {
		_, err := a.world(c).Encrypt(nil) // the world words the missing field
		return nil, err
	}
	if info := exchangeOf(c); info != nil {
		info.payloadChars = utf8.RuneCount(payload)
	}
	// the envelope is sealed and encoded straight into the answer: an envelope is
	// URL-safe base64, nothing in it needs escaping
	const head, tail = `{"envelope":"`, `"}`
	b := make([]byte, 0, len(head)+envelope.MaxLen(len(payload))+len(tail))
	b, err = a.world(c).AppendEncrypt(append(b, head...), payload)
	if err != nil {
		return nil, err
	}
	return json.RawMessage(append(b, tail...)), nil
}

func (a *API) decrypt(c *gin.Context) (any, error) {
	var req decryptRequest
	env, present, err := stringFieldBytes(c, maxCipherBody, "envelope", false, &req, func() *string { return req.Envelope })
	if err != nil {
		return nil, err
	}
	if !present {
		_, err := a.world(c).Decrypt(nil)
		return nil, err
	}
	payload, err := a.world(c).DecryptBytes(env)
	if err != nil {
		return nil, err
	}
	b := make([]byte, 0, len(payload)+16)
	b = append(b, `{"payload":"`...)
	b = state.AppendJSONEscaped(b, payload)
	return json.RawMessage(append(b, `"}`...)), nil
}
