package openapi

import (
	"encoding/json"
	"strings"
	"testing"
)

// The JSON of each description, converted on first use, is JSON with the server asked
// for in place of the default address (a malformed embedded file fails here, not in a
// user's request).
func TestJSON(t *testing.T) {
	for _, d := range []*Doc{Hosting(), Control()} {
		b := d.JSON("http://h.test:1")
		var v map[string]any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatalf("%s: %v", d.Name(), err)
		}
		if !strings.Contains(string(b), `"url":"http://h.test:1`) {
			t.Fatalf("%s: the server is not replaced", d.Name())
		}
	}
}
