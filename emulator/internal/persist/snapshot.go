package persist

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/hostemu/hostemu/emulator/internal/hugeheap"
	"github.com/hostemu/hostemu/emulator/internal/state"
	"github.com/hostemu/hostemu/emulator/internal/strictjson"
)

// snapshotFile is the --state file: the state as GET /_emulator/state exports it (so
// PUT /_emulator/state takes it, and older files without log_seq still load), plus the
// seq of the last change log record it includes.
type snapshotFile struct {
	LogSeq uint64 `json:"log_seq"`
	state.Snapshot
}

// readSnapshotFile reads path with state's streaming reader; ok is false when it does
// not exist.
func readSnapshotFile(path string) (sf snapshotFile, ok bool, err error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return sf, false, nil
	}
	if err != nil {
		return sf, false, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > 0 {
		// a state read at the binary's start: about twice its text on the heap, on huge
		// pages where the kernel gives them on request (nothing elsewhere: hugeheap)
		hugeheap.Reserve(2 * uint64(st.Size()))
	}
	sf.Snapshot, err = state.ReadSnapshot(bufio.NewReaderSize(f, 1<<20), state.ReadOptions{
		Extra: func(key string, value []byte) (bool, error) {
			if !strings.EqualFold(key, "log_seq") {
				return false, nil
			}
			err := json.Unmarshal(value, &sf.LogSeq)
			if typ, ok := errors.AsType[*json.UnmarshalTypeError](err); ok && typ.Field == "" {
				// named, as a field's refusal is: `field "log_seq" must be an integer
				// from 0 to …, not -1`
				typ.Field = "log_seq"
			}
			return true, err
		},
		// in strictjson's words, as the control API and a bundle say them, never
		// encoding/json's ("cannot unmarshal number into Go struct field Project.…")
		JSONError: strictjson.Worded,
	})
	if err != nil {
		return sf, false, err
	}
	return sf, true, nil
}

// encodeSnapshot writes snap and seq as snapshotFile's JSON, one element at a time,
// with the export's own writer (state.WriteSnapshot) and the log_seq first.
func encodeSnapshot(w io.Writer, snap *state.Snapshot, seq uint64) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	err := state.WriteSnapshot(bw, snap, `"log_seq":`+strconv.FormatUint(seq, 10)+`,`)
	if err == nil {
		_, err = bw.WriteString("\n")
	}
	return firstErr(err, bw.Flush())
}

func firstErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// writeAtomic writes a file beside path with write, syncs it, renames it over path and
// syncs the directory, so a crash leaves either the old file or the new one, never half
// of one, and the rename itself survives.
func writeAtomic(path string, write func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	err = write(f)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return syncDir(filepath.Dir(path))
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// removeTemps removes what writeAtomic leaves behind when the process dies mid-write:
// .FILE.<digits>.tmp and .FILE.log.<digits>.tmp beside FILE. It returns their names.
func removeTemps(path string) ([]string, error) {
	dir, base := filepath.Dir(path), filepath.Base(path)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var removed []string
	for _, e := range entries {
		mid, ok := strings.CutPrefix(e.Name(), "."+base+".")
		if !ok {
			continue
		}
		if mid, ok = strings.CutSuffix(mid, ".tmp"); !ok {
			continue
		}
		mid = strings.TrimPrefix(mid, "log.")
		if mid == "" || strings.Trim(mid, "0123456789") != "" {
			continue
		}
		if err := os.Remove(filepath.Join(dir, e.Name())); err != nil && !os.IsNotExist(err) {
			return removed, err
		}
		removed = append(removed, e.Name())
	}
	return removed, nil
}
