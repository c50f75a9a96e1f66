package emulator_test

import (
	"maps"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hostemu/hostemu/emulator"
	"github.com/hostemu/hostemu/emulator/internal/clock"
	"github.com/hostemu/hostemu/emulator/internal/journal"
)

// A journaled request is dated at its end and timed from its start to its end, a
// fault's delay included: on a real clock its time is the wall's when it was answered
// (after the delay), on a manual clock the clock's, which the wall's delay does not
// move, on a scaled clock the emulated time at its end (the delay times N).
func TestJournalTimeOfADelayedRequest(t *testing.T) {
	t.Parallel()
	const delay = 150 * time.Millisecond
	for _, mode := range []clock.Mode{clock.Real, clock.Manual, clock.ScaledMode(10)} {
		e := newEnv(t, func(o *emulator.Options) {
			if o.ClockMode = mode; mode == clock.Real {
				o.ClockStart = time.Time{} // the wall itself
			}
		})
		clockNow := func() time.Time {
			now, err := time.Parse(time.RFC3339Nano, e.get("/_emulator/clock", "").JSON(t)["now"].(string))
			if err != nil {
				t.Fatal(err)
			}
			return now
		}
		mustStatus(t, e.post("/_emulator/faults", "", map[string]any{"match": map[string]any{"operation": "listProjects"}, "delay": delay.String(), "times": 1}), 201)
		before := clockNow().Truncate(time.Millisecond)
		mustStatus(t, e.get("/v1/projects", "t-read"), 200)
		after := clockNow()
		es := journalOf(t, e, "?path=/v1/projects")
		if len(es) != 1 {
			t.Fatalf("%s: %d entries", mode, len(es))
		}
		got := es[0]
		if got.DurationMS < float64(delay.Milliseconds()) {
			t.Errorf("%s: duration_ms %v, less than the delay of %v", mode, got.DurationMS, delay)
		}
		earliest := before.Add(delay)
		switch mode {
		case clock.Manual:
			earliest = before
		case clock.ScaledMode(10):
			earliest = before.Add(10 * delay)
		}
		if got.Time.Before(earliest) || got.Time.After(after) {
			t.Errorf("%s: the entry at %v, not between %v and %v", mode, got.Time, earliest, after)
		}
		if mode == clock.Manual && !got.Time.Equal(before) {
			t.Errorf("manual clock: the entry at %v, the clock at %v", got.Time, before)
		}
	}
}

// A fault's headers, named in any case, are journaled under the names and with the
// values the client got, hostemu's own kept headers beside them: a name the journal
// keeps only once the answer has others, and none the client did not get.
func TestJournalKeepsTheAnswerHeadersSent(t *testing.T) {
	t.Parallel()
	for _, headers := range []map[string]string{
		{"retry-after": "7", "x-ratelimit-remaining": "5"},                                 // hostemu's names only
		{"RETRY-AFTER": "8", "Content-type": "application/json", "x-ratelimit-extra": "e"}, // one name of its own
		{"location": "/elsewhere?a=b", "X-Other": "o"},
	} {
		e := newEnv(t)
		mustStatus(t, e.post("/_emulator/faults", "", map[string]any{"match": map[string]any{"operation": "listProjects"}, "status": 503, "headers": headers}), 201)
		r := e.get("/v1/projects", "t-read")
		mustStatus(t, r, 503)
		es := journalOf(t, e, "?path=/v1/projects")
		if len(es) != 1 || es[0].Response == nil {
			t.Fatalf("%v: entries %+v", headers, es)
		}
		kept := es[0].Response.Headers
		sent := map[string]string{}
		for name, vals := range r.Header {
			if journal.AnswerHeader(name) {
				sent[name] = strings.Join(vals, ", ")
			}
		}
		if !maps.Equal(map[string]string(kept), sent) {
			t.Errorf("%v: journaled %v, sent %v", headers, kept, sent)
		}
		for name, v := range headers {
			if journal.AnswerHeader(name) && kept[http.CanonicalHeaderKey(name)] != v {
				t.Errorf("%v: %s journaled as %q", headers, name, kept[http.CanonicalHeaderKey(name)])
			}
		}
	}
}
