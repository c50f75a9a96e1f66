package journal

import "testing"

func TestEntryBytesFigure(t *testing.T) {
	if MaxEntryBytes != 8880 {
		t.Errorf("MaxEntryBytes = %d; README says 8,880", MaxEntryBytes)
	}
}
