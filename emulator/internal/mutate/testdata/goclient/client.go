// Package goclient is the sample client of mutate's end-to-end test and of
// docs/mutate.md: one function swallows its errors, the other returns them.
package goclient

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
)

// ProjectCount is how many projects the token sees. It swallows every error: on a 503,
// a 401 or a reset it says 0, and a test that only calls it never knows.
func ProjectCount(base, token string) int {
	req, _ := http.NewRequest(http.MethodGet, base+"/v1/projects", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	var page struct {
		Data []json.RawMessage `json:"data"`
	}
	if json.NewDecoder(resp.Body).Decode(&page) != nil {
		return 0
	}
	return len(page.Data)
}

// CreateDeployment creates a deployment of project and returns its id, or the error.
func CreateDeployment(base, token, project string) (string, error) {
	body, _ := json.Marshal(map[string]any{"project_id": project, "files": map[string]string{"index.html": "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"}})
	req, _ := http.NewRequest(http.MethodPost, base+"/v1/deployments", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		return "", fmt.Errorf("create deployment: %s", resp.Status)
	}
	var d struct {
		ID string `json:"id"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&d); err != nil {
		return "", err
	}
	return d.ID, nil
}
