package state

import (
	"encoding/json"
	"io"
	"strings"
	"testing"
)

func TestSqueezer(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{`{ "a" :  [1,  2] }`, `{ "a" : [1, 2] }`},
		{"{\n\t\"a  b\":\"c\\\"  d\"  }", `{ "a  b":"c\"  d" }`},
		{`"\\"  "x"`, `"\\" "x"`},
		{`  `, ` `},
	}
	for _, tt := range tests {
		got, err := io.ReadAll(&squeezer{r: strings.NewReader(tt.in)})
		if err != nil || string(got) != tt.want {
			t.Errorf("squeeze(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

// The --state file's log_seq reaches ReadOptions.Extra; other unknown keys are skipped.
func TestReadSnapshotOffersExtraKeys(t *testing.T) {
	var seq uint64
	snap, err := ReadSnapshot(strings.NewReader(`{"log_seq":42,"unknown":{"a":[1]},"tokens":[{"token":"t","scope":"read"}]}`), ReadOptions{
		Extra: func(key string, dec *json.Decoder) (bool, error) {
			if key != "log_seq" {
				return false, nil
			}
			return true, dec.Decode(&seq)
		},
	})
	if err != nil || seq != 42 || len(snap.Tokens) != 1 || snap.Tokens[0].Token != "t" {
		t.Fatalf("seq %d, tokens %+v, err %v", seq, snap.Tokens, err)
	}
}
