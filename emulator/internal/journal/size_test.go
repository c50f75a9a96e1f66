package journal

import "testing"

func TestEntryBytesFigure(t *testing.T) {
	if MaxEntryBytes != 8960 {
		t.Errorf("MaxEntryBytes = %d; README says 8,960", MaxEntryBytes)
	}
}
