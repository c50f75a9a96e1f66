package bundle

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
)

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// archive writes a gzipped tar of n members made by header(i), each with no content.
func archive(t testing.TB, n int, header func(i int) *tar.Header) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	tw := tar.NewWriter(gz)
	for i := range n {
		if err := tw.WriteHeader(header(i)); err != nil {
			t.Fatal(err)
		}
	}
	tw.Close()
	gz.Close()
	return buf.Bytes()
}

// The unpack bound counts every byte the archive expands to (issue 32, item 3): archive/tar
// reads PAX extended headers and GNU long names itself, so 8,000 members of an empty
// file each with a 1 MiB PAX comment (7.8 GiB decompressed from 9.5 MB) took 10.3 s of
// CPU before the archive was refused. Headers are now held to 4 KiB a member on
// average, and the whole stream to MaxBytes: the first such member is refused, after
// about 1 MiB of decompressed bytes.
func TestArchiveHeadersCounted(t *testing.T) {
	t.Parallel()
	comment := strings.Repeat("x", 1<<20-64)
	for _, tc := range []struct {
		name   string
		header func(i int) *tar.Header
		want   string
	}{
		{"PAX comments", func(i int) *tar.Header {
			return &tar.Header{Name: fmt.Sprintf("files/%064x", i), Typeflag: tar.TypeReg, Mode: 0o644, Format: tar.FormatPAX, PAXRecords: map[string]string{"comment": comment}}
		}, "headers take"},
		{"GNU long names", func(i int) *tar.Header {
			return &tar.Header{Name: fmt.Sprintf("scenarios/%0*d.yaml", 512<<10, i), Typeflag: tar.TypeReg, Mode: 0o644, Format: tar.FormatGNU}
		}, "headers take"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := archive(t, 3, tc.header)
			src := &countingReader{r: bytes.NewReader(body)}
			_, err := Read(src, ReadOptions{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Read: %v; want an error naming %q", err, tc.want)
			}
			t.Logf("%d bytes of gzip for 3 members: refused after reading %d (%v)", len(body), src.n, err)
			if src.n > 256<<10 { // gzip of 2 MiB of headers, and the read-ahead
				t.Errorf("read %d bytes of %d before refusing", src.n, len(body))
			}
		})
	}
	// small headers, many members: the stream's bytes, headers and padding included,
	// are held to MaxBytes
	many := archive(t, 20, func(i int) *tar.Header {
		return &tar.Header{Name: fmt.Sprintf("scenarios/s%d.yaml", i), Typeflag: tar.TypeReg, Mode: 0o644}
	})
	if _, err := Read(bytes.NewReader(many), ReadOptions{MaxBytes: 4 << 10}); err == nil || !strings.Contains(err.Error(), "headers included") {
		t.Errorf("20 headers (10 KiB) against a bound of 4 KiB: %v", err)
	}
}

// Lines of journal.ndjson and events.ndjson up to the documented 1 MiB are read intact
// (issue 32): the line reader reused its 64 KiB buffer, so a 70 KiB line came back
// corrupted (400 "invalid character").
func TestLongLinesReadIntact(t *testing.T) {
	t.Parallel()
	for _, size := range []int{64<<10 - 1, 64 << 10, 64<<10 + 1, 200 << 10, maxLine} {
		var want []byte
		for i := range size - 1 {
			want = append(want, byte('a'+i%26))
		}
		want = append(want, '\n')
		var got []byte
		err := eachLine(bytes.NewReader(append(append([]byte(nil), want...), "second\n"...)), func(n int, line []byte) error {
			if n == 1 {
				got = append([]byte(nil), line...)
			}
			return nil
		})
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("a line of %d bytes: %v; read back intact: %v", size, err, bytes.Equal(got, want))
		}
	}
	err := eachLine(strings.NewReader(strings.Repeat("x", maxLine+1)+"\n"), func(int, []byte) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "over") {
		t.Errorf("a line over 1 MiB: %v", err)
	}
}
