package state

import (
	"strconv"
	"strings"
	"time"
)

// maxInputHold bounds how long a holder of the input lock waits for a gap
// an earlier holder asked for, whatever the lock file says.
const maxInputHold = time.Second

// HoldInputUntil makes the next holder of this input lock wait until t
// before it sends anything. A verb that must leave a gap after its last key
// (an Escape followed at once by text reads as Alt+<char>) records the gap's
// end here instead of sleeping through it: the gap only matters to the next
// input, and every input to the task takes this lock first. The stamp lives
// in the lock file, which only the lock's holder writes.
func (l *Lock) HoldInputUntil(t time.Time) error {
	stamp := []byte(strconv.FormatInt(t.UnixNano(), 10) + "\n")
	if _, err := l.f.WriteAt(stamp, 0); err != nil {
		return err
	}
	return l.f.Truncate(int64(len(stamp)))
}

// awaitHold waits out the rest of a gap the previous holder recorded.
func (l *Lock) awaitHold() {
	buf := make([]byte, 32)
	n, _ := l.f.ReadAt(buf, 0)
	ns, err := strconv.ParseInt(strings.TrimSpace(string(buf[:n])), 10, 64)
	if err != nil {
		return
	}
	if d := min(time.Until(time.Unix(0, ns)), maxInputHold); d > 0 {
		time.Sleep(d)
	}
}
