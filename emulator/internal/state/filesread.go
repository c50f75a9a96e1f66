package state

import "unsafe"

// A deployment's files are checked as the API checks a create's (FilesProblem) by
// Check, whoever built the snapshot. Walking every file of a big state for it again
// would make its load about three times as slow (BenchmarkLoad100k: 1.3 million files
// in 100,000 deployments, most of them strings in memory the load does not otherwise
// touch), so the state reader checks each deployment's files while their bytes are
// at hand (dparser.stringMap: a digest it shares with the project's last deployment,
// at the same place, was checked there and is not read again), and leaves its verdict
// in the snapshot (Snapshot.filesRead). Check takes the verdict for a deployment
// whose files are still the very map the reader checked, and checks any other itself:
// a deployment the reader left to the strict decoder, or one a caller added or
// replaced after the read. A map is never written once made (a deployment's files
// are replaced, not edited), so the map the reader checked holds what it checked. A
// deployment without files (a nil map: null, or no "files" key) is FilesProblem's
// "required": the verdict holds no nil map, so Check asks FilesProblem, at no walk.

// filesVerdict is the reader's verdict on a snapshot's deployments' files, by index.
type filesVerdict struct {
	// read is, by deployment index (in chunks of verdictChunk: no copying as it
	// grows), the files map the reader checked (nil: it did not check that
	// deployment's), told apart from any other by its identity (mapPointer); held, so
	// that no other map is ever made at its address. Two reads of one text give
	// verdicts that reflect.DeepEqual finds equal.
	read [][]map[string]string
	n    int // the deployments in read
	// problems are the FilesProblem of those read with one, by index (nil: none)
	problems map[int]string
}

// problem is FilesProblem(files) for the deployment at index i: the reader's verdict
// when files is the map it checked there.
func (v *filesVerdict) problem(i int, files map[string]string) string {
	if m := v.at(i); m != nil && mapPointer(m) == mapPointer(files) {
		return v.problems[i]
	}
	return FilesProblem(files)
}

// verdictChunk is how many deployments a chunk of filesVerdict.read holds.
const verdictChunk = 4096

// at is the files map the reader checked at index i, nil when none.
func (v *filesVerdict) at(i int) map[string]string {
	if v == nil || i < 0 || i >= v.n {
		return nil
	}
	return v.read[i/verdictChunk][i%verdictChunk]
}

// add appends the next deployment's checked map (nil: not checked). The first chunk
// grows as appends grow it, so that a small state's verdict stays small; the next
// ones are made whole.
func (v *filesVerdict) add(m map[string]string) {
	if k := len(v.read); k == 0 || len(v.read[k-1]) == verdictChunk {
		var c []map[string]string
		if k > 0 {
			c = make([]map[string]string, 0, verdictChunk)
		}
		v.read = append(v.read, c)
	}
	k := len(v.read) - 1
	v.read[k] = append(v.read[k], m)
	v.n++
}

// mapPointer is what m points at: one map's identity.
func mapPointer(m map[string]string) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&m)) }

// filesRead is the files a dparser read of the element being read, and their
// problem, until readArray settles the element (arena.settleFiles).
type filesRead struct {
	files   map[string]string
	problem string
}

// readFiles notes the files a dparser read of the deployment being read; valid is
// whether stringMap found them all valid.
func (a *arena) readFiles(files map[string]string, valid bool) {
	if a == nil {
		return
	}
	a.pending = filesRead{files: files}
	if !valid {
		a.pending.problem = FilesProblem(files)
	}
}

// settleFiles adds d, the deployment just read (by a dparser or the strict decoder),
// to the verdict: checked when its files are the map a dparser read and checked.
func (a *arena) settleFiles(d *Deployment) {
	m, i := d.Files, a.verdict.n
	if m == nil || mapPointer(m) != mapPointer(a.pending.files) {
		m = nil
	} else if a.pending.problem != "" {
		if a.verdict.problems == nil {
			a.verdict.problems = map[int]string{}
		}
		a.verdict.problems[i] = a.pending.problem
	}
	a.verdict.add(m)
	a.pending = filesRead{}
}

// FilesChecked records that every deployment's files in snap are as the API would
// have made them (FilesProblem says nothing of them), for a builder that checked or
// made them itself: the fixtures, whose hand-written files are checked as they are
// parsed (with their line) and whose generated ones are made valid. Check then takes
// that rather than walking every file again (1.3 million in the 100,000-deployment
// world, twice: fixture.Build's check and the store's); a deployment whose files are
// replaced afterwards is checked as any other.
func (snap *Snapshot) FilesChecked() {
	v := &filesVerdict{}
	for i := range snap.Deployments {
		v.add(snap.Deployments[i].Files)
	}
	snap.filesRead = v
}
