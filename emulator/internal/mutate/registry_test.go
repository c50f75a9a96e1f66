package mutate

import "testing"

// A runner is the program the command runs, not a word of its arguments.
func TestDetectByProgram(t *testing.T) {
	for _, tc := range []struct {
		argv []string
		want string
	}{
		{[]string{"npx", "vitest", "run"}, "vitest"},
		{[]string{"node", "node_modules/vitest/vitest.mjs", "run"}, "vitest"},
		{[]string{"pnpm", "exec", "jest", "--ci"}, "jest"},
		{[]string{"env", "CI=1", "npx", "jest"}, "jest"},
		{[]string{"node_modules/.bin/jest"}, "jest"},
		{[]string{"python", "-m", "pytest", "tests/jest"}, "pytest"},
		{[]string{"python3", "-m", "pytest", "-k", "vitest"}, "pytest"},
		{[]string{"go", "test", "./vitest/..."}, "go"},
		{[]string{"node", "--test", "test/jest.test.mjs"}, "node"},
		{[]string{`node_modules\.bin\jest.cmd`, "--ci"}, "jest"},
		{[]string{"npx", `node_modules\vitest\vitest.mjs`, "run"}, "vitest"},
	} {
		r, err := FindRunner("", tc.argv)
		if err != nil || r.Name() != tc.want {
			name := ""
			if r != nil {
				name = r.Name()
			}
			t.Errorf("%q: %q %v, want %s", tc.argv, name, err, tc.want)
		}
	}
}
