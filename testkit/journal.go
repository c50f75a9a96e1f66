package testkit

import (
	"net/http"
)

// Requests returns the requests of the hosting and decryption services that the
// emulator answered and filter selects, oldest first (the control API's own calls are
// not journaled). The journal keeps the newest 1,000 by default.
func (e *Emulator) Requests(filter RequestFilter) []Request {
	e.tb.Helper()
	q := filter.query()
	path := "/_emulator/requests"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	var out struct {
		Requests []Request `json:"requests"`
	}
	e.call(http.MethodGet, path, nil, &out)
	return out.Requests
}

// ClearRequests empties the journal.
func (e *Emulator) ClearRequests() {
	e.tb.Helper()
	e.call(http.MethodDelete, "/_emulator/requests", nil, nil)
}
