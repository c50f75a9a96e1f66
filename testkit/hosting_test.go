package testkit_test

import (
	"errors"
	"net/url"
	"testing"

	"github.com/hostemu/hostemu/testkit"
)

func TestHostingClient(t *testing.T) {
	t.Parallel()
	emu := testkit.Start(t, testkit.WithoutTLS())
	h := emu.Hosting()

	digest := h.UploadFile([]byte("<h1>hi</h1>"))
	d := h.CreateDeployment(testkit.NewDeployment{ProjectID: "prj_demo", Files: map[string]string{"index.html": digest}})
	if d.Status != "queued" || d.ProjectID != "prj_demo" || d.Target != "preview" {
		t.Fatalf("created: %+v", d)
	}
	// promoting before it is ready: the error comes back to a Try
	err := h.Try(func(h *testkit.Hosting) { h.Promote(d.ID) })
	var ae *testkit.APIError
	if !errors.As(err, &ae) || ae.Status != 409 || ae.Code != "deployment_not_ready" {
		t.Fatalf("promote while queued: %v", err)
	}
	emu.WaitForDeployment(d.ID, "ready")
	if got := h.Deployment(d.ID); got.Status != "ready" || got.Files["index.html"] != digest {
		t.Fatalf("read back: %+v", got)
	}
	if p := h.Promote(d.ID); p.ProductionDeploymentID != d.ID {
		t.Fatalf("promoted: %+v", p)
	}
	if logs := h.Logs(d.ID); len(logs.Logs) == 0 {
		t.Fatal("no build logs")
	}
	list := h.Deployments(url.Values{"project_id": {"prj_demo"}, "limit": {"1"}})
	if len(list.Deployments) != 1 || list.Deployments[0].ID != d.ID || list.NextCursor == nil {
		t.Fatalf("list: %+v", list)
	}
	if len(h.Projects().Projects) == 0 {
		t.Fatal("no projects")
	}
	dom := h.AddDomain("prj_demo", "app.example.test")
	if dom.Status != "pending" {
		t.Fatalf("domain: %+v", dom)
	}
	found := false
	for _, x := range h.Domains("prj_demo").Domains {
		found = found || x.Hostname == "app.example.test"
	}
	if !found {
		t.Fatal("the added domain is not listed")
	}
	h.DeleteDomain("prj_demo", "app.example.test")
	// a read token may not create: As changes the token, Try gets the 403 back
	err = h.As(emu.ReadToken()).Try(func(h *testkit.Hosting) {
		h.CreateDeployment(testkit.NewDeployment{ProjectID: "prj_demo"})
		if d := h.CreateDeployment(testkit.NewDeployment{ProjectID: "prj_demo"}); d.ID != "" {
			t.Error("a call after the Try's first error was made")
		}
	})
	if !errors.As(err, &ae) || ae.Status != 403 || ae.Code != "insufficient_scope" {
		t.Fatalf("read token creating: %v", err)
	}
}
