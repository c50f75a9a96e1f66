package emulator_test

import (
	"strings"
	"testing"
)

// A valid created_after / created_before far outside the years the world holds bounds
// all items or none: an empty or a full page, never a 400. Bad syntax stays a 400.
func TestListFiltersFarAway(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	all := "dpl_broken,dpl_second,dpl_first"
	tests := []struct{ query, want string }{
		{"created_after=9999-12-31T23:59:59.999Z", ""},
		{"created_after=2200-01-01T00:00:00Z", ""},
		{"created_after=2199-12-31T23:59:59Z", ""},
		{"created_after=0001-01-01T00:00:00Z", all},
		{"created_after=0000-01-01T00:00:00Z", all},
		{"created_after=1969-12-31T23:59:59Z", all},
		{"created_after=0", all},
		{"created_after=-62135596800000", all},
		{"created_after=9223372036854775807", ""},
		{"created_after=99999999999999999999999", ""},
		{"created_after=-99999999999999999999999", all},
		{"created_before=9999-12-31T23:59:59Z", all},
		{"created_before=99999999999999999999999", all},
		{"created_before=253402300799999", all},
		{"created_before=0001-01-01T00:00:00Z", ""},
		{"created_before=0", ""},
		{"created_before=-9223372036854775808", ""},
		{"created_after=0&created_before=9999-01-01T00:00:00Z", all},
		{"created_after=9999-01-01T00:00:00Z&created_before=0", ""},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			r := e.get("/v1/deployments?project_id=prj_shop&"+tt.query, "t-read")
			mustStatus(t, r, 200)
			var ids []string
			for _, d := range r.JSON(t)["deployments"].([]any) {
				ids = append(ids, d.(map[string]any)["id"].(string))
			}
			if got := strings.Join(ids, ","); got != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}

	// a walk under such a filter keeps working
	first := e.get("/v1/deployments?project_id=prj_shop&limit=2&created_before=9999-01-01T00:00:00Z", "t-read")
	mustStatus(t, first, 200)
	cur, _ := first.JSON(t)["next_cursor"].(string)
	if cur == "" {
		t.Fatal("no next_cursor on a full first page")
	}
	mustStatus(t, e.get("/v1/deployments?project_id=prj_shop&limit=2&created_before=9999-01-01T00:00:00Z&cursor="+cur, "t-read"), 200)

	for _, q := range []string{"created_after=9999-99-99T00:00:00Z", "created_after=1e3", "created_after=12.5", "created_before=10000-01-01T00:00:00Z",
		"created_before=2026-11-21", "created_after=tomorrow", "created_after=0x10"} {
		if r := e.get("/v1/deployments?"+q, "t-read"); r.Status != 400 || r.Code() != "invalid_request" || !strings.Contains(string(r.Body), q[:strings.IndexByte(q, '=')]) {
			t.Errorf("%s: %d %s %s, want 400 invalid_request naming the parameter", q, r.Status, r.Code(), r.Body)
		}
	}
}
