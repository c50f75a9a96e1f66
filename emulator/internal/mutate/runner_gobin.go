package mutate

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// After the baseline, the go runner builds each package's test binary once (go test -c)
// and runs it for each round: the go command's own work (loading packages, checking the
// build cache) is most of a small suite's wall time, and a round need not repeat it.

// preparer is a runner that can make its rounds faster once the baseline has passed:
// Prepare gives the runner the rounds use (itself when it cannot do better, with why).
type preparer interface {
	Prepare(ctx context.Context, argv []string, workdir, tmp string, keys []string) (Runner, string)
}

// grouper is a runner whose rounds are made per group of tests (the Go binary runner:
// per package, each with its own binary).
type grouper interface {
	Group(key string) string
}

// dirRunner is a runner whose runs need a working directory of their own.
type dirRunner interface {
	Dir(only []string) string
}

// goBoolBuildFlags and goValueBuildFlags are go test's build flags, which go to go test
// -c; goBoolTestFlags and goValueTestFlags its test flags, which go to the binary as
// -test.NAME. A flag in none of them (or -exec, -C, -o, a profile) keeps the go command.
var (
	goBoolBuildFlags  = set("race", "msan", "asan", "cover", "a", "trimpath", "linkshared", "buildvcs", "work", "x", "n")
	goValueBuildFlags = set("p", "covermode", "coverpkg", "tags", "ldflags", "gcflags", "asmflags", "mod", "modfile", "overlay", "pkgdir", "pgo", "buildmode", "compiler", "gccgoflags", "installsuffix")
	goBoolTestFlags   = set("short", "failfast", "fullpath")
	goValueTestFlags  = set("timeout", "cpu", "parallel", "skip", "shuffle")
	// ours, or what the rounds set themselves
	goDroppedFlags = set("json", "v", "vet", "count", "run")
)

func set(names ...string) map[string]bool {
	m := map[string]bool{}
	for _, n := range names {
		m[n] = true
	}
	return m
}

// goArgs splits go test's arguments into build flags, test flags (as -test.NAME) and
// packages; ok is false for anything it does not know.
func goArgs(args []string) (build, test, pkgs []string, ok bool) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "-args" || a == "--args" {
			return nil, nil, nil, false // arguments of the binary: keep the go command
		}
		if !strings.HasPrefix(a, "-") {
			pkgs = append(pkgs, a)
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		takesValue := goValueBuildFlags[name] || goValueTestFlags[name] || (goDroppedFlags[name] && name != "json" && name != "v")
		if takesValue && !hasValue {
			if i+1 >= len(args) {
				return nil, nil, nil, false
			}
			i++
			value, hasValue = args[i], true
		}
		switch {
		case goDroppedFlags[name]:
		case goBoolBuildFlags[name] || goValueBuildFlags[name]:
			if hasValue {
				build = append(build, "-"+name+"="+value)
			} else {
				build = append(build, "-"+name)
			}
		case goBoolTestFlags[name] || goValueTestFlags[name]:
			if hasValue {
				test = append(test, "-test."+name+"="+value)
			} else {
				test = append(test, "-test."+name)
			}
		default:
			return nil, nil, nil, false
		}
	}
	if len(pkgs) == 0 {
		pkgs = []string{"."}
	}
	return build, test, pkgs, true
}

// Prepare builds the binaries of the packages whose tests have mutants.
func (g goRunner) Prepare(ctx context.Context, argv []string, workdir, tmp string, keys []string) (Runner, string) {
	build, test, pkgs, ok := goArgs(argv[2:])
	if !ok {
		return g, "the command has a flag mutate does not pass to a test binary: each round runs go test"
	}
	need := map[string]bool{}
	for _, k := range keys {
		pkg, _, _ := strings.Cut(k, " ")
		need[pkg] = true
	}
	list := exec.CommandContext(ctx, "go", append([]string{"list", "-f", "{{.ImportPath}}\t{{.Dir}}"}, pkgs...)...)
	list.Dir = workdir
	endList, err := killGroup(list) // go's own children (its compilers) go with it, as a run's do
	if err != nil {
		return g, "go list: " + err.Error()
	}
	out, err := list.Output()
	endList()
	if err != nil {
		return g, "go list: " + err.Error()
	}
	r := &goBinRunner{pkgs: map[string]goBinary{}, test: test}
	sc := bufio.NewScanner(bytes.NewReader(out))
	i := 0
	for sc.Scan() {
		path, dir, _ := strings.Cut(sc.Text(), "\t")
		if !need[path] {
			continue
		}
		bin := filepath.Join(tmp, fmt.Sprintf("pkg%d.test", i))
		i++
		c := exec.CommandContext(ctx, "go", append(append([]string{"test", "-c", "-o", bin}, build...), path)...)
		c.Dir = workdir
		endBuild, err := killGroup(c)
		if err != nil {
			return g, fmt.Sprintf("go test -c %s: %v", path, err)
		}
		msg, err := c.CombinedOutput()
		endBuild()
		if err != nil {
			return g, fmt.Sprintf("go test -c %s: %v: %s", path, err, tail(msg, 512))
		}
		r.pkgs[path] = goBinary{bin: bin, dir: dir}
	}
	for p := range need {
		if _, ok := r.pkgs[p]; !ok {
			return g, "go list does not list " + p
		}
	}
	return r, ""
}

type goBinary struct{ bin, dir string }

// goBinRunner runs a package's test binary built once, -test.v=test2json: its framing
// lines say which test passed or failed.
type goBinRunner struct {
	goRunner
	pkgs map[string]goBinary
	test []string // the user's test flags, as -test.NAME
}

func (*goBinRunner) Group(key string) string {
	pkg, _, _ := strings.Cut(key, " ")
	return pkg
}

func (r *goBinRunner) Dir(only []string) string {
	return r.pkgs[r.Group(only[0])].dir
}

// pkgFile names the file in a run's directory that says which package it ran.
const pkgFile = "go-package"

func (r *goBinRunner) Command(argv []string, dir string, only []string) ([]string, error) {
	if len(only) == 0 {
		return nil, fmt.Errorf("mutate: a test binary runs some tests")
	}
	pkg := r.Group(only[0])
	b, ok := r.pkgs[pkg]
	if !ok {
		return nil, fmt.Errorf("mutate: no test binary for %s", pkg)
	}
	if err := os.WriteFile(filepath.Join(dir, pkgFile), []byte(pkg), 0o600); err != nil {
		return nil, err
	}
	out := []string{b.bin, "-test.v=test2json", "-test.count=1", "-test.run=" + goRunPattern(only)}
	return append(out, r.test...), nil
}

// Results reads the binary's test2json framing: \x16 then "=== RUN   name", "=== NAME
// name", "=== CONT  name", "--- PASS: name (…)", "--- FAIL: …", "--- SKIP: …"; other lines
// are the output of the test last named.
func (r *goBinRunner) Results(dir string, output []byte) (map[string]Outcome, error) {
	raw, err := os.ReadFile(filepath.Join(dir, pkgFile))
	if err != nil {
		return nil, err
	}
	pkg := string(raw)
	res := map[string]Outcome{}
	outs := testOutputs{}
	current := ""
	add := func(text string) {
		if current != "" {
			outs.add(current, text)
		}
	}
	for _, line := range strings.SplitAfter(string(output), "\n") {
		before, frame, marked := strings.Cut(line, "\x16")
		if before != "" {
			add(before)
			if marked {
				add("\n")
			}
		}
		if !marked {
			continue
		}
		body := strings.TrimRight(frame, "\n")
		switch {
		case strings.HasPrefix(body, "=== RUN   "), strings.HasPrefix(body, "=== NAME  "), strings.HasPrefix(body, "=== CONT  "):
			current = strings.TrimSpace(body[10:])
			if strings.HasPrefix(body, "=== RUN") {
				add(body + "\n")
			}
		case strings.HasPrefix(body, "--- PASS: "), strings.HasPrefix(body, "--- FAIL: "), strings.HasPrefix(body, "--- SKIP: "):
			name := body[10:]
			if i := strings.LastIndex(name, " ("); i >= 0 {
				name = name[:i]
			}
			current = name
			add(body + "\n")
			res[pkg+" "+name] = Outcome{Failed: strings.HasPrefix(body, "--- FAIL")}
		}
	}
	for k, o := range res {
		_, name, _ := strings.Cut(k, " ")
		o.Output = outs.of(name)
		res[k] = o
	}
	return res, nil
}
