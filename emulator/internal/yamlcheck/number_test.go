package yamlcheck_test

import (
	"testing"

	"github.com/hostemu/hostemu/emulator/internal/scenario"
)

// A number YAML reads but no check can use (.nan, .inf, 1e400) is named as it is
// written, not "want a number, got a number".
func TestNonFiniteNumberIsNamed(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ value, want string }{
		{".nan", "s.yaml:2:71: faults[0].probability: want a number, got .nan, which is not finite"},
		{"-.inf", "s.yaml:2:71: faults[0].probability: want a number, got -.inf, which is not finite"},
		{"1e400", "s.yaml:2:71: faults[0].probability: 1e400 is out of range: want a number"},
	} {
		t.Run(tt.value, func(t *testing.T) {
			_, ps := scenario.Parse("s.yaml", []byte("name: n\nfaults: [{match: {path: \"/v1/*\"}, status: 503, times: 1, probability: "+tt.value+"}]\n"))
			if len(ps) != 1 || ps[0].String() != tt.want {
				t.Fatalf("problems %v, want [%s]", ps, tt.want)
			}
		})
	}
}
