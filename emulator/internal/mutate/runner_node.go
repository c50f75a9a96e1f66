package mutate

import (
	"cmp"
	"encoding/xml"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// node runs a node:test suite: `node --test [FILES…]`. Its testkit cannot tell which
// test made a world (node:test keeps its running test to itself), so the runner is
// Alone: each test runs by itself, found with --test-name-pattern.
type node struct {
	mu sync.Mutex
	// guards leaf and byLeaf: each test key's own name, and the keys of each own name, as the
	// reports read so far (the baseline's first) tell them.
	leaf   map[string]string
	byLeaf map[string]map[string]bool
}

func init() {
	register("node", func(argv []string) bool { return hasWord(argv, "node") && slices.Contains(argv, "--test") }, func() Runner {
		return &node{leaf: map[string]string{}, byLeaf: map[string]map[string]bool{}}
	})
}

// nodeReport is the JUnit reporter's file in a run's directory.
const nodeReport = "node-junit.xml"

// nodeSep joins the names of a test's describe blocks, parent tests and its own, in its
// key: "deploy > when the API is down > retries".
const nodeSep = " > "

func (*node) Name() string { return "node" }

// Key is "": node:test's testkit sends {}, and the coordinator gives the world to the
// run's only test.
func (*node) Key(Hello) string { return "" }

func (*node) Alone() bool { return true }

// Command adds, right after node (its flags go before the test files), the JUnit
// reporter writing to dir and the spec reporter on stdout (or the command's own
// reporters) and, for only, --test-name-pattern matching those tests' own names.
// node:test matches a pattern against each test's own name (and, from Node 22, its
// name with its ancestors'): a test whose own name another test has too cannot run
// alone, and Command refuses it once a report has shown both. Nor can a subtest
// (t.test) whose parent test does not match: it does not run.
func (n *node) Command(argv []string, dir string, only []string) ([]string, error) {
	i := wordIndex(argv, "node")
	if i < 0 {
		return nil, fmt.Errorf("node:test takes its flags before its test files: give hostemu mutate the node command itself (node --test …), not a script that runs it")
	}
	add := []string{"--test-reporter=junit", "--test-reporter-destination=" + filepath.Join(dir, nodeReport)}
	reporters, destinations := countFlag(argv, "--test-reporter"), countFlag(argv, "--test-reporter-destination")
	if reporters == 0 {
		add = append(add, "--test-reporter=spec", "--test-reporter-destination=stdout")
	}
	for ; destinations < reporters; destinations++ {
		// ours comes first: the command's reporters keep the destinations they had,
		// stdout for those without
		add = append(add, "--test-reporter-destination=stdout")
	}
	if only != nil {
		leaves, err := n.leaves(only)
		if err != nil {
			return nil, err
		}
		add = append(add, "--test-name-pattern="+namePattern(leaves))
	}
	out := slices.Clone(argv[:i+1])
	out = append(out, add...)
	return append(out, argv[i+1:]...), nil
}

// leaves are the own names of the tests only names.
func (n *node) leaves(only []string) ([]string, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []string
	for _, k := range only {
		l, ok := n.leaf[k]
		if !ok {
			// not seen in a report: its own name is after its last separator
			l = k
			if j := strings.LastIndex(k, nodeSep); j >= 0 {
				l = k[j+len(nodeSep):]
			}
		}
		if others := n.byLeaf[l]; len(others) > 1 {
			keys := slices.Sorted(maps.Keys(others))
			return nil, fmt.Errorf("node:test's --test-name-pattern picks tests by their own names, and %d tests are named %q (%s): give them distinct names", len(keys), l, strings.Join(keys, "; "))
		}
		out = append(out, l)
	}
	return out, nil
}

// countFlag counts the flags name ("name" and "name=…") of argv.
func countFlag(argv []string, name string) int {
	n := 0
	for _, a := range argv {
		if a == name || strings.HasPrefix(a, name+"=") {
			n++
		}
	}
	return n
}

// nodeSuite is a <testsuites> or <testsuite> of node:test's JUnit reporter: a describe
// block, or a test with subtests.
type nodeSuite struct {
	Name   string      `xml:"name,attr"`
	Suites []nodeSuite `xml:"testsuite"`
	Cases  []nodeCase  `xml:"testcase"`
}

// nodeCase is a <testcase>: a test without subtests.
type nodeCase struct {
	Name    string     `xml:"name,attr"`
	Failure *junitText `xml:"failure"`
	Error   *junitText `xml:"error"`
	Skipped *junitText `xml:"skipped"`
}

// junitText is a JUnit <failure>, <error> or <skipped> (node:test's reporter's and
// pytest's alike): its message and its text.
type junitText struct {
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

// Results reads the JUnit reporter's file: each test case that ran (not skipped, not
// todo) by its key, the names from its outermost describe block or test to its own
// joined by " > ". Tests of one key (the same names in two files) failed when either
// did.
func (n *node) Results(dir string, _ []byte) (map[string]Outcome, error) {
	file := filepath.Join(dir, nodeReport)
	data, err := readReport(file)
	if data == nil || err != nil {
		return map[string]Outcome{}, err
	}
	out, err := n.parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return out, nil
}

// parse is Results of a report's bytes; it learns the own names of the tests it holds.
func (n *node) parse(data []byte) (map[string]Outcome, error) {
	var root nodeSuite
	if err := xml.Unmarshal(data, &root); err != nil {
		return nil, err
	}
	out := map[string]Outcome{}
	n.mu.Lock()
	defer n.mu.Unlock()
	var walk func(s nodeSuite, path []string)
	walk = func(s nodeSuite, path []string) {
		for _, c := range s.Cases {
			key := strings.Join(append(slices.Clip(path), c.Name), nodeSep)
			n.leaf[key] = c.Name
			if n.byLeaf[c.Name] == nil {
				n.byLeaf[c.Name] = map[string]bool{}
			}
			n.byLeaf[c.Name][key] = true
			if c.Skipped != nil {
				continue
			}
			var o Outcome
			if f := cmp.Or(c.Failure, c.Error); f != nil {
				o = Outcome{Failed: true, Output: clip(strings.TrimSpace(cmp.Or(f.Text, f.Message)), maxFailure)}
			}
			if prev, ok := out[key]; ok && prev.Failed {
				continue
			}
			out[key] = o
		}
		for _, sub := range s.Suites {
			walk(sub, append(slices.Clip(path), sub.Name))
		}
	}
	walk(root, nil)
	return out, nil
}
