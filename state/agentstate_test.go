package state

import (
	"testing"
	"time"
)

// A prompt starts a turn and every later report of the same incarnation
// carries it on, through the file; another incarnation's turn is not
// carried.
func TestAgentStateCarriesTheTurnItBelongsTo(t *testing.T) {
	t0 := time.Date(2026, 12, 4, 13, 0, 0, 5, time.UTC)
	busy := AgentState{}.Next(ActivityBusy, "g1", "prompt-submitted", "claude", t0)
	if !busy.Turn.Equal(t0) {
		t.Fatalf("a prompt's report has turn %v, want %v", busy.Turn, t0)
	}
	idle := busy.Next(ActivityIdle, "g1", "turn-finished", "claude", t0.Add(time.Second))
	if !idle.Turn.Equal(t0) {
		t.Fatalf("the turn's end has turn %v, want %v", idle.Turn, t0)
	}
	back, err := ParseAgentState(idle.Bytes())
	if err != nil || !back.Turn.Equal(t0) || back.State != ActivityIdle {
		t.Fatalf("round trip: %+v, %v", back, err)
	}
	if next := idle.Next(ActivityReady, "g2", "session-start", "claude", t0.Add(2*time.Second)); !next.Turn.IsZero() {
		t.Fatalf("a new incarnation inherited turn %v", next.Turn)
	}
	if _, err := ParseAgentState([]byte("state=idle\ngen=g1\nturn=soon\n")); err == nil {
		t.Fatal("a turn that is not RFC 3339 was accepted")
	}
}
