package world

import (
	"github.com/hostemu/hostemu/emulator/internal/fault"
)

// maxFaultActions bounds the actions one firing counts: its effect, headers, body, a
// break and then.
const maxFaultActions = 5

// faultActions is what a fault that fired did, as coverage names it
// (coverage.FaultActions), in buf: its effect (status, error, rate_limit, timeout,
// drop, pass, or delay when a delay is all it adds), then each way it changed the
// answer (headers, body, break_<kind>), then "then" when it was a step of a then
// sequence.
func faultActions(act fault.Action, buf *[maxFaultActions]string) []string {
	out := buf[:0]
	switch {
	case act.Pass:
		out = append(out, "pass")
	case act.Error != "":
		out = append(out, "error")
	case act.Status != 0:
		out = append(out, "status")
	case act.RateLimit:
		out = append(out, "rate_limit")
	case act.Timeout:
		out = append(out, "timeout")
	case act.Drop:
		out = append(out, "drop")
	case act.Delay > 0 || act.Shape == nil && act.Break == "":
		out = append(out, "delay")
	}
	if sh := act.Shape; sh != nil {
		if len(sh.Headers) > 0 {
			out = append(out, "headers")
		}
		if sh.Body != nil {
			out = append(out, "body")
		}
	}
	if act.Break != "" {
		out = append(out, breakAction(act.Break))
	}
	if act.Step > 0 {
		out = append(out, "then")
	}
	return out
}

// breakActions are coverage's names of fault.Breaks' kinds, made once: a firing
// allocates none.
var breakActions = func() map[string]string {
	m := make(map[string]string, len(fault.Breaks))
	for _, k := range fault.Breaks {
		m[k] = "break_" + k
	}
	return m
}()

// breakAction is coverage's name of a break kind.
func breakAction(kind string) string {
	if a, ok := breakActions[kind]; ok {
		return a
	}
	return "break_" + kind
}
