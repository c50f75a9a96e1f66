package testkit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/hostemu/hostemu/emulator"
)

// Deployment is the deployment id as GET /v1/deployments/{id} answers it (with the
// world's read token); a deployment that does not exist fails the test.
func (e *Emulator) Deployment(id string) emulator.Deployment {
	e.tb.Helper()
	var d emulator.Deployment
	e.hosting("/v1/deployments/"+url.PathEscape(id), &d)
	return d
}

// Domain is the custom domain hostname as the API answers it, found among the
// projects' domains; one that no project has fails the test.
func (e *Emulator) Domain(hostname string) emulator.Domain {
	e.tb.Helper()
	for cursor := ""; ; {
		var projects emulator.ProjectList
		e.hosting(page("/v1/projects", cursor), &projects)
		for _, p := range projects.Projects {
			if d, ok := e.projectDomain(p.ID, hostname); ok {
				return d
			}
		}
		if projects.NextCursor == nil {
			break
		}
		cursor = *projects.NextCursor
	}
	e.tb.Fatalf("testkit: no project has the domain %s", hostname)
	return emulator.Domain{}
}

// projectDomain finds the domain hostname among project's, page by page.
func (e *Emulator) projectDomain(project, hostname string) (emulator.Domain, bool) {
	e.tb.Helper()
	for cursor := ""; ; {
		var ds emulator.DomainList
		e.hosting(page("/v1/projects/"+url.PathEscape(project)+"/domains", cursor), &ds)
		for _, d := range ds.Domains {
			if d.Hostname == hostname {
				return d, true
			}
		}
		if ds.NextCursor == nil {
			return emulator.Domain{}, false
		}
		cursor = *ds.NextCursor
	}
}

// page is the path of a list's largest page after cursor ("": the first).
func page(path, cursor string) string {
	path += "?limit=100"
	if cursor != "" {
		path += "&cursor=" + url.QueryEscape(cursor)
	}
	return path
}

// hosting GETs a hosting route with the world's read token into out.
func (e *Emulator) hosting(path string, out any) {
	e.tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.r.url+path, nil)
	if err != nil {
		e.tb.Fatalf("testkit: GET %s: %v", path, err)
	}
	req.Header.Set("Authorization", "Bearer "+e.r.tokens.Read)
	resp, err := e.r.control.Do(req)
	if err != nil {
		e.tb.Fatalf("testkit: GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = decodeError(resp.StatusCode, raw)
	} else if err == nil {
		err = json.Unmarshal(raw, out)
	}
	if err != nil {
		e.tb.Fatalf("testkit: GET %s: %v", path, err)
	}
}

// SetDeploymentError forces deployment id to error now, with the error code and
// message it reports.
func (e *Emulator) SetDeploymentError(id, code, message string) {
	e.tb.Helper()
	e.call(http.MethodPost, "/_emulator/deployments/"+url.PathEscape(id)+"/status",
		map[string]any{"status": "error", "error": map[string]string{"code": code, "message": message}}, nil)
}

// SetDomainError forces the domain hostname to error now, with the error code and
// message it reports.
func (e *Emulator) SetDomainError(hostname, code, message string) {
	e.tb.Helper()
	e.call(http.MethodPost, "/_emulator/domains/"+url.PathEscape(hostname)+"/status",
		map[string]any{"status": "error", "error": map[string]string{"code": code, "message": message}}, nil)
}

// TryWaitForDeployment is WaitForDeploymentWithin that reports whether the status held
// within timeout instead of failing the test, for "this build never succeeds". On a
// manual clock the clock has moved by timeout when it reports false.
func (e *Emulator) TryWaitForDeployment(id, status string, timeout time.Duration) bool {
	e.tb.Helper()
	return e.tryAwait(map[string]any{"deployment": id, "status": status}, timeout)
}

// TryWaitForDomain is WaitForDomainWithin that reports whether the status held within
// timeout instead of failing the test, for "this domain never verifies".
func (e *Emulator) TryWaitForDomain(hostname, status string, timeout time.Duration) bool {
	e.tb.Helper()
	return e.tryAwait(map[string]any{"domain": hostname, "status": status}, timeout)
}

func (e *Emulator) tryAwait(body map[string]any, timeout time.Duration) bool {
	e.tb.Helper()
	body["timeout"] = timeout.String()
	ctx, cancel := context.WithTimeout(context.Background(), timeout+awaitGrace)
	defer cancel()
	err := e.r.do(ctx, http.MethodPost, "/_emulator/await", body, nil)
	var ae *APIError
	switch {
	case err == nil:
		return true
	case errors.As(err, &ae) && ae.Code == "await_timeout":
		return false
	}
	e.tb.Fatalf("testkit: %v", fmt.Errorf("POST /_emulator/await: %w", err))
	return false
}
