package persist

import (
	"encoding/binary"
	"encoding/json"
	"hash/crc32"

	"github.com/hostemu/hostemu/emulator/internal/state"
)

// A change log record is a 16-byte header, then the change as JSON:
//
//	length uint32 | crc32c uint32 | seq uint64 | payload (length bytes)
//
// little-endian, the CRC (Castagnoli) over seq and payload. seq numbers the changes of
// the state file across restarts; the snapshot says which seq it includes.
const recordHeader = 16

// maxRecord bounds a record's payload: a larger length is a torn or foreign header.
const maxRecord = 1 << 30

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// AppendRecord appends c's record, numbered seq, to b. The payload is written in place
// after a header left blank and filled in once its length is known: no buffer of its
// own, no copy.
func AppendRecord(b []byte, seq uint64, c *state.Change) ([]byte, error) {
	start := len(b)
	b = append(b, make([]byte, recordHeader)...)
	b, err := appendChange(b, c)
	if err != nil {
		return b[:start], err
	}
	h, payload := b[start:start+recordHeader], b[start+recordHeader:]
	binary.LittleEndian.PutUint32(h[0:], uint32(len(payload)))
	binary.LittleEndian.PutUint64(h[8:], seq)
	crc := crc32.Update(crc32.Checksum(h[8:], crcTable), crcTable, payload)
	binary.LittleEndian.PutUint32(h[4:], crc)
	return b, nil
}

// appendChange appends json.Marshal(c) to b. The changes of a create and of a
// lifecycle's step (a deployment, and its project when the step moved its production
// pointer) are written without encoding/json's reflection and its compaction of what
// the types' MarshalJSON wrote: the same bytes (FuzzMarshalChange), a third of a
// create's CPU under --state before.
func appendChange(b []byte, c *state.Change) ([]byte, error) {
	if c.Deployment == nil || c.Load != nil || c.Domain != nil || c.DomainDeleted != "" || c.Detaching != nil ||
		c.Token != nil || c.Revoked != "" || c.File != "" || len(c.Content) > 0 {
		j, err := json.Marshal(c)
		if err != nil {
			return b, err
		}
		return append(b, j...), nil
	}
	b = append(b, `{"deployment":`...)
	b = state.AppendDeploymentJSON(b, c.Deployment)
	if c.Project != nil {
		p, err := c.Project.MarshalJSON() // compact and escaped as json.Marshal leaves it
		if err != nil {
			return b, err
		}
		b = append(append(b, `,"project":`...), p...)
	}
	return append(b, '}'), nil
}

// logContents is what a change log holds.
type logContents struct {
	changes []state.Change // those numbered after the snapshot, in order
	last    uint64         // the highest seq read (0: none)
	good    int64          // bytes up to the end of the last whole record
	torn    bool           // bytes after good are not a whole record (a crash mid-append)
}

// parseLog reads the records of b, keeping the changes numbered after snapSeq. It stops
// at the first record that is cut short or fails its check: appends are in order and
// each batch is synced before it is acknowledged, so only the tail can be torn.
func parseLog(b []byte, snapSeq uint64) logContents {
	var lc logContents
	for off := 0; off < len(b); {
		if len(b)-off < recordHeader {
			lc.torn = true
			break
		}
		h := b[off : off+recordHeader]
		n := int(binary.LittleEndian.Uint32(h[0:]))
		seq := binary.LittleEndian.Uint64(h[8:])
		if n > maxRecord || n > len(b)-off-recordHeader {
			lc.torn = true
			break
		}
		payload := b[off+recordHeader : off+recordHeader+n]
		if crc32.Update(crc32.Checksum(h[8:], crcTable), crcTable, payload) != binary.LittleEndian.Uint32(h[4:]) {
			lc.torn = true
			break
		}
		var c state.Change
		if json.Unmarshal(payload, &c) != nil {
			lc.torn = true
			break
		}
		off += recordHeader + n
		lc.good = int64(off)
		if seq > lc.last {
			lc.last = seq
		}
		if seq > snapSeq {
			c.Seq = seq
			lc.changes = append(lc.changes, c)
		}
	}
	return lc
}
