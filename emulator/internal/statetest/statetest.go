// Package statetest builds state documents for tests and benchmarks that need a big
// world without generating it through the API.
package statetest

import (
	"bytes"
	"fmt"
)

// BigJSON is a state document (as PUT /_emulator/state takes it) of n queued
// deployments of 50 files each, about 4.5 KiB of JSON a deployment, with one read token
// t-read and one project prj_big.
func BigJSON(n int) []byte {
	var b bytes.Buffer
	b.Grow(n * 4700)
	b.WriteString(`{"tokens":[{"token":"t-read","scope":"read"}],"projects":[{"id":"prj_big","name":"big","created_at":"2026-01-01T00:00:00Z"}],"deployments":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":"dpl_%08d","project_id":"prj_big","url":"https://big-%08d.hostemu.localhost","target":"preview","status":"queued","created_at":"2026-01-01T00:00:00Z","timings":{"queued_at":"2026-01-01T00:00:00Z"},"files":{`, i, i)
		for f := range 50 {
			if f > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `"assets/file-%02d.js":"%064d"`, f, i*50+f)
		}
		b.WriteString(`}}`)
	}
	b.WriteString(`]}`)
	return b.Bytes()
}
