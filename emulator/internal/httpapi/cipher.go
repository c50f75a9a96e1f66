package httpapi

import (
	"encoding/json"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

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
	payload, err := decodeStringField(c, maxCipherBody, "payload", true, &req, func() *string { return req.Payload })
	if err != nil {
		return nil, err
	}
	if info := exchangeOf(c); info != nil && payload != nil {
		info.payloadChars = utf8.RuneCountInString(*payload)
	}
	env, err := a.world(c).Encrypt(payload)
	if err != nil {
		return nil, err
	}
	// an envelope is URL-safe base64: nothing in it needs escaping
	b := make([]byte, 0, len(env)+16)
	b = append(b, `{"envelope":"`...)
	b = append(b, env...)
	return json.RawMessage(append(b, `"}`...)), nil
}

func (a *API) decrypt(c *gin.Context) (any, error) {
	var req decryptRequest
	envelope, err := decodeStringField(c, maxCipherBody, "envelope", false, &req, func() *string { return req.Envelope })
	if err != nil {
		return nil, err
	}
	payload, err := a.world(c).Decrypt(envelope)
	if err != nil {
		return nil, err
	}
	b := make([]byte, 0, len(payload)+16)
	b = append(b, `{"payload":`...)
	b = state.AppendJSONString(b, string(payload))
	return json.RawMessage(append(b, '}')), nil
}
