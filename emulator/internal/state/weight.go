package state

import "unsafe"

// Fixed costs of Weight, in bytes: what an item costs beyond its strings (its struct,
// its entry in the store's maps and indexes, the scheduler's events of a resource in
// flight), and what a map entry or a log line costs. TestWeightTracksTheHeap holds the
// estimate to the heap a world really takes.
const (
	weightItem    = 256
	weightEntry   = 64
	weightLogLine = int64(unsafe.Sizeof(LogLine{})) + 16
	// WeightLogLine is what a log line costs beyond its text.
	WeightLogLine = weightLogLine
)

// Weight estimates the memory a world holding snap takes, in bytes, uploads aside (the
// file store bounds those): the bound namespaces are held to (--max-world-bytes).
func (s *Snapshot) Weight() int64 {
	var n int64
	for i := range s.Tokens {
		n += WeightOf(&s.Tokens[i])
	}
	for i := range s.Projects {
		n += WeightOf(&s.Projects[i])
	}
	// the deployments, most of a big world, in two halves on two goroutines: a replay
	// weighs its world while nothing else runs
	ds := s.Deployments
	var other chan int64
	if len(ds) >= weighApart {
		other = make(chan int64, 1)
		half := ds[len(ds)/2:]
		ds = ds[:len(ds)/2]
		go func() { other <- weighDeployments(half) }()
	}
	n += weighDeployments(ds)
	if other != nil {
		n += <-other
	}
	for i := range s.Domains {
		n += WeightOf(&s.Domains[i])
	}
	for i := range s.Files {
		n += WeightOf(&s.Files[i])
	}
	n += int64(len(s.Detaching)) * weightItem
	return n
}

// weighApart is how many deployments a snapshot has at least for Weight to weigh them
// on two goroutines.
const weighApart = 8192

func weighDeployments(ds []Deployment) int64 {
	var n int64
	for i := range ds {
		n += WeightOf(&ds[i])
	}
	return n
}

// WeightOf estimates the memory one element of a snapshot takes (a *Token, *Project,
// *Deployment, *Domain, *Detachment, *Upload or a file digest's *string), as Weight
// counts it; an upload counts its content. A state import charges it element by
// element against the budget of bytes in flight.
func WeightOf(v any) int64 {
	var n int64
	str := func(ss ...string) {
		for _, x := range ss {
			n += int64(len(x))
		}
	}
	kv := func(m map[string]string) {
		for k, v := range m {
			n += weightEntry + int64(len(k)+len(v))
		}
	}
	switch x := v.(type) {
	case *Token:
		n += weightItem
		str(x.Token)
	case *Project:
		n += weightItem
		str(x.ID, x.Name, x.ProductionDeploymentID)
		kv(x.Env)
	case *Deployment:
		n += 2 * weightItem
		str(x.ID, x.ProjectID, x.URL, x.Target, x.Status)
		kv(x.Env)
		kv(x.Files)
		for _, l := range x.Logs {
			n += weightLogLine + int64(len(l.Text))
		}
		if x.Error != nil {
			str(x.Error.Code, x.Error.Message)
		}
	case *Domain:
		n += 2 * weightItem
		str(x.Hostname, x.ProjectID, x.Status, x.RedirectTo)
	case *string:
		n += weightEntry + int64(len(*x))
	case *Upload:
		n += weightItem + int64(len(x.Digest)+len(x.Content))
	default:
		n += weightItem
	}
	return n
}

// EntryWeight is what WeightOf counts for one entry of a deployment's Env or Files.
func EntryWeight(k, v string) int64 { return weightEntry + int64(len(k)+len(v)) }

// NewDeploymentWeight is WeightOf(&Deployment{ID: id, URL: url, Env: env, Files: files})
// for an id of idLen bytes and a URL of urlLen, where entries is the EntryWeight of
// every entry of env and files, summed by a caller that walks them anyway: a create
// charges its weight without building a Deployment (and its URL) to weigh
// (TestNewDeploymentWeight).
func NewDeploymentWeight(idLen, urlLen int, entries int64) int64 {
	return 2*weightItem + int64(idLen+urlLen) + entries
}
