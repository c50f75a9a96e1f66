package emulator_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/hostemu/hostemu/emulator"
)

// hostileExtras is a bundle's lifecycles.json of n anchors of deployments the state does
// not hold, and events.ndjson of events events of pad bytes of data each: what issue 32
// put into namespaces to get around --max-world-bytes.
func hostileExtras(n, events, pad int) map[string]string {
	var lc strings.Builder
	lc.WriteString("{")
	for i := range n {
		if i > 0 {
			lc.WriteString(",")
		}
		fmt.Fprintf(&lc, `"dpl:%020d":"2026-11-21T12:00:00.000Z"`, i)
	}
	lc.WriteString("}")
	var ev strings.Builder
	data := strings.Repeat("x", pad)
	for i := range events {
		fmt.Fprintf(&ev, `{"seq":%d,"type":"deployment","data":{"pad":%q}}`+"\n", i+1, data)
	}
	return map[string]string{"lifecycles.json": lc.String(), "events.ndjson": ev.String()}
}

// Everything a bundle brings counts against --max-world-bytes (issue 32, item 1): 12
// namespaces given one 1.4 MB bundle each (560,000 lifecycle anchors, 8 MiB of events)
// took the binary from 26 to 1,503 MB with --max-world-bytes 64MiB, every one 200. Now
// the anchors of resources the state does not hold are dropped, the events are
// charged, the heap a bundle takes is within twice what is counted, the namespaces are
// refused with 507 once the budget is spent, and a bundle that alone is over the
// budget is 413 naming it, and changes nothing.
//
// Not parallel: it measures the heap.
func TestBundleChargedToWorldBytes(t *testing.T) {
	e := newEnv(t, func(o *emulator.Options) { o.MaxWorldBytes = 20 << 20 })
	src := e.newNamespace(t, nil)
	mustStatus(t, e.post("/v1/deployments", src.Tokens.Deploy, map[string]any{"project_id": "prj_shop", "files": map[string]string{}}), 201)
	good := e.get(src.control("/bundle"), "")
	mustStatus(t, good, 200)
	m := members(t, good.Body)
	extras := hostileExtras(50_000, 1000, 8000)
	var man map[string]any
	json.Unmarshal(m["manifest.json"], &man)
	man["events"] = 1000 // the manifest's counts are checked against the members
	text, _ := json.Marshal(man)
	extras["manifest.json"] = string(text)
	hostile := rebuild(t, m, extras)
	t.Logf("the bundle: %d bytes", len(hostile))

	var accepted, refused int
	for i := range 4 {
		n := e.newNamespace(t, nil)
		before, weighed := heapInUse(), emulator.NamespaceWeight(e.emu)
		r := e.putBundle(n.control("/bundle"), hostile)
		if r.Status == 507 {
			if r.Code() != "storage_full" || !strings.Contains(r.Err(t).Message, "--max-world-bytes") {
				t.Fatalf("namespace %d: %d %s", i, r.Status, r.Body)
			}
			refused++
			break
		}
		mustStatus(t, r, 200)
		accepted++
		grew, counted := heapInUse()-before, emulator.NamespaceWeight(e.emu)-weighed
		t.Logf("namespace %d: heap grew %d bytes, counted %d", i, grew, counted)
		if counted < 8_000_000 {
			t.Errorf("namespace %d: a bundle of 8 MB of events counted %d bytes", i, counted)
		}
		if grew > 2*counted {
			t.Errorf("namespace %d: the heap grew %d bytes, twice more than the %d counted", i, grew, counted)
		}
		// the anchors kept are those of the state's lifecycles in flight, no more
		var kept map[string]string
		json.Unmarshal(members(t, e.get(n.control("/bundle"), "").Body)["lifecycles.json"], &kept)
		if _, bogus := kept[fmt.Sprintf("dpl:%020d", 0)]; bogus || len(kept) > 3 {
			t.Errorf("namespace %d keeps %d lifecycle anchors, want those of the deployment and domains in flight", i, len(kept))
		}
	}
	if accepted == 0 || refused != 1 || emulator.NamespaceWeight(e.emu) > 20<<20 {
		t.Errorf("%d accepted, %d refused, %d bytes counted of 20 MiB", accepted, refused, emulator.NamespaceWeight(e.emu))
	}

	// a bundle that is alone over the budget can never fit: 413 naming the bound
	small := newEnv(t, func(o *emulator.Options) { o.MaxWorldBytes = 4 << 20 })
	n := small.newNamespace(t, nil)
	before := small.get(n.control("/state"), "").Body
	r := small.putBundle(n.control("/bundle"), hostile)
	if r.Status != 413 || r.Code() != "payload_too_large" || !strings.Contains(r.Err(t).Message, "--max-world-bytes") {
		t.Fatalf("a bundle over the whole budget: %d %.300s", r.Status, r.Body)
	}
	if after := small.get(n.control("/state"), "").Body; string(after) != string(before) {
		t.Error("a refused bundle changed the namespace")
	}
	// the default world is held to the same bound
	if r := small.putBundle("/_emulator/bundle", hostile); r.Status != 413 {
		t.Errorf("the default world: %d %.300s", r.Status, r.Body)
	}
}
