package yamlcheck

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// File size limits: a file larger than its limit is a problem, never read whole. A
// scenario is a page of YAML (the built-ins are under 2 KiB); a fixture may list many
// thousands of deployments by hand, as a state dump does.
const (
	MaxScenarioBytes = 1 << 20 // 1 MiB
	MaxFixtureBytes  = 8 << 20 // 8 MiB
)

// ErrOutside is the problem of a directory entry that is a symlink leading out of the
// directory: its target is neither read nor shown.
var ErrOutside = errors.New("symlink leads outside the directory")

// TooLargeError is the problem of a file over its size limit.
type TooLargeError struct {
	Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("file too large: at most %s", size(e.Limit))
}

// size writes a byte count in whole MiB or KiB when it is one, else in bytes.
func size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// IsYAMLName reports whether name is one a directory of scenarios or fixtures holds:
// *.yaml or *.yml, not hidden (editors' lock and swap files start with a dot).
func IsYAMLName(name string) bool {
	if strings.HasPrefix(name, ".") {
		return false
	}
	ext := strings.ToLower(filepath.Ext(name))
	return ext == ".yaml" || ext == ".yml"
}

// Dir reads the YAML files directly in one directory and never leaves it: a symlink
// to a file in the directory (as Kubernetes ConfigMaps make) is followed, one that
// leads out of it is ErrOutside. Files are read through an os.Root, so a link swapped
// between the check and the read cannot lead out either.
type Dir struct {
	path string
	real string // path with symlinks resolved, to tell where a link leads
	root *os.Root
}

// OpenDir opens the directory at path; Close it when done.
func OpenDir(path string) (*Dir, error) {
	root, err := os.OpenRoot(path)
	if err != nil {
		return nil, err
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		root.Close()
		return nil, err
	}
	return &Dir{path: path, real: real, root: root}, nil
}

// Close releases the directory.
func (d *Dir) Close() error { return d.root.Close() }

// Files lists, in lexical order, the names of the directory's YAML files (IsYAMLName):
// regular files and links to them inside the directory, and links that lead out of it
// (for Read to refuse, so that they are reported). Subdirectories, dangling links and
// special files are left out.
func (d *Dir) Files() ([]string, error) {
	entries, err := fs.ReadDir(d.root.FS(), ".")
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		name := e.Name()
		if !IsYAMLName(name) {
			continue
		}
		if fi, err := d.root.Stat(name); err == nil {
			if fi.Mode().IsRegular() {
				names = append(names, name)
			}
			continue
		}
		if d.leadsOutside(name) {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names, nil
}

// leadsOutside reports whether name is a symlink that the directory's os.Root will not
// follow because it leaves the directory (even on its way back in), or a dangling link
// whose target would be outside.
func (d *Dir) leadsOutside(name string) bool {
	fi, err := d.root.Lstat(name)
	if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		return false
	}
	if _, err := d.root.Stat(name); err == nil {
		return false
	}
	if _, err := os.Stat(filepath.Join(d.path, name)); err == nil {
		return true // it resolves, but not within the root
	}
	target, err := d.root.Readlink(name)
	if err != nil {
		return true
	}
	if !filepath.IsAbs(target) {
		target = filepath.Join(d.real, target)
	}
	rel, err := filepath.Rel(d.real, target)
	return err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// Read reads the file name of the directory, at most limit bytes: ErrOutside for a
// link out of the directory, a *TooLargeError beyond limit, else the os error without
// the path (the caller names the file).
func (d *Dir) Read(name string, limit int64) ([]byte, error) {
	if d.leadsOutside(name) {
		return nil, ErrOutside
	}
	fi, err := d.root.Stat(name)
	if err != nil {
		return nil, Pathless(err)
	}
	if !fi.Mode().IsRegular() { // a FIFO would block the read forever
		return nil, errors.New("not a regular file")
	}
	f, err := d.root.Open(name)
	if err != nil {
		if d.leadsOutside(name) {
			return nil, ErrOutside
		}
		return nil, Pathless(err)
	}
	defer f.Close()
	return readAtMost(f, limit)
}

// ReadFile reads the file at path, named by the user (so a symlink is followed), at
// most limit bytes.
func ReadFile(path string, limit int64) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, Pathless(err)
	}
	if !fi.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, Pathless(err)
	}
	defer f.Close()
	return readAtMost(f, limit)
}

func readAtMost(r io.Reader, limit int64) ([]byte, error) {
	if st, ok := r.(interface{ Stat() (fs.FileInfo, error) }); ok {
		if fi, err := st.Stat(); err == nil && fi.Size() > limit {
			return nil, &TooLargeError{Limit: limit}
		}
	}
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, Pathless(err)
	}
	if int64(len(data)) > limit {
		return nil, &TooLargeError{Limit: limit}
	}
	return data, nil
}

// Pathless drops the path a *fs.PathError repeats, as problems name the file already.
func Pathless(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
