package emulator

import (
	"fmt"
	"io"
	"time"

	"github.com/hostemu/hostemu/emulator/internal/bundle"
	"github.com/hostemu/hostemu/emulator/internal/httpapi"
)

// BundleManifest is a failure bundle's manifest.json.
type BundleManifest = bundle.Manifest

// ReadBundleManifest reads and checks a whole failure bundle (a GET /_emulator/bundle
// archive) and returns its manifest, without replaying it: what hostemu replay reads
// to choose its flags.
func ReadBundleManifest(r io.Reader, maxStateBytes int64) (BundleManifest, error) {
	b, err := bundle.Read(r, bundle.ReadOptions{StateMax: maxStateBytes})
	if err != nil {
		return BundleManifest{}, err
	}
	return b.Manifest, nil
}

// ReplayBundle replaces the default world with a failure bundle's (PUT
// /_emulator/bundle): its state, scenario, faults, journal (marked replayed), and a
// manual clock at the moment it was taken. A bad bundle changes nothing.
func (e *Emulator) ReplayBundle(r io.Reader) error {
	b, err := bundle.Read(r, bundle.ReadOptions{StateMax: e.opts.Limits.withDefaults().MaxStateBytes, Version: e.opts.Version, JournalKeep: e.world.JournalSize()})
	if err != nil {
		return fmt.Errorf("the bundle is refused: %w", err)
	}
	if err := httpapi.Restore(e.world, b); err != nil {
		return err
	}
	e.log.Info("replaying a failure bundle", "created_at", b.Manifest.CreatedAt.Format(time.RFC3339), "hostemu_version", b.Manifest.HostemuVersion,
		"namespace", b.Manifest.Namespace, "now", b.Manifest.Clock.Now.Format(time.RFC3339Nano), "scenario", b.Manifest.Scenario, "journal_entries", len(b.Journal))
	return nil
}
