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
)

// Weight estimates the memory a world holding snap takes, in bytes, uploads aside (the
// file store bounds those): the bound namespaces are held to (--max-world-bytes).
func (s *Snapshot) Weight() int64 {
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
	for i := range s.Tokens {
		n += weightItem
		str(s.Tokens[i].Token)
	}
	for i := range s.Projects {
		p := &s.Projects[i]
		n += weightItem
		str(p.ID, p.Name, p.ProductionDeploymentID)
		kv(p.Env)
	}
	for i := range s.Deployments {
		d := &s.Deployments[i]
		n += 2 * weightItem
		str(d.ID, d.ProjectID, d.URL, d.Target, d.Status)
		kv(d.Env)
		kv(d.Files)
		for _, l := range d.Logs {
			n += weightLogLine + int64(len(l.Text))
		}
		if d.Error != nil {
			str(d.Error.Code, d.Error.Message)
		}
	}
	for i := range s.Domains {
		d := &s.Domains[i]
		n += 2 * weightItem
		str(d.Hostname, d.ProjectID, d.Status, d.RedirectTo)
	}
	for _, f := range s.Files {
		n += weightEntry + int64(len(f))
	}
	n += int64(len(s.Detaching)) * weightItem
	return n
}
