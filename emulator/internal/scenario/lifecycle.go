package scenario

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hostemu/hostemu/emulator/internal/fault"
	"github.com/hostemu/hostemu/emulator/internal/state"

	"gopkg.in/yaml.v3"
)

// lifecycleKind is what a lifecycle in docs/scenarios.md allows for one kind of resource.
type lifecycleKind struct {
	resource    string              // "deployment" or "domain"
	first       string              // the status at creation
	statuses    []string            // every status, in the order the docs give them
	next        map[string][]string // allowed transitions
	terminal    []string            // the statuses a lifecycle may end at
	mayStay     bool                // a lifecycle of only the first step is allowed
	defaultCode string              // the error code of an error step without one
	maxSteps    int                 // the longest path through next
}

var deploymentKind = lifecycleKind{
	resource: "deployment",
	first:    "queued",
	statuses: []string{"queued", "building", "ready", "error"},
	next: map[string][]string{
		"queued":   {"building"},
		"building": {"ready", "error"},
		"ready":    {"error"},
	},
	terminal:    []string{"ready", "error"},
	defaultCode: state.CodeBuildFailed,
	maxSteps:    4, // queued, building, ready, error
}

var domainKind = lifecycleKind{
	resource: "domain",
	first:    "pending",
	statuses: []string{"pending", "verifying", "active", "error"},
	next: map[string][]string{
		"pending":   {"verifying", "error"},
		"verifying": {"active", "error", "pending"}, // pending: verification failed, retry
	},
	terminal:    []string{"active", "error"},
	mayStay:     true, // [{status: pending}] is "DNS that never verifies" (docs/scenarios.md)
	defaultCode: state.CodeVerificationFailed,
	maxSteps:    3 + 2*MaxDomainRetries, // pending, verifying, (pending, verifying)×retries, active or error
}

// MaxDomainRetries bounds how often a domain lifecycle may go back from verifying to
// pending (a failed verification, retried): enough for "verifies late, after retries",
// and a bound, so no lifecycle is unbounded.
const MaxDomainRetries = 3

// stepsWhy explains maxSteps in a problem.
func (k lifecycleKind) stepsWhy() string {
	if k.resource == "domain" {
		return fmt.Sprintf(" (verifying goes back to pending at most %d times)", MaxDomainRetries)
	}
	return ", as no status repeats"
}

// lifecycle reads a list of steps and checks it against the kind's transitions.
func (d *decoder) lifecycle(n *yaml.Node, where string, kind lifecycleKind) ([]Step, bool) {
	items, ok := d.seq(n, where)
	if !ok {
		return nil, false
	}
	if len(items) == 0 {
		d.Addf(n, "%s: empty; a %s lifecycle starts with %s", where, kind.resource, kind.first)
		return nil, false
	}
	if len(items) > kind.maxSteps {
		d.Addf(n, "%s: %d steps; a %s lifecycle has at most %d steps%s", where, len(items), kind.resource, kind.maxSteps, kind.stepsWhy())
		return nil, false
	}
	steps := make([]Step, 0, len(items))
	good := true
	prev := ""
	for i, item := range items {
		at := fmt.Sprintf("%s[%d]", where, i)
		step, ok := d.step(item, at, kind, i == 0, prev)
		good = good && ok
		if step.Status == "" {
			break // without a known status, every later transition check would mislead
		}
		prev = step.Status
		steps = append(steps, step)
	}
	if !good {
		return nil, false
	}
	// A lifecycle stopping short would leave every resource it governs in that status
	// forever; it is also what a file caught half-written looks like (issue 25), so it is
	// refused rather than applied.
	// A domain that stays pending is the documented "DNS that never verifies".
	if last := steps[len(steps)-1].Status; !slices.Contains(kind.terminal, last) && !(kind.mayStay && len(steps) == 1) {
		d.Addf(items[len(steps)-1], "%s: ends at %s: a %s lifecycle ends with %s (a resource would stay %s forever)",
			where, last, kind.resource, strings.Join(kind.terminal, " or "), last)
		return nil, false
	}
	return steps, true
}

func (d *decoder) step(n *yaml.Node, at string, kind lifecycleKind, first bool, prev string) (Step, bool) {
	f, known := d.Fields(n, at, "status", "after", "error")
	if f == nil {
		return Step{}, false
	}
	sv, has := f["status"]
	if !has {
		d.Addf(n, "%s: missing status", at)
		return Step{}, false
	}
	status, ok := d.Str(sv.Value, at+".status")
	if !ok {
		return Step{}, false
	}
	if !slices.Contains(kind.statuses, status) {
		d.Addf(sv.Value, "%s.status: unknown %s status %q%s", at, kind.resource, status, didYouMean(status, kind.statuses))
		return Step{}, false
	}
	step := Step{Status: status}
	good := known // an unknown key: the rest of the step is checked all the same
	if first && status != kind.first {
		d.Addf(sv.Value, "%s.status: a %s lifecycle starts with %s (the status at creation), not %s", at, kind.resource, kind.first, status)
		good = false
	}
	if !first {
		if allowed := kind.next[prev]; len(allowed) == 0 {
			d.Addf(sv.Value, "%s.status: %s is final; no step can follow it", at, prev)
			good = false
		} else if !slices.Contains(allowed, status) {
			d.Addf(sv.Value, "%s.status: %s cannot follow %s (after %s comes %s; no step is skipped or repeated)",
				at, status, prev, prev, strings.Join(allowed, " or "))
			good = false
		}
	}
	if av, has := f["after"]; has {
		after, ok := d.duration(av.Value, at+".after")
		good = good && ok
		if ok && first && after > 0 {
			d.Addf(av.Value, "%s.after: the first step is the status at creation; it cannot wait (remove after)", at)
			good = false
		}
		step.After = after
	}
	if ev, has := f["error"]; has {
		if status != "error" {
			d.Addf(ev.Key, "%s.error: only an error step carries error", at)
			return step, false
		}
		se, ok := d.stepError(ev.Value, at+".error", kind)
		good = good && ok
		step.Error = se
	}
	return step, good
}

func (d *decoder) stepError(n *yaml.Node, at string, kind lifecycleKind) (*StepError, bool) {
	f, known := d.Fields(n, at, "code", "message")
	if f == nil {
		return nil, false
	}
	se := &StepError{Code: kind.defaultCode}
	if cv, has := f["code"]; has {
		code, ok := d.Str(cv.Value, at+".code")
		if !ok {
			return nil, false
		}
		if !fault.ValidCode(code) {
			d.Addf(cv.Value, "%s.code: %q: want snake_case, e.g. %s", at, code, kind.defaultCode)
			return nil, false
		}
		se.Code = code
	}
	if mv, has := f["message"]; has {
		msg, ok := d.Str(mv.Value, at+".message")
		if !ok {
			return nil, false
		}
		se.Message = msg
	}
	return se, known
}
