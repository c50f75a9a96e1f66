package world_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/events"
	"github.com/hostemu/hostemu/emulator/internal/fault"
	"github.com/hostemu/hostemu/emulator/internal/journal"
	"github.com/hostemu/hostemu/emulator/internal/world"
)

// drain reads what s holds now; the world emits synchronously, so after an operation
// returns its events are in the buffer.
func drain(s *events.Subscription) []events.Event {
	var out []events.Event
	for {
		select {
		case ev, ok := <-s.C():
			if !ok {
				return out
			}
			out = append(out, ev)
		default:
			return out
		}
	}
}

func TestEventsOrderedAndComplete(t *testing.T) {
	w := newWorld(t, project())
	sub := w.Events().Subscribe()
	defer w.Events().Unsubscribe(sub)

	if _, err := w.CreateDeployment(world.NewDeployment{ProjectID: ptr("prj_a"), Files: map[string]string{}}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Advance(6 * time.Second); err != nil {
		t.Fatal(err)
	}
	f, err := w.AddFault(fault.Spec{Status: 503, Times: 1})
	if err != nil {
		t.Fatal(err)
	}
	act, ok := w.MatchFault(fault.Request{Method: "GET", Path: "/v1/projects", Service: "hosting"})
	if !ok {
		t.Fatal("fault did not fire")
	}
	w.Record(journal.Entry{Method: "GET", Path: "/v1/projects", Status: 503, ErrorCode: "service_unavailable", FaultID: act.FaultID, Body: strings.Repeat("x", 5000)})
	if err := w.UseScenario(ptr("instant")); err != nil {
		t.Fatal(err)
	}
	tok, _ := w.MintToken(ptr("read"))
	w.RevokeToken(tok.Token)
	w.RemoveFault(f.ID)
	if _, err := w.AddDomain("prj_a", world.NewDomain{Hostname: ptr("shop.test")}); err != nil {
		t.Fatal(err)
	}
	if err := w.Reset(); err != nil {
		t.Fatal(err)
	}

	want := []string{
		"deployment created queued",
		"deployment status building",
		"deployment status ready",
		"clock",
		"fault added",
		"fault hit",
		"request",
		"scenario switched",
		"token minted",
		"token revoked",
		"fault removed",
		"domain added pending",
		"domain status verifying", // the instant scenario: zero-time steps happen at once
		"domain status active",
		"reset reset",
	}
	got := drain(sub)
	var names []string
	for i, ev := range got {
		if ev.Seq != got[0].Seq+uint64(i) {
			t.Errorf("event %d has seq %d after %d", i, ev.Seq, got[0].Seq)
		}
		var data struct{ Change, Status string }
		json.Unmarshal(ev.Data, &data)
		names = append(names, strings.TrimSpace(strings.Join([]string{ev.Type, data.Change, data.Status}, " ")))
	}
	if strings.Join(names, "\n") != strings.Join(want, "\n") {
		t.Fatalf("events:\n%s\nwant:\n%s", strings.Join(names, "\n"), strings.Join(want, "\n"))
	}
	var hit world.FaultEvent
	json.Unmarshal(got[5].Data, &hit)
	if hit.ID != f.ID || hit.Hits != 1 {
		t.Errorf("hit event %s", got[5].Data)
	}
	var reset struct{ At string }
	json.Unmarshal(got[len(got)-1].Data, &reset)
	if want := "2026-11-21T12:00:00.000Z"; reset.At != want { // a manual clock rewound to its start
		t.Errorf("reset event at %q, want %q (a Timestamp, as every time written)", reset.At, want)
	}
	var req journal.Entry
	json.Unmarshal(got[6].Data, &req)
	if req.FaultID != f.ID || req.ErrorCode != "service_unavailable" || len(req.Body) != 1024 || !req.BodyTruncated {
		t.Errorf("request event: fault %q code %q body %d truncated %v", req.FaultID, req.ErrorCode, len(req.Body), req.BodyTruncated)
	}
}

// A subscriber that never reads does not hold the world up: it is dropped.
func TestStuckSubscriberDoesNotBlockRequests(t *testing.T) {
	w := newWorld(t, project())
	stuck := w.Events().Subscribe()
	for range events.DefaultBuffer * 4 {
		w.Record(journal.Entry{Method: "GET", Path: "/v1/projects", Status: 200})
	}
	n := len(drain(stuck))
	if n != events.DefaultBuffer || stuck.Reason() != events.ReasonSlow {
		t.Fatalf("stuck subscriber: %d events, reason %q", n, stuck.Reason())
	}
	if w.Events().Listening() {
		t.Fatal("a dropped subscriber still counts as listening")
	}
}

// A failed certificate renewal emits a domain event, change renewal_failed, tls error,
// carrying the scenario's error.
func TestRenewalFailedEvent(t *testing.T) {
	w := newWorld(t, project())
	reg := w.Scenarios()
	if problems := reg.AddInline("inline", []byte("name: fails\ndomains:\n  lifecycle: [{status: pending}, {status: verifying}, {status: active}]\ncertificates:\n  valid_for: 10d\n  renew_before: 5d\n  renewal: {fail: true, error: {code: acme_rejected, message: no}}\n")); len(problems) > 0 {
		t.Fatal(problems)
	}
	if err := w.UseScenario(ptr("fails")); err != nil {
		t.Fatal(err)
	}
	if _, err := w.AddDomain("prj_a", world.NewDomain{Hostname: ptr("shop.test")}); err != nil {
		t.Fatal(err)
	}
	sub := w.Events().Subscribe()
	defer w.Events().Unsubscribe(sub)
	if _, err := w.Advance(5 * 24 * time.Hour); err != nil {
		t.Fatal(err)
	}
	for _, ev := range drain(sub) {
		b, _ := json.Marshal(ev.Data)
		if s := string(b); strings.Contains(s, `"change":"renewal_failed"`) {
			if !strings.Contains(s, `"tls_status":"error"`) || !strings.Contains(s, `"code":"acme_rejected"`) || !strings.Contains(s, `"status":"active"`) {
				t.Errorf("renewal_failed event %s", s)
			}
			return
		}
	}
	t.Error("no renewal_failed event")
}
