package httpapi

import (
	"crypto/rand"
	"fmt"
	"unicode/utf8"

	"github.com/gin-gonic/gin"
)

// maxPayload is the largest /v1/encrypt payload, in characters of the string.
const maxPayload = 1 << 20

type encryptRequest struct {
	Payload *string `json:"payload"`
}

type encryptResponse struct {
	Envelope string `json:"envelope"`
}

type decryptRequest struct {
	Envelope *string `json:"envelope"`
}

type decryptResponse struct {
	Payload string `json:"payload"`
}

func (a *API) encrypt(c *gin.Context) (any, error) {
	var req encryptRequest
	if err := decodeJSON(c, &req, maxCipherBody); err != nil {
		return nil, err
	}
	if req.Payload == nil {
		return nil, newError("invalid_request", "field \"payload\" is required: a string")
	}
	if n := utf8.RuneCountInString(*req.Payload); n > maxPayload {
		return nil, newError("payload_too_large", fmt.Sprintf("field \"payload\" is %d characters; the limit is %d", n, maxPayload))
	}
	env, err := a.w.Keyring().Seal(rand.Reader, []byte(*req.Payload))
	if err != nil {
		return nil, err
	}
	return encryptResponse{Envelope: env}, nil
}

func (a *API) decrypt(c *gin.Context) (any, error) {
	var req decryptRequest
	if err := decodeJSON(c, &req, maxCipherBody); err != nil {
		return nil, err
	}
	if req.Envelope == nil {
		return nil, newError("invalid_request", "field \"envelope\" is required: a string")
	}
	payload, err := a.w.Keyring().Open(*req.Envelope)
	if err != nil {
		return nil, err
	}
	return decryptResponse{Payload: string(payload)}, nil
}
