package testkit

import (
	"context"
	"errors"
	"net/http"
	"net/url"
)

// InjectFault adds a fault: the requests f.Match selects get its action (an error
// status, a delay, a dropped connection, a 429, a timeout) as often as f.Times and
// f.Probability allow. It stays until removed or Reset.
func (e *Emulator) InjectFault(f FaultSpec) *Fault {
	e.tb.Helper()
	var out struct {
		ID string `json:"id"`
	}
	e.call(http.MethodPost, "/_emulator/faults", f, &out)
	return &Fault{e: e, id: out.ID}
}

// Fault is a fault added by InjectFault.
type Fault struct {
	e  *Emulator
	id string
}

// ID is the fault's id in the control API (flt_1, flt_2, ...).
func (f *Fault) ID() string { return f.id }

// Remove removes the fault. Removing it twice, or after Reset, fails the test.
func (f *Fault) Remove() {
	f.e.tb.Helper()
	f.e.call(http.MethodDelete, "/_emulator/faults/"+url.PathEscape(f.id), nil, nil)
}

// Faults lists the faults in force: those added, in the order added, then the active
// scenario's; each with no hits carries its near misses.
func (e *Emulator) Faults() []FaultInfo {
	e.tb.Helper()
	var out struct {
		Faults []FaultInfo `json:"faults"`
	}
	e.call(http.MethodGet, "/_emulator/faults", nil, &out)
	return out.Faults
}

// NearMisses is, while the fault has no hits, what almost matched it: up to 5 of the
// newest 200 journaled requests that held all but one or two fields of its match, each
// with what it had in the fields that differed (none once the fault has fired). Asking
// after it was removed or the emulator reset fails the test. It fetches this fault
// alone (GET /_emulator/faults/{id}): the cost is its near misses, not every fault's.
func (f *Fault) NearMisses() []NearMiss {
	f.e.tb.Helper()
	return f.info().NearMisses
}

// Hits is how many times the fault has fired. Asking after it was removed or the
// emulator reset fails the test. It fetches this fault alone, so asking in a loop
// costs one fault's near misses a call, not the listing's.
func (f *Fault) Hits() int64 {
	f.e.tb.Helper()
	return f.info().Hits
}

// info is the fault as GET /_emulator/faults/{id} answers it; a 404 fault_not_found
// fails the test saying the fault is gone, as the listing's absence does. A hostemu
// from before that route (a service container older than this testkit) answers 405 or
// 404 not_found: the fault is then read from the listing.
func (f *Fault) info() FaultInfo {
	f.e.tb.Helper()
	var out FaultInfo
	path := "/_emulator/faults/" + url.PathEscape(f.id)
	err := f.e.r.do(context.Background(), http.MethodGet, path, nil, &out)
	var ae *APIError
	switch {
	case err == nil:
	case errors.As(err, &ae) && ae.Code == "fault_not_found":
		f.gone()
	case errors.As(err, &ae) && (ae.Status == http.StatusMethodNotAllowed || ae.Code == "not_found"):
		for _, x := range f.e.Faults() {
			if x.ID == f.id {
				return x
			}
		}
		f.gone()
	default:
		f.e.tb.Fatalf("testkit: GET %s: %v", path, err)
	}
	return out
}

func (f *Fault) gone() {
	f.e.tb.Helper()
	f.e.tb.Fatalf("testkit: fault %s is gone (removed, or the emulator was reset)", f.id)
}
