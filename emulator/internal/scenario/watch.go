package scenario

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/fsnotify/fsnotify"
)

// debounce is how long the watcher waits after the last change before reloading, so an
// editor's burst of writes and renames makes one reload (docs/scenarios.md: in force within about 50 ms).
const debounce = 50 * time.Millisecond

// maxQuietWaits bounds how many more debounces the watcher waits for a directory whose
// files' sizes or mtimes still move without a change event (a writer fsnotify missed):
// 10 × 50 ms keeps a reload within the second docs/scenarios.md promises.
const maxQuietWaits = 10

// fileStamp is what a directory entry looked like: a file still being written changes it.
type fileStamp struct {
	size  int64
	mtime time.Time
}

// stamps reads the size and mtime of every entry directly in dir (nil when it cannot be
// read: the reload reports why). Links are followed, as the loader follows them.
func stamps(dir string) map[string]fileStamp {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	out := make(map[string]fileStamp, len(entries))
	for _, e := range entries {
		fi, err := os.Stat(filepath.Join(dir, e.Name()))
		if err != nil {
			continue
		}
		out[e.Name()] = fileStamp{size: fi.Size(), mtime: fi.ModTime()}
	}
	return out
}

// Watch loads dir, then reloads it whenever something in it changes, until ctx ends.
// It watches the directory and its parent, so a directory removed and created again is
// picked up, and it reloads the whole directory each time, so saves by rename, links
// swapped (Kubernetes ConfigMaps), files added and removed all count. Each change that
// alters the registry is logged at Info and every problem at Warn. It returns nil when
// ctx ends, or an error when it cannot watch at all.
func (r *Registry) Watch(ctx context.Context, dir string, logger *slog.Logger) error {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("watch scenarios %s: %w", dir, err)
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("watch scenarios %s: %w", dir, err)
	}
	defer w.Close()
	parentErr := w.Add(filepath.Dir(abs))
	if parentErr != nil {
		logger.Warn("cannot watch the scenarios directory's parent; a removed directory will not be picked up again",
			"dir", filepath.Dir(abs), "error", parentErr)
	}
	if err := w.Add(abs); err != nil && (parentErr != nil || !errors.Is(err, fs.ErrNotExist)) {
		return fmt.Errorf("watch scenarios %s: %w", dir, err)
	}
	r.reload(dir, logger, true)

	var timer *time.Timer
	var due <-chan time.Time
	var seen map[string]fileStamp // the directory when the timer was last armed
	waits := 0                    // debounces waited since the last change event
	for {
		select {
		case <-ctx.Done():
			if timer != nil {
				timer.Stop()
			}
			return nil
		case ev, ok := <-w.Events:
			if !ok {
				return nil
			}
			if !concerns(ev, abs) {
				continue
			}
			if timer == nil {
				timer = time.NewTimer(debounce)
			} else {
				timer.Reset(debounce)
			}
			due = timer.C
			seen, waits = stamps(abs), 0
		case err, ok := <-w.Errors:
			if !ok {
				return nil
			}
			logger.Warn("watching scenarios", "dir", dir, "error", err)
		case <-due:
			// Apply a file only once it is quiet: sizes and mtimes unchanged across the
			// debounce, so a writer's later chunk is not cut off (bounded by maxQuietWaits).
			if now := stamps(abs); !maps.Equal(now, seen) && waits < maxQuietWaits {
				seen = now
				waits++
				timer.Reset(debounce)
				continue
			}
			due = nil
			// A directory created again needs a new watch; Add on a watched one is a no-op.
			if err := w.Add(abs); err != nil && !errors.Is(err, fs.ErrNotExist) {
				logger.Warn("watching scenarios", "dir", dir, "error", err)
			}
			r.reload(dir, logger, false)
		}
	}
}

// concerns reports whether ev is about dir itself or something directly in it.
func concerns(ev fsnotify.Event, dir string) bool {
	if ev.Op == fsnotify.Chmod {
		return false
	}
	return ev.Name == dir || filepath.Dir(ev.Name) == dir
}

// reload loads dir and logs the outcome when it changed something (always at start),
// before subscribers hear of it.
func (r *Registry) reload(dir string, logger *slog.Logger, initial bool) {
	r.load(dir, func(problems []Problem, changed bool) {
		if !changed && !initial {
			return
		}
		var fromDir []string // the scenarios not built in: no built-in need be parsed for it
		for name, s := range r.current().scenarios {
			if s.Source != SourceBuiltin {
				fromDir = append(fromDir, name)
			}
		}
		slices.Sort(fromDir)
		logger.Info("scenarios loaded", "dir", dir, "version", r.Version(), "from_dir", fromDir, "problems", len(problems))
		for _, p := range problems {
			logger.Warn("scenario problem", "file", p.File, "line", p.Line, "column", p.Column, "error", p.Message)
		}
	})
}
