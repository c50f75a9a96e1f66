package apperr

// CodeSet gathers distinct error codes in the order they are first added; "" (no code)
// is never one. The codes an answer may carry are gathered so from the catalogue
// (AnswerCodes), a world's faults and its journal: one way, not three.
type CodeSet struct {
	seen map[string]bool
	list []string
}

// Add adds code unless it is "" or already there.
func (s *CodeSet) Add(code string) {
	if code == "" || s.seen[code] {
		return
	}
	if s.seen == nil {
		s.seen = map[string]bool{}
	}
	s.seen[code] = true
	s.list = append(s.list, code)
}

// List is the codes added, in the order first added.
func (s *CodeSet) List() []string { return s.list }
