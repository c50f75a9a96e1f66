package httpapi

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/gin-gonic/gin"
	"github.com/hostemu/hostemu/emulator/internal/apperr"
)

// maxPayload is the largest /v1/encrypt payload, in characters of the string.
const maxPayload = 1 << 20

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
	if payload == nil {
		return nil, apperr.New(apperr.InvalidRequest, "field \"payload\" is required: a string")
	}
	if info := infoOf(c); info != nil {
		info.payloadChars = utf8.RuneCountInString(*payload)
	}
	if len(*payload) > maxPayload { // more bytes than the limit's characters: count them
		if n := utf8.RuneCountInString(*payload); n > maxPayload {
			return nil, apperr.New(apperr.PayloadTooLarge, fmt.Sprintf("field \"payload\" is %d characters; the limit is %d", n, maxPayload))
		}
	}
	env, err := a.world(c).Encrypt(*payload)
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
	if envelope == nil {
		return nil, apperr.New(apperr.InvalidRequest, "field \"envelope\" is required: a string")
	}
	payload, err := a.world(c).Decrypt(*envelope)
	if err != nil {
		return nil, err
	}
	b := make([]byte, 0, len(payload)+16)
	b = append(b, `{"payload":`...)
	b = appendJSONString(b, string(payload))
	return json.RawMessage(append(b, '}')), nil
}
