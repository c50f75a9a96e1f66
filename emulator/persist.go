package emulator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/state"
	"github.com/hostemu/hostemu/emulator/internal/world"
)

// saveEvery is how often --state is written while the state changes.
const saveEvery = 2 * time.Second

// saver keeps --state: loaded at start when present, written atomically (a temporary
// file renamed over it) on shutdown and every saveEvery while the state changes.
type saver struct {
	path  string
	world *world.World
	log   *slog.Logger

	mu    sync.Mutex // guards saved
	saved uint64     // the world's change count at the last save
}

func newSaver(path string, w *world.World, log *slog.Logger) (*saver, error) {
	s := &saver{path: path, world: w, log: log}
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return s, nil
	case err != nil:
		return nil, fmt.Errorf("--state %s: %w", path, err)
	}
	var snap state.Snapshot
	if err := json.Unmarshal(b, &snap); err != nil {
		return nil, fmt.Errorf("--state %s: not a hostemu state file: %w", path, err)
	}
	if err := w.Import(snap); err != nil {
		return nil, fmt.Errorf("--state %s: %w", path, err)
	}
	s.saved = w.Changes()
	log.Info("state loaded", "file", path, "deployments", len(snap.Deployments))
	return s, nil
}

func (s *saver) run(ctx context.Context) {
	t := time.NewTicker(saveEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := s.save(); err != nil {
				s.log.Error("saving state", "file", s.path, "err", err)
			}
		}
	}
}

// save writes the state if it changed since the last save.
func (s *saver) save() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.world.Changes()
	if n == s.saved {
		return nil
	}
	b, err := json.Marshal(s.world.Export())
	if err != nil {
		return err
	}
	if err := writeAtomic(s.path, b); err != nil {
		return err
	}
	s.saved = n
	return nil
}

// writeAtomic writes b to a temporary file beside path, syncs it, and renames it over
// path, so a crash leaves either the old file or the new one, never half of one.
func writeAtomic(path string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(b)
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
	}
	return err
}
