package gosuite

import (
	"net/http"
	"testing"

	"github.com/hostemu/hostemu/testkit"
)

func clients(t *testing.T) (*testkit.Emulator, Client, Client, Client) {
	emu := testkit.Start(t)
	return emu, Client{emu.URL(), emu.ReadToken()}, Client{emu.URL(), emu.DeployToken()}, Client{emu.URL(), emu.AdminToken()}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

type deployment struct {
	ID     string `json:"id"`
	Status string `json:"status"`
}

func create(t *testing.T, c Client) deployment {
	t.Helper()
	var d deployment
	must(t, c.Do(http.MethodPost, "/v1/deployments", map[string]any{"project_id": "prj_demo",
		"files": map[string]string{"index.html": "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"}}, &d))
	return d
}

func TestListProjects(t *testing.T) {
	_, read, _, _ := clients(t)
	must(t, read.Do(http.MethodGet, "/v1/projects", nil, nil))
}

// careless: looks at nothing
func TestDashboardCounts(t *testing.T) {
	_, read, _, _ := clients(t)
	_ = read.Quietly(http.MethodGet, "/v1/projects")
	_ = read.Quietly(http.MethodGet, "/v1/deployments?project_id=prj_demo")
}

func TestCreateDeployment(t *testing.T) {
	_, _, deploy, _ := clients(t)
	if d := create(t, deploy); d.Status != "queued" {
		t.Errorf("status %q", d.Status)
	}
}

func TestGetDeployment(t *testing.T) {
	_, read, _, _ := clients(t)
	var d deployment
	must(t, read.Do(http.MethodGet, "/v1/deployments/dpl_demolaunch", nil, &d))
}

func TestPromote(t *testing.T) {
	_, _, deploy, _ := clients(t)
	must(t, deploy.Do(http.MethodPost, "/v1/deployments/dpl_demopreview/promote", map[string]any{}, nil))
}

func TestUpload(t *testing.T) {
	_, _, deploy, _ := clients(t)
	_, err := deploy.Upload([]byte("<h1>hello</h1>"))
	must(t, err)
}

func TestListDomains(t *testing.T) {
	_, read, _, _ := clients(t)
	must(t, read.Do(http.MethodGet, "/v1/projects/prj_demo/domains", nil, nil))
}

func TestAddDomain(t *testing.T) {
	_, _, _, admin := clients(t)
	must(t, admin.Do(http.MethodPost, "/v1/projects/prj_demo/domains", map[string]any{"hostname": "shop.example.com"}, nil))
}

func TestDeleteDomain(t *testing.T) {
	_, _, _, admin := clients(t)
	must(t, admin.Do(http.MethodDelete, "/v1/projects/prj_demo/domains/www.demo-shop.test", nil, nil))
}

func TestEncryptDecrypt(t *testing.T) {
	emu, _, _, _ := clients(t)
	c := Client{emu.CipherURL(), emu.CipherKey()}
	var env struct {
		Envelope string `json:"envelope"`
	}
	must(t, c.Do(http.MethodPost, "/v1/encrypt", map[string]any{"payload": "hello"}, &env))
	var out struct {
		Payload string `json:"payload"`
	}
	must(t, c.Do(http.MethodPost, "/v1/decrypt", map[string]any{"envelope": env.Envelope}, &out))
	if out.Payload != "hello" {
		t.Errorf("payload %q", out.Payload)
	}
}

// careless: the logs' error is swallowed
func TestLogs(t *testing.T) {
	_, read, _, _ := clients(t)
	_ = read.Quietly(http.MethodGet, "/v1/deployments/dpl_demolaunch/logs")
}

func TestCreateThenGet(t *testing.T) {
	_, read, deploy, _ := clients(t)
	d := create(t, deploy)
	var got deployment
	must(t, read.Do(http.MethodGet, "/v1/deployments/"+d.ID, nil, &got))
	if got.ID != d.ID {
		t.Errorf("got %q", got.ID)
	}
}
