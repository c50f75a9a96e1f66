package cli

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hostemu/hostemu/emulator"
)

// recipeBlock is a fenced block of docs/edge-and-tls.md marked as a recipe:
// ```js recipe=node-undici
var recipeBlock = regexp.MustCompile("(?s)\n```[a-z]+ recipe=([a-z0-9-]+)\n(.*?)\n```")

// recipeRunners say how each recipe runs: the file it is written to and the command
// that runs it there, or why it is skipped on this machine.
var recipeRunners = map[string]func(t *testing.T, dir string) (file string, argv []string, skip string){
	"node-undici": func(t *testing.T, dir string) (string, []string, string) {
		if _, err := exec.LookPath("node"); err != nil {
			return "", nil, "node not installed"
		}
		// undici from the global modules (npm install -g undici), found by ESM resolution
		// through a node_modules beside the recipe
		root, err := exec.Command("npm", "root", "-g").Output()
		global := strings.TrimSpace(string(root))
		if err != nil || !isDir(filepath.Join(global, "undici")) {
			return "", nil, "undici not installed (npm install -g undici)"
		}
		if err := os.Symlink(global, filepath.Join(dir, "node_modules")); err != nil {
			t.Fatal(err)
		}
		return "recipe.mjs", []string{"node", "recipe.mjs"}, ""
	},
	"node-https": func(*testing.T, string) (string, []string, string) {
		if _, err := exec.LookPath("node"); err != nil {
			return "", nil, "node not installed"
		}
		return "recipe.mjs", []string{"node", "recipe.mjs"}, ""
	},
	"go": func(*testing.T, string) (string, []string, string) {
		goTool, err := exec.LookPath("go")
		if err != nil {
			return "", nil, "go not in PATH"
		}
		return "main.go", []string{goTool, "run", "main.go"}, ""
	},
	"python": func(*testing.T, string) (string, []string, string) {
		if _, err := exec.LookPath("python3"); err != nil {
			return "", nil, "python3 not installed"
		}
		return "recipe.py", []string{"python3", "recipe.py"}, ""
	},
	"ci": func(*testing.T, string) (string, []string, string) {
		if _, err := exec.LookPath("curl"); err != nil {
			return "", nil, "curl not installed"
		}
		return "recipe.sh", []string{"sh", "-e", "recipe.sh"}, ""
	},
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// Every recipe of docs/edge-and-tls.md, run as written against a live hostemu whose
// deployment host resolves nowhere but in the recipe's own way: each prints 200 and the
// deployment's page. A runtime or module missing here skips its recipe, named.
func TestEdgeRecipes(t *testing.T) {
	t.Parallel()
	doc := readDoc(t, "docs/edge-and-tls.md")
	blocks := recipeBlock.FindAllStringSubmatch(doc, -1)
	seen := map[string]bool{}
	for _, b := range blocks {
		if recipeRunners[b[1]] == nil {
			t.Errorf("docs/edge-and-tls.md: recipe=%s has no runner in recipes_test.go", b[1])
		}
		seen[b[1]] = true
	}
	for name := range recipeRunners {
		if !seen[name] {
			t.Errorf("docs/edge-and-tls.md lost recipe=%s", name)
		}
	}

	srv, err := emulator.Listen(emulator.Options{TLSAddr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		srv.Shutdown(ctx)
	})
	dep := readyDeployment(t, srv.URL())
	caFile := filepath.Join(t.TempDir(), "hostemu-ca.pem")
	if err := os.WriteFile(caFile, srv.Emulator().CACertPEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"HOSTEMU_URL=" + srv.URL(), "CA_FILE=" + caFile, "DEPLOYMENT_URL=" + dep.URL}
	for _, kv := range os.Environ() { // no proxy of the machine's, no HOSTEMU_*
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, "HOSTEMU_") && !strings.Contains(strings.ToLower(name), "proxy") {
			env = append(env, kv)
		}
	}
	for _, b := range blocks {
		name, code := b[1], b[2]
		run := recipeRunners[name]
		if run == nil {
			continue
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			file, argv, skip := run(t, dir)
			if skip != "" {
				t.Skip(skip)
			}
			if err := os.WriteFile(filepath.Join(dir, file), []byte(code+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
			cmd.Dir, cmd.Env = dir, env
			out, err := cmd.CombinedOutput()
			served := strings.HasPrefix(string(out), "200 ") && strings.Contains(string(out), dep.ID)
			if name == "ci" { // curl -f: two pages, the proxy's and the Host header's
				served = strings.Count(string(out), dep.ID) >= 2
			}
			if err != nil || !served {
				t.Errorf("recipe %s: %v\n%s", name, err, out)
			}
		})
	}
}

// readyDeployment is a ready deployment of the embedded fixtures, as the API lists it.
func readyDeployment(t *testing.T, base string) emulator.Deployment {
	t.Helper()
	req, _ := http.NewRequest("GET", base+"/v1/deployments?status=ready", nil)
	req.Header.Set("Authorization", "Bearer hostemu-read")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var list struct{ Deployments []emulator.Deployment }
	if err := json.NewDecoder(res.Body).Decode(&list); err != nil || len(list.Deployments) == 0 {
		t.Fatalf("no ready deployment: %v %d", err, res.StatusCode)
	}
	return list.Deployments[0]
}
