package cli

import (
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hostemu/hostemu/testkit"
)

// The bundle of a testkit.Connect test (a namespace of a running hostemu), replayed by
// the built binary with the command the testkit prints, run by a shell as printed:
// its deployment's url opens as written, for a client that trusts only the CA the
// replay keeps — on an https edge (HTTPS takes the URLs' port) and on an http one (the
// hosting listener takes it; the same host opens over HTTPS on HTTPS's port too).
func TestReplayBinaryOpensTestkitBundles(t *testing.T) {
	goTool := goToBuild(t)
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	t.Parallel()
	binDir := t.TempDir()
	build := exec.Command(goTool, "build", "-o", filepath.Join(binDir, "hostemu"), "../../cmd/hostemu")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	bin := filepath.Join(binDir, "hostemu")
	for _, tc := range []struct {
		name       string
		originArgs []string
		replayEnv  []string // where the other listener goes: a free port, never 4700 or 4743
	}{
		{"https", nil, []string{"HOSTEMU_ADDR=127.0.0.1:0"}},
		{"http", []string{"--tls-addr", "off"}, []string{"HOSTEMU_TLS_ADDR=127.0.0.1:0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			origin := startBinary(t, bin, tc.originArgs...)
			file := filepath.Join(t.TempDir(), "my artifacts", "TestShop.hostemu.tgz")
			os.MkdirAll(filepath.Dir(file), 0o755)
			var depURL string
			t.Run("the test", func(t *testing.T) {
				// the clock at the wall time: a client checking certificates against the
				// real time accepts them
				emu := testkit.Connect(t, origin.url, testkit.WithClockStart(time.Now().UTC().Truncate(time.Second)))
				depURL = deployPage(t, origin.url, emu.DeployToken(), "/_emulator/namespaces/"+emu.Namespace())
				emu.Bundle(file)
			})
			origin.terminate(t) // gone, as the CI job that ran it
			u, _ := url.Parse(depURL)
			if u.Scheme != tc.name || !strings.Contains(u.Hostname(), ".") || u.Port() == "" {
				t.Fatalf("the deployment's url: %s", depURL)
			}

			caDir := t.TempDir()
			cmd := exec.Command(sh, "-c", `hostemu replay "`+file+`"`) // as the testkits print it
			cmd.Env = append(cleanEnv(), append(tc.replayEnv, "PATH="+binDir+string(os.PathListSeparator)+os.Getenv("PATH"), "HOSTEMU_CA_DIR="+caDir)...)
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // the shell and hostemu, stopped together
			p := &proc{cmd: cmd, stdout: newLockedBuffer(), stderr: newLockedBuffer(), done: make(chan struct{})}
			cmd.Stdout, cmd.Stderr = p.stdout, p.stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			go func() { p.err = cmd.Wait(); close(p.done) }()
			defer func() {
				syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
				<-p.done
			}()
			p.url = p.stdout.waitFor(t, listeningLine, p.done)[1]
			if want := strings.ToUpper(tc.name) + " on 127.0.0.1:" + u.Port() + ", the port its deployment URLs carry"; !strings.Contains(p.stdout.String(), want) {
				t.Errorf("stdout does not say %q:\n%s", want, p.stdout)
			}
			ca, err := os.ReadFile(filepath.Join(caDir, "ca.pem")) // the CA `hostemu ca install` trusts
			if err != nil {
				t.Fatal(err)
			}
			if code, body := openAt(t, depURL, u.Port(), ca); code != 200 || body != page {
				t.Errorf("GET %s: %d %.300s", depURL, code, body)
			}
			if tc.name == "http" { // the same host over HTTPS, on HTTPS's port
				tlsURL := p.stdout.waitFor(t, httpsURL, p.done)[1]
				https := *u
				https.Scheme, https.Host = "https", u.Hostname()+":"+portOf(t, tlsURL)
				if code, body := openAt(t, https.String(), portOf(t, tlsURL), ca); code != 200 || body != page {
					t.Errorf("GET %s: %d %.300s", https.String(), code, body)
				}
			}
		})
	}
}
