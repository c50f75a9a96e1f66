package main

import (
	"bytes"
	"os"
	"testing"
)

// TestTypesAreFresh fails when python/hostemu/_types.py is not what gentypes writes from
// the control description, as .ci/openapi-check does for the TypeScript types.
func TestTypesAreFresh(t *testing.T) {
	src, err := os.ReadFile(specPath)
	if err != nil {
		t.Fatal(err)
	}
	want, err := Generate(src)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(outPath)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is stale: run go run ./python/gentypes and commit it", outPath)
	}
}
