package emulator_test

import (
	"encoding/json"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// stampFormat is the time layout of everything hostemu writes.
const stampFormat = "2006-01-02T15:04:05.000Z07:00"

// threeDigits is the one shape of every time hostemu writes.
var threeDigits = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`)

// timeFields collects every time in a JSON document by its path ("domains.tls.expires_at"):
// the values of keys named now, time or ending in _at.
func timeFields(t *testing.T, body []byte) map[string][]any {
	t.Helper()
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("not JSON: %v: %.200s", err, body)
	}
	out := map[string][]any{}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				p := strings.TrimPrefix(path+"."+k, ".")
				if k == "now" || k == "time" || strings.HasSuffix(k, "_at") {
					out[p] = append(out[p], x)
					continue
				}
				walk(p, x)
			}
		case []any:
			for _, x := range v {
				walk(path, x)
			}
		}
	}
	walk("", v)
	return out
}

// Every time in every JSON answer is RFC 3339 UTC with exactly three fractional digits:
// whole seconds (the fixtures, a manual clock's start), round fractions (a clock advanced
// by 1.5 s) and sub-millisecond instants alike.
func TestTimestampsHaveThreeDigits(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	check := func(t *testing.T, r resp, want ...string) {
		t.Helper()
		if r.Status >= 300 {
			t.Fatalf("status %d: %.300s", r.Status, r.Body)
		}
		fields := timeFields(t, r.Body)
		for _, w := range want {
			if len(fields[w]) == 0 {
				var seen []string
				for k := range fields {
					seen = append(seen, k)
				}
				sort.Strings(seen)
				t.Errorf("no time at %s (times at %v)", w, seen)
			}
		}
		for path, vs := range fields {
			for _, v := range vs {
				if v == nil {
					continue
				}
				if s, ok := v.(string); !ok || !threeDigits.MatchString(s) {
					t.Errorf("%s = %v, want RFC 3339 UTC with three fractional digits", path, v)
				}
			}
		}
	}

	mustStatus(t, e.post("/_emulator/clock/advance", "", map[string]string{"by": "1500ms"}), 200)
	mustStatus(t, e.post("/_emulator/clock/advance", "", map[string]string{"by": "1234567ns"}), 200)
	r := e.post("/v1/deployments", "t-deploy", map[string]any{"project_id": "prj_shop", "files": map[string]string{}})
	check(t, r, "created_at")
	if got := r.JSON(t)["created_at"]; got != "2026-11-21T12:00:01.501Z" {
		t.Errorf("created_at = %v, want the clock cut to the millisecond, 2026-11-21T12:00:01.501Z", got)
	}
	id := r.JSON(t)["id"].(string)
	await := e.post("/_emulator/await", "", map[string]string{"deployment": id, "status": "ready"})

	routes := []struct {
		name string
		r    func() resp
		want []string
	}{
		{"await", func() resp { return await }, []string{"now"}},
		{"deployment", func() resp { return e.get("/v1/deployments/"+id, "t-read") },
			[]string{"created_at", "timings.queued_at", "timings.building_at", "timings.ready_at", "timings.error_at"}},
		{"deployments", func() resp { return e.get("/v1/deployments", "t-read") }, []string{"deployments.created_at"}},
		{"logs", func() resp { return e.get("/v1/deployments/"+id+"/logs", "t-read") }, []string{"logs.created_at"}},
		{"forced status", func() resp {
			return e.post("/_emulator/deployments/"+id+"/status", "", map[string]string{"status": "error"})
		}, []string{"created_at", "timings.error_at"}},
		{"projects", func() resp { return e.get("/v1/projects", "t-read") }, []string{"projects.created_at"}},
		{"domain added", func() resp {
			return e.post("/v1/projects/prj_shop/domains", "t-admin", map[string]string{"hostname": "new.shop.test"})
		}, []string{"created_at", "tls.expires_at"}},
		{"domain forced", func() resp {
			return e.post("/_emulator/domains/new.shop.test/status", "", map[string]string{"status": "active"})
		}, []string{"created_at", "tls.expires_at"}},
		{"domains", func() resp { return e.get("/v1/projects/prj_shop/domains", "t-read") },
			[]string{"domains.created_at", "domains.tls.expires_at"}},
		{"journal", func() resp { return e.get("/_emulator/requests", "") }, []string{"requests.time"}},
		{"clock", func() resp { return e.get("/_emulator/clock", "") }, []string{"now"}},
		{"clock advance", func() resp { return e.post("/_emulator/clock/advance", "", map[string]string{"by": "1s"}) }, []string{"now"}},
		{"health", func() resp { return e.get("/_emulator/health", "") }, []string{"now"}},
		{"state", func() resp { return e.get("/_emulator/state", "") },
			[]string{"projects.created_at", "deployments.created_at", "deployments.timings.queued_at", "deployments.logs.created_at",
				"domains.created_at", "domains.tls.expires_at"}},
		{"reset", func() resp { return e.post("/_emulator/reset", "", nil) }, []string{"now"}},
	}
	for _, rt := range routes {
		t.Run(rt.name, func(t *testing.T) { check(t, rt.r(), rt.want...) })
	}
}

// A state export reads back: its three-digit times import, and export the same again.
func TestStateExportImportsBack(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.advance("1234567ns")
	mustStatus(t, e.post("/v1/deployments", "t-deploy", map[string]any{"project_id": "prj_shop", "files": map[string]string{}}), 201)
	e.advance("10s")
	first := e.get("/_emulator/state", "")
	mustStatus(t, first, 200)
	mustStatus(t, e.do(req{Method: "PUT", Path: "/_emulator/state", Body: first.Body}), 200)
	again := e.get("/_emulator/state", "")
	if string(again.Body) != string(first.Body) {
		t.Fatalf("export, import, export differ:\n%.400s\n%.400s", first.Body, again.Body)
	}
}
