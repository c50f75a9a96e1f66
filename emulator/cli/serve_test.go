package cli

import (
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestServeServesAndStopsCleanly(t *testing.T) {
	t.Parallel()
	s := startServe(t, nil, "--addr", "127.0.0.1:0")
	if !strings.HasPrefix(s.url, "http://127.0.0.1:") || strings.HasSuffix(s.url, ":0") {
		t.Fatalf("URL %q is not a bound loopback address", s.url)
	}
	resp, err := http.Get(s.url + "/_emulator/health")
	if err != nil {
		t.Fatalf("the server does not answer: %v", err)
	}
	resp.Body.Close()
	if code := s.stop(t); code != 0 {
		t.Fatalf("exit code %d after cancel, want 0; stderr:\n%s", code, s.stderr)
	}
	if n := len(listeningLine.FindAllString(s.stdout.String(), -1)); n != 1 {
		t.Errorf("stdout has %d listening lines, want 1:\n%s", n, s.stdout)
	}
	for _, want := range []string{"msg=listening", "startup=", "msg=stopping", "msg=stopped"} {
		if !strings.Contains(s.stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, s.stderr)
		}
	}
}

func TestServeJSONLogsAndCipherListener(t *testing.T) {
	t.Parallel()
	s := startServe(t, nil, "--addr", "127.0.0.1:0", "--cipher-addr", "127.0.0.1:0", "--log-format", "json", "--log-level", "debug")
	if code := s.stop(t); code != 0 {
		t.Fatalf("exit code %d, want 0", code)
	}
	var listening map[string]any
	for line := range strings.Lines(s.stderr.String()) {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("stderr line is not JSON: %q", line)
		}
		if rec["msg"] == "listening" {
			listening = rec
		}
	}
	if listening == nil {
		t.Fatalf("no listening record:\n%s", s.stderr)
	}
	if listening["url"] != s.url || listening["cipher_url"] == s.url || listening["cipher_url"] == nil {
		t.Errorf("listening record %v: want url %s and a cipher_url of its own", listening, s.url)
	}
}

func TestServeReadsVariables(t *testing.T) {
	t.Parallel()
	s := startServe(t, map[string]string{"HOSTEMU_ADDR": "127.0.0.1:0", "HOSTEMU_LOG_FORMAT": "json"})
	s.stop(t)
	if !strings.HasPrefix(s.stderr.String(), "{") {
		t.Errorf("HOSTEMU_LOG_FORMAT=json ignored:\n%s", s.stderr)
	}
}

func TestServeBadValuesExit2(t *testing.T) {
	t.Parallel()
	missing := filepath.Join(t.TempDir(), "nope")
	badFixtures := filepath.Join(t.TempDir(), "f.yaml")
	if err := os.WriteFile(badFixtures, []byte("tokens:\n  - {token: x, scope: root}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		vars map[string]string
		want string
	}{
		{"bad flag", []string{"--seed", "abc"}, nil, `--seed "abc"`},
		{"bad variable", nil, map[string]string{"HOSTEMU_JOURNAL_SIZE": "0"}, `HOSTEMU_JOURNAL_SIZE "0"`},
		{"bad clock", []string{"--clock=fast"}, nil, `--clock "fast"`},
		{"unknown flag", []string{"--port", "80"}, nil, "unknown flag -port"},
		{"stray argument", []string{"now"}, nil, `unexpected argument "now"`},
		{"missing scenarios dir", []string{"--scenarios", missing}, nil, `--scenarios "` + missing + `"`},
		{"missing fixtures from env", nil, map[string]string{"HOSTEMU_FIXTURES": missing}, `HOSTEMU_FIXTURES "` + missing + `"`},
		{"fixtures that do not load", []string{"--fixtures", badFixtures}, nil, badFixtures + ":2:"},
		{"unknown scenario", []string{"--scenario", "nope"}, nil, `scenario "nope" not found`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			code, stdout, stderr := runCmd(t, tc.vars, append([]string{"serve", "--addr", "127.0.0.1:0"}, tc.args...)...)
			if code != 2 || !strings.Contains(stderr, tc.want) || stdout != "" {
				t.Errorf("exit %d, stderr %q, stdout %q; want 2 and a message with %s", code, stderr, stdout, tc.want)
			}
		})
	}
	// serve is the default command when the first argument is a flag.
	if code, _, stderr := runCmd(t, nil, "--seed", "x"); code != 2 || !strings.Contains(stderr, `--seed "x"`) {
		t.Errorf("hostemu --seed x: exit %d, stderr %q", code, stderr)
	}
}

func TestServeCannotListen(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	code, stdout, stderr := runCmd(t, nil, "serve", "--addr", ln.Addr().String())
	if code != 1 || !strings.Contains(stderr, "cannot start") || stdout != "" {
		t.Errorf("exit %d, stderr %q, stdout %q; want 1 and cannot start", code, stderr, stdout)
	}
}

func TestServeUsage(t *testing.T) {
	t.Parallel()
	code, stdout, _ := runCmd(t, nil, "serve", "-h")
	if code != 0 {
		t.Errorf("serve -h: exit %d", code)
	}
	for _, s := range settings {
		if !strings.Contains(stdout, "--"+s.name+" ") || !strings.Contains(stdout, envName(s.name)) {
			t.Errorf("serve -h does not document --%s and %s", s.name, envName(s.name))
		}
	}
}

func TestMain(m *testing.M) {
	// The tests pass their own variables; the machine's must not leak in through
	// the binary test.
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "HOSTEMU_") {
			os.Unsetenv(k)
		}
	}
	os.Exit(m.Run())
}

func TestServeQuietAndJSONBanner(t *testing.T) {
	t.Parallel()
	q := startServe(t, nil, "--addr", "127.0.0.1:0", "--quiet")
	if code := q.stop(t); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if out := q.stdout.String(); out != "hostemu listening on "+q.url+"\n" {
		t.Errorf("--quiet stdout %q, want the first line only", out)
	}

	j := startServe(t, nil, "--addr", "127.0.0.1:0", "--log-format", "json")
	if code := j.stop(t); code != 0 {
		t.Fatalf("exit %d", code)
	}
	lines := strings.Split(strings.TrimSuffix(j.stdout.String(), "\n"), "\n")
	if len(lines) != 1 {
		t.Fatalf("--log-format json: stdout has %d lines, want one record:\n%s", len(lines), j.stdout)
	}
	var rec map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &rec); err != nil {
		t.Fatalf("the banner is not one JSON record: %v\n%s", err, lines[0])
	}
	tokens, _ := rec["tokens"].(map[string]any)
	if rec["url"] != j.url || rec["dashboard"] != j.url+"/dashboard" || tokens["read"] != "hostemu-read" || rec["level"] != "INFO" {
		t.Errorf("banner record: %v", rec)
	}
	// durations are Go's text, not nanoseconds
	if s := j.stderr.String(); !strings.Contains(s, `"grace":"5s"`) || strings.Contains(s, `"grace":5000000000`) {
		t.Errorf("stderr's stopping record does not write grace as \"5s\":\n%s", s)
	}

	jq := startServe(t, nil, "--addr", "127.0.0.1:0", "--log-format", "json", "--quiet")
	jq.stop(t)
	var small map[string]any
	if err := json.Unmarshal([]byte(strings.TrimSpace(jq.stdout.String())), &small); err != nil || len(small) != 4 || small["url"] != jq.url {
		t.Errorf("--quiet with json: %v %s", err, jq.stdout)
	}
}

// A setting that came from a variable is named as the variable in errors.
func TestServeErrorsNameTheVariableGiven(t *testing.T) {
	t.Parallel()
	bad := filepath.Join(t.TempDir(), "state.json")
	os.WriteFile(bad, []byte("not a state"), 0o600) // checked by the start, not the flag
	code, _, stderr := runCmd(t, map[string]string{"HOSTEMU_STATE": bad}, "serve", "--addr", "127.0.0.1:0")
	if code == 0 || !strings.Contains(stderr, "HOSTEMU_STATE "+bad+": not a hostemu state file") || strings.Contains(stderr, "--state") {
		t.Errorf("exit %d, stderr %q: want HOSTEMU_STATE named, not --state", code, stderr)
	}
	code, _, stderr = runCmd(t, nil, "serve", "--addr", "127.0.0.1:0", "--state", bad)
	if code == 0 || !strings.Contains(stderr, "--state "+bad) {
		t.Errorf("exit %d, stderr %q: want --state named", code, stderr)
	}
}
