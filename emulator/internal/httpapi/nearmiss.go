package httpapi

import (
	"encoding/json"
	"net/http"

	"github.com/hostemu/hostemu/emulator/internal/apperr"
)

// nearMissError is the error object of an answer that carries near misses.
type nearMissError struct {
	errorObject
	NearMisses any `json:"near_misses"`
}

// writeNearMissError writes a control API error that carries near misses (an await's
// await_timeout): the envelope with "near_misses" beside the code and message.
func (a *API) writeNearMissError(ex *exchange, w http.ResponseWriter, r *http.Request, status int, e *apperr.Error) {
	ex.errCode = string(e.Code)
	b, _ := json.Marshal(struct {
		Error nearMissError `json:"error"`
	}{nearMissError{errorObject{Code: string(e.Code), Message: e.Message, DocURL: a.baseURL(r) + "/docs/errors/" + string(e.Code)}, e.NearMisses}})
	writeJSONTo(w, status, b)
}
