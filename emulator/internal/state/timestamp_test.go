package state

import (
	"encoding/json"
	"testing"
	"time"
)

func TestTimestamp(t *testing.T) {
	tests := []struct {
		in   time.Time
		want string
	}{
		{time.Date(2026, 11, 21, 12, 0, 3, 0, time.UTC), `"2026-11-21T12:00:03.000Z"`},
		{time.Date(2026, 11, 21, 12, 0, 3, 800_000_000, time.UTC), `"2026-11-21T12:00:03.800Z"`},
		{time.Date(2026, 11, 21, 12, 0, 3, 410_000_000, time.UTC), `"2026-11-21T12:00:03.410Z"`},
		{time.Date(2026, 11, 21, 12, 0, 3, 999_999_999, time.UTC), `"2026-11-21T12:00:03.999Z"`}, // cut, not rounded up
		{time.Date(2026, 11, 21, 13, 0, 3, 1, time.FixedZone("CET", 3600)), `"2026-11-21T12:00:03.000Z"`},
		{time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC), `"0001-01-01T00:00:00.000Z"`},
		{time.Date(1969, 12, 31, 23, 59, 59, 999_500_000, time.UTC), `"1969-12-31T23:59:59.999Z"`},
		{time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC), `"9999-12-31T23:59:59.000Z"`},
	}
	for _, tt := range tests {
		b, err := json.Marshal(Timestamp(tt.in))
		if err != nil || string(b) != tt.want {
			t.Errorf("%v: %s, %v; want %s", tt.in, b, err, tt.want)
		}
	}
	reads := []struct {
		in   string
		want time.Time
	}{
		{`"2026-11-21T12:00:03Z"`, time.Date(2026, 11, 21, 12, 0, 3, 0, time.UTC)},
		{`"2026-11-21T12:00:03.41+01:00"`, time.Date(2026, 11, 21, 11, 0, 3, 410_000_000, time.UTC)},
		{`"2026-11-21T12:00:03.123456789Z"`, time.Date(2026, 11, 21, 12, 0, 3, 123_456_789, time.UTC)},
	}
	for _, tt := range reads {
		var ts Timestamp
		if err := json.Unmarshal([]byte(tt.in), &ts); err != nil {
			t.Errorf("%s: %v", tt.in, err)
		}
		if !time.Time(ts).Equal(tt.want) {
			t.Errorf("%s read as %v, want %v", tt.in, time.Time(ts), tt.want)
		}
	}
}

// Every time field of the state types is written with three digits, and reads back.
func TestStateTypesWriteTimestamps(t *testing.T) {
	at := time.Date(2026, 11, 21, 12, 0, 3, 0, time.UTC)
	issuer := "CA"
	snap := Snapshot{
		Projects: []Project{{ID: "prj_a", Name: "a", CreatedAt: at}},
		Deployments: []Deployment{{ID: "dpl_a", ProjectID: "prj_a", Status: "ready", CreatedAt: at,
			Timings: Timings{QueuedAt: &at, ReadyAt: &at}, Logs: []LogLine{{CreatedAt: at, Text: "x"}}}},
		Domains:   []Domain{{Hostname: "a.test", ProjectID: "prj_a", CreatedAt: at, TLS: TLS{Status: "issued", ExpiresAt: &at, Issuer: &issuer}}},
		Detaching: []Detachment{{Hostname: "b.test", DeleteAt: at, DetachAt: at}},
	}
	b, err := json.Marshal(snap)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"tokens":null,"policy":{"domain_write_scope":""},"cipher":{"api_keys":null,"master_keys":null},` +
		`"projects":[{"id":"prj_a","name":"a","env":null,"production_deployment_id":"","created_at":"2026-11-21T12:00:03.000Z"}],` +
		`"deployments":[{"id":"dpl_a","project_id":"prj_a","url":"","target":"","status":"ready","env":null,"files":null,` +
		`"timings":{"queued_at":"2026-11-21T12:00:03.000Z","building_at":null,"ready_at":"2026-11-21T12:00:03.000Z","error_at":null},` +
		`"error":null,"logs":[{"text":"x","created_at":"2026-11-21T12:00:03.000Z"}],"created_at":"2026-11-21T12:00:03.000Z"}],` +
		`"domains":[{"hostname":"a.test","project_id":"prj_a","status":"","tls":{"status":"issued","issuer":"CA","expires_at":"2026-11-21T12:00:03.000Z"},` +
		`"error":null,"created_at":"2026-11-21T12:00:03.000Z"}],"files":null,` +
		`"detaching":[{"hostname":"b.test","deleted_at":"2026-11-21T12:00:03.000Z","detach_at":"2026-11-21T12:00:03.000Z"}],"uploads":null}`
	if string(b) != want {
		t.Fatalf("got  %s\nwant %s", b, want)
	}
	var back Snapshot
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if again, err := json.Marshal(back); err != nil || string(again) != string(b) {
		t.Fatalf("read back and written again: %s, %v", again, err)
	}
}
