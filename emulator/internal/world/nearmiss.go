package world

import (
	"strconv"

	"github.com/hostemu/hostemu/emulator/internal/apperr"
	"github.com/hostemu/hostemu/emulator/internal/fault"
)

// FaultNearMisses gives each fault of fs that has no hits its near misses, by id: the
// closest fault.NearMissMax of the newest fault.NearMissWindow journaled requests that
// held all but one or two fields of its match (an empty list when none did). The
// journal is copied once, out of its lock, and weighed against each fault; faults with
// hits get none.
func (w *World) FaultNearMisses(fs []fault.Fault) map[string][]fault.NearMiss {
	var cands []*fault.Candidate
	out := map[string][]fault.NearMiss{}
	for i := range fs {
		if fs[i].Hits > 0 {
			continue
		}
		if cands == nil {
			cands = w.journal.Candidates()
		}
		out[fs[i].ID] = fs[i].NearMisses(cands)
	}
	return out
}

// nearMissesOf gives the await_timeout e of a requests await its near misses: in the
// envelope's near_misses and, for whoever reads only the message, at its end.
func (w *World) nearMissesOf(req AwaitRequest, e *apperr.Error) {
	f, err := req.Requests.Filter()
	if err != nil || f.Conditions() == 0 {
		return // checked before the wait; or any request would do
	}
	nms := w.journal.NearMisses(f)
	e.NearMisses = nms
	if len(nms) == 0 {
		e.Message += "; no near misses among the newest " + strconv.Itoa(fault.NearMissWindow) + " requests"
		return
	}
	e.Message += "; near misses: " + fault.Summary(nms)
}
