package httpapi

import (
	"slices"
	"strconv"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/state"
)

// GET /v1/deployments/{id} and the deployment lists are the hot paths. Their bodies are
// written by hand here, byte for byte what encoding/json would write for the object
// (jsonenc_test.go checks that), without reflection, without the merged env map and
// without the link strings.

// appendTime appends t as a JSON string, as state.Timestamp writes it.
func appendTime(b []byte, t time.Time) []byte {
	b = append(b, '"')
	b = state.AppendTimestamp(b, t)
	return append(b, '"')
}

// appendMergedMap appends base with over merged on top, keys sorted, as a JSON object.
func appendMergedMap(b []byte, base, over map[string]string) []byte {
	var stack [32]string
	keys := stack[:0]
	for k := range base {
		if _, ok := over[k]; !ok {
			keys = append(keys, k)
		}
	}
	for k := range over {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		v, ok := over[k]
		if !ok {
			v = base[k]
		}
		b = state.AppendJSONString(b, k)
		b = append(b, ':')
		b = state.AppendJSONString(b, v)
	}
	return append(b, '}')
}

// appendCreated appends the create answer of a deployment (view.DeploymentCreated).
func appendCreated(b []byte, d *state.Deployment) []byte {
	return append(appendDeploymentHead(b, d), '}')
}

// appendDeploymentHead appends a deployment object's opening and the six fields the
// create answer and the full object share, in their order.
func appendDeploymentHead(b []byte, d *state.Deployment) []byte {
	b = append(b, `{"id":`...)
	b = state.AppendJSONString(b, d.ID)
	b = append(b, `,"url":`...)
	b = state.AppendJSONString(b, d.URL)
	b = append(b, `,"status":`...)
	b = state.AppendJSONString(b, d.Status)
	b = append(b, `,"created_at":`...)
	b = appendTime(b, d.CreatedAt)
	b = append(b, `,"project_id":`...)
	b = state.AppendJSONString(b, d.ProjectID)
	b = append(b, `,"target":`...)
	b = state.AppendJSONString(b, d.Target)
	return b
}

// appendDeployment appends the full deployment object: the fields docs/api.md gives
// a deployment, env merged over the project's, files as sent, build_logs_url under base.
func appendDeployment(b []byte, base string, d *state.Deployment, projectEnv map[string]string, production bool) []byte {
	b = appendDeploymentHead(b, d)
	b = append(b, `,"env":`...)
	b = appendMergedMap(b, projectEnv, d.Env)
	b = append(b, `,"files":`...)
	b = appendMergedMap(b, nil, d.Files)
	b = append(b, `,"build_logs_url":`...)
	b = append(b, '"')
	b = state.AppendJSONEscaped(b, base)
	b = append(b, "/v1/deployments/"...)
	b = state.AppendJSONEscaped(b, d.ID)
	b = append(b, `/logs"`...)
	b = append(b, `,"timings":`...)
	b = state.AppendTimings(b, &d.Timings)
	b = append(b, `,"error":`...)
	b = state.AppendErrorInfo(b, d.Error)
	b = append(b, `,"production":`...)
	b = strconv.AppendBool(b, production)
	return append(b, '}')
}
