package testkit

import "testing"

// An await_timeout's near misses reach the APIError, typed.
func TestAPIErrorCarriesNearMisses(t *testing.T) {
	t.Parallel()
	raw := `{"error":{"code":"await_timeout","message":"m","doc_url":"u","near_misses":[{"seq":3,"method":"POST","path":"/v1/deployments","differs":{"path":"/v1/deployments","query":{"page":null},"body":{"target":"preview"}}}]}}`
	ae, ok := decodeError(408, []byte(raw)).(*APIError)
	if !ok || ae.Code != "await_timeout" || len(ae.NearMisses) != 1 {
		t.Fatalf("%+v", ae)
	}
	d := ae.NearMisses[0].Differs
	if ae.NearMisses[0].Seq != 3 || d.Path == nil || *d.Path != "/v1/deployments" || d.Query["page"] != nil || string(d.Body["target"]) != `"preview"` {
		t.Errorf("near miss %+v", ae.NearMisses[0])
	}
}
