package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// maxWaitSeconds bounds a wait (a day): longer is a typo, not a wait.
const maxWaitSeconds = 24 * 60 * 60

// WhenReadyWait bounds fm-send --when-ready without --timeout: long
// enough for a CLI's own retry schedule (pi's three attempts with growing
// delays), short enough that a back-off that never ends does not hold the
// caller forever.
const WhenReadyWait = 5 * time.Minute

// ParseWait reads a wait: seconds ("0.5", the original toolkit's form) or a
// Go duration ("500ms"), at least zero and at most a day.
func ParseWait(v string) (time.Duration, error) {
	v = strings.TrimSpace(v)
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		// NaN, infinities and values past time.Duration's range would wrap
		// to a negative wait, making every deadline already past.
		if !(f >= 0) || f > maxWaitSeconds {
			return 0, fmt.Errorf("not a wait between 0 and %d seconds", maxWaitSeconds)
		}
		return time.Duration(f * float64(time.Second)), nil
	}
	if d, err := time.ParseDuration(v); err == nil && d >= 0 && d <= maxWaitSeconds*time.Second {
		return d, nil
	}
	return 0, fmt.Errorf("not a wait: give seconds (2.5) or a Go duration (500ms, 1m30s) up to 24h")
}
