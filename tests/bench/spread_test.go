package bench

import (
	"testing"
	"time"
)

func TestPairedSpreadIsTheMiddleHalfOfTheRunsRatios(t *testing.T) {
	ms := time.Millisecond
	walls := []time.Duration{10 * ms, 20 * ms, 30 * ms, 40 * ms}
	bares := []time.Duration{10 * ms, 10 * ms, 10 * ms, 10 * ms}
	if lo, hi := pairedSpread(walls, bares); lo != 2 || hi != 4 {
		t.Fatalf("pairedSpread = %v–%v, want 2–4", lo, hi)
	}
	if lo, hi := pairedSpread(nil, nil); lo != 0 || hi != 0 {
		t.Fatalf("pairedSpread of nothing = %v–%v, want 0–0", lo, hi)
	}
}
