package httpapi

import (
	"errors"
	"io"

	"github.com/gin-gonic/gin"

	"github.com/hostemu/hostemu/emulator/internal/apperr"
	"github.com/hostemu/hostemu/emulator/internal/state"
)

// DefaultMaxStateBytes bounds PUT /_emulator/state when Limits.StateBytes is 0.
const DefaultMaxStateBytes = 256 << 20

// errStateTooLarge is readSnapshot's error for a body over its limit.
var errStateTooLarge = errors.New("state body over the limit")

// decodeSnapshot reads PUT /_emulator/state's body: a JSON Content-Type, at most max
// bytes, one JSON object and nothing after it.
//
// What it decodes is charged, element by element, to the budget of bytes in flight
// (state.WeightOf: the decoded size, not the text's, which the decoder holds one
// element of at a time), until the request is answered: a state import costs its
// decoded size, and imports together cannot pass the budget.
func decodeSnapshot(c *gin.Context, max int64) (state.Snapshot, error) {
	if err := notJSON(c, "state"); err != nil {
		return state.Snapshot{}, err
	}
	if err := unsupportedEncoding(c.Request); err != nil {
		return state.Snapshot{}, err
	}
	if c.Request.ContentLength > max {
		return state.Snapshot{}, stateTooLarge(max)
	}
	body, charge := io.Reader(c.Request.Body), func(int64) bool { return true }
	if m, ok := c.Request.Body.(*meteredBody); ok {
		body, charge = m.r, m.reserve // charge the decoded state, not the text
	}
	snap, err := readSnapshot(body, max, charge)
	_, coded := apperr.As(err)
	switch {
	case err == nil, coded:
		return snap, err
	case errors.Is(err, errStateTooLarge):
		return snap, stateTooLarge(max)
	case errors.Is(err, errBodyBudget):
		return snap, busy(c)
	}
	return snap, apperr.New(apperr.InvalidRequest, "the request body could not be read")
}

func stateTooLarge(max int64) error {
	return apperr.Errorf(apperr.PayloadTooLarge, "the state is over the limit of %d bytes (--max-state-bytes)", max)
}

// readSnapshot decodes a state from r as a stream (state.ReadSnapshot), at most max
// bytes (errStateTooLarge beyond), with the request's wording of JSON errors. charge
// is asked for each element's decoded size; readSnapshot fails with errBodyBudget when
// it refuses.
func readSnapshot(r io.Reader, max int64, charge func(int64) bool) (state.Snapshot, error) {
	snap, err := state.ReadSnapshot(r, state.ReadOptions{Max: max, Charge: charge, JSONError: jsonError})
	switch {
	case errors.Is(err, state.ErrTooLarge):
		return snap, errStateTooLarge
	case errors.Is(err, state.ErrRefused):
		return snap, errBodyBudget
	}
	return snap, err
}
