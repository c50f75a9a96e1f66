package testkit_test

import (
	"bufio"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hostemu/hostemu/testkit"
)

// Connect with a scenario whose file is broken now fails the test with the file's
// problems, rather than test the last version that parsed without a word (issue 33
// item 4).
func TestConnectRefusesABrokenScenarioFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "flaky.yaml")
	write := func(text string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("name: flaky\ndeployments:\n  lifecycle: [{status: queued}, {status: building, after: 1s}, {status: ready, after: 1s}]\n")
	srv := testkit.Start(t, testkit.WithScenariosDir(dir), testkit.WithoutTLS())

	// the reload is seen as a scenario event: subscribe, then break the file
	res, err := http.Get(srv.URL() + "/_emulator/events?types=scenario")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	events := bufio.NewReader(res.Body)
	if line, err := events.ReadString('\n'); err != nil || !strings.HasPrefix(line, ": hostemu events") {
		t.Fatalf("events: %q %v", line, err)
	}
	write("name: flaky\ndeployments:\n  lifecycle: [{status: queued}, {status: shipped}]\n")
	for {
		line, err := events.ReadString('\n')
		if err != nil {
			t.Fatalf("no reload seen: %v", err)
		}
		if strings.Contains(line, `"reloaded"`) {
			break
		}
	}

	msg := fatalOf(t, func(tb testing.TB) { testkit.Connect(tb, srv.URL(), testkit.WithScenario("flaky")) })
	if !strings.Contains(msg, path+":3:") || !strings.Contains(msg, "shipped") {
		t.Errorf("Connect with a broken scenario file: %q, want the file's problem at %s:3:…", msg, path)
	}
}
