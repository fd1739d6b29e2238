package control

import (
	"strconv"
	"time"

	"fmctl/backends"
	"fmctl/cmd/internal/fault"
	"fmctl/cmd/internal/lifecycle"
	"fmctl/cmd/internal/task"
	"fmctl/harness/records"
)

// attentionStalled is the attention word of a busy agent that shows no
// progress: its turn may hang, or wait out a back-off that never ends.
const attentionStalled = "stalled"

// progressSigns are the signs of a busy agent's progress fmctl can read
// without keeping anything between calls. The screen is not one: its
// spinner and timer change every frame whether the turn moves or not.
type progressSigns struct {
	Record time.Time // the agent's own record last written; zero: unknown
	Report time.Time // the agent's newest report of this incarnation; zero: none
}

// stallView is the judgement: Stalled with how long nothing moved.
type stallView struct {
	Stalled bool
	For     time.Duration
}

// judgeStall calls a busy agent stalled once neither its record nor its
// reports moved for after. Only the record can say a turn is quiet: the
// reports mark a turn's edges, not its steps, so without the record the
// agent is not judged at all (unknown stays unknown, never stalled).
func judgeStall(word string, p progressSigns, now time.Time, after time.Duration) stallView {
	if word != actBusy || after <= 0 || p.Record.IsZero() {
		return stallView{}
	}
	last := p.Record
	if p.Report.After(last) {
		last = p.Report
	}
	if quiet := now.Sub(last); quiet >= after {
		return stallView{Stalled: true, For: quiet}
	}
	return stallView{}
}

// stallOf judges the agent status, list or wait has just read as act. Only
// a busy agent's record is looked at (one stat per file), so an idle fleet
// costs nothing more.
func stallOf(t *task.Target, obs backends.Observation, word string, now time.Time, after time.Duration) stallView {
	if word != actBusy || after <= 0 {
		return stallView{}
	}
	var p progressSigns
	if r, ok := t.AgentRecord(obs); ok {
		if w, ok := r.(records.Written); ok {
			if at, err := w.LastWrite(); err == nil {
				p.Record = at
			}
		}
	}
	if a, ok := lifecycle.Activity(t); ok {
		p.Report = a.At
	}
	return judgeStall(word, p, now, after)
}

// facts are the stall's key=value facts: attention=stalled and how long,
// in whole seconds (stalled_for=612s; JSON stalled_for_s: 612); none when
// the agent is not stalled.
func (s stallView) facts() []fault.Fact {
	if !s.Stalled {
		return nil
	}
	secs := int(s.For / time.Second)
	return []fault.Fact{
		fault.Str("attention", attentionStalled),
		{Key: "stalled_for_s", Token: "stalled_for", Text: formatSeconds(secs), Value: secs},
	}
}

// formatSeconds is seconds as the text line's durations read (waited=1.25s).
func formatSeconds(secs int) string { return strconv.Itoa(secs) + "s" }
