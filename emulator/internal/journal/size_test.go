package journal

import "testing"

func TestEntryBytesFigure(t *testing.T) {
	if MaxEntryBytes != 8608 {
		t.Errorf("MaxEntryBytes = %d; README says 8,608", MaxEntryBytes)
	}
}
