package httpapi

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"testing"

	"github.com/hostemu/hostemu/emulator/internal/view"
)

// TestUploadJSON holds appendUpload, the upload's answer written by hand, to
// encoding/json's writing of view.Upload, which it stands in for.
func TestUploadJSON(t *testing.T) {
	for _, size := range []int{0, 1, 9, 10, 1023, 1 << 20, 32 << 20} {
		s := sha256.Sum256([]byte{byte(size)})
		digest := hex.EncodeToString(s[:])
		want, err := json.Marshal(view.Upload{Digest: digest, Size: size})
		if err != nil {
			t.Fatal(err)
		}
		if got := appendUpload([]byte("x"), digest, size); string(got) != "x"+string(want) {
			t.Fatalf("appendUpload = %s, encoding/json %s", got, want)
		}
	}
}
