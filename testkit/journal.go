package testkit

import (
	"net/http"
)

// Requests returns the requests of the hosting and decryption services that the
// emulator answered and filter selects, oldest first (the control API's own calls are
// not journaled). The journal keeps the newest 1,000 by default.
func (e *Emulator) Requests(filter RequestFilter) []Request {
	e.tb.Helper()
	return e.queryRequests(filter).Requests
}

// RequestNearMisses is what almost matched filter when it selects no journaled request:
// up to 5 of the newest 200 requests that held all but one or two of its fields, each
// with what it had in the fields that differed — the near_misses of
// GET /_emulator/requests. It is empty when filter selects a request, when nothing came
// close, and for a filter of only Since and Limit (no condition to miss).
func (e *Emulator) RequestNearMisses(filter RequestFilter) []NearMiss {
	e.tb.Helper()
	return e.queryRequests(filter).NearMisses
}

type requestsAnswer struct {
	Requests   []Request  `json:"requests"`
	NearMisses []NearMiss `json:"near_misses"`
}

func (e *Emulator) queryRequests(filter RequestFilter) requestsAnswer {
	e.tb.Helper()
	q := filter.query()
	path := "/_emulator/requests"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	var out requestsAnswer
	e.call(http.MethodGet, path, nil, &out)
	return out
}

// ClearRequests empties the journal.
func (e *Emulator) ClearRequests() {
	e.tb.Helper()
	e.call(http.MethodDelete, "/_emulator/requests", nil, nil)
}
