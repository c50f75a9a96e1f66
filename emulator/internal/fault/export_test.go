package fault

// Weigh is how a near miss compares c with m: what differs and in how many fields (3
// stands for more than two).
func Weigh(m Match, c *Candidate) (Differs, int) {
	d, n, _, _ := prepare(m, nil).weigh(c)
	return d, n
}
