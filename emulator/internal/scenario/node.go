package scenario

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/hostemu/hostemu/emulator/internal/clock"
	"github.com/hostemu/hostemu/emulator/internal/yamlcheck"
)

// decoder reads a scenario's node tree with the shared YAML checker, which records
// every problem with its line; the readers here are the scenario's own kinds of value.
type decoder struct {
	*yamlcheck.Checker
}

// maxItems bounds the lists of a scenario (rules, faults); rules are checked pairwise.
const maxItems = 1000

// maxDuration bounds every duration of a scenario, so that sums of lifecycle steps and
// clock arithmetic never overflow.
const (
	maxDays     = 3650
	maxDuration = maxDays * 24 * time.Hour
)

// label names where a problem is, for messages at the top level too.
func label(where string) string {
	if where == "" {
		return "the scenario"
	}
	return where
}

// integer reads a whole number from lo to hi.
func (d *decoder) integer(n *yaml.Node, where string, lo, hi int64) (int, bool) {
	i, ok := d.Integer(n, where, lo, hi)
	return int(i), ok
}

// anyInt is the range of a count that has no bound of its own: it fits an int32, plenty
// for every count here.
const anyInt = math.MaxInt32

// duration reads a duration such as 5s, 1m30s or 90d.
func (d *decoder) duration(n *yaml.Node, where string) (time.Duration, bool) {
	s, ok := d.Scalar(n, where, "a duration such as 5s or 90d")
	if !ok {
		return 0, false
	}
	v, err := parseDuration(s.Value)
	if err != nil {
		d.Addf(s, "%s: %v", where, err)
		return 0, false
	}
	return v, true
}

// durationRange words the range of every duration of a scenario.
var durationRange = fmt.Sprintf("want from 0s to %dd", maxDays)

// parseDuration is clock.ParseDuration bounded to maxDuration; it also refuses day
// counts whose nanoseconds would overflow before clock.ParseDuration could notice.
func parseDuration(s string) (time.Duration, error) {
	t := strings.TrimSpace(s)
	if i := strings.IndexByte(t, 'd'); i > 0 {
		if days, err := strconv.ParseUint(t[:i], 10, 64); err == nil && days > maxDays {
			return 0, fmt.Errorf("duration %q is out of range: %s", s, durationRange)
		}
	}
	v, err := clock.ParseDuration(s)
	if err != nil {
		if strings.HasPrefix(t, "-") {
			return 0, fmt.Errorf("negative duration %q is out of range: %s", s, durationRange)
		}
		return 0, fmt.Errorf("invalid duration %q: want e.g. 500ms, 5s, 2m or 90d", s)
	}
	if v < 0 || v > maxDuration {
		return 0, fmt.Errorf("duration %q is out of range: %s", s, durationRange)
	}
	return v, nil
}

// seq reads a list, at most maxItems long.
func (d *decoder) seq(n *yaml.Node, where string) ([]*yaml.Node, bool) {
	items, ok := d.Seq(n, where)
	if ok && len(items) > maxItems {
		d.Addf(yamlcheck.Follow(n), "%s: %d items; at most %d", where, len(items), maxItems)
		return nil, false
	}
	return items, ok
}

// fmtDuration writes whole days as "30d" and everything else as Go does.
func fmtDuration(v time.Duration) string {
	const day = 24 * time.Hour
	if v > 0 && v%day == 0 {
		return fmt.Sprintf("%dd", v/day)
	}
	return v.String()
}
