package control

import (
	"testing"
	"time"
)

func TestJudgeStall(t *testing.T) {
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	ago := func(d time.Duration) time.Time { return now.Add(-d) }
	const after = 10 * time.Minute
	for _, c := range []struct {
		name    string
		word    string
		p       progressSigns
		after   time.Duration
		stalled bool
		quiet   time.Duration
	}{
		{"record quiet past the limit", actBusy, progressSigns{Record: ago(11 * time.Minute)}, after, true, 11 * time.Minute},
		{"exactly at the limit", actBusy, progressSigns{Record: ago(after)}, after, true, after},
		{"record written within the limit", actBusy, progressSigns{Record: ago(9 * time.Minute)}, after, false, 0},
		{"a report newer than the record", actBusy, progressSigns{Record: ago(time.Hour), Report: ago(time.Minute)}, after, false, 0},
		{"both old: the newer counts", actBusy, progressSigns{Record: ago(time.Hour), Report: ago(20 * time.Minute)}, after, true, 20 * time.Minute},
		{"no record: unknown, never stalled", actBusy, progressSigns{Report: ago(time.Hour)}, after, false, 0},
		{"nothing known", actBusy, progressSigns{}, after, false, 0},
		{"idle is never stalled", actIdle, progressSigns{Record: ago(time.Hour)}, after, false, 0},
		{"waiting is never stalled", actWaiting, progressSigns{Record: ago(time.Hour)}, after, false, 0},
		{"unknown is never stalled", actUnknown, progressSigns{Record: ago(time.Hour)}, after, false, 0},
		{"0 turns the judgement off", actBusy, progressSigns{Record: ago(time.Hour)}, 0, false, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := judgeStall(c.word, c.p, now, c.after)
			if got.Stalled != c.stalled || got.For != c.quiet {
				t.Errorf("judgeStall = %+v; want stalled=%v for %v", got, c.stalled, c.quiet)
			}
		})
	}
}

func TestStallFacts(t *testing.T) {
	if f := (stallView{}).facts(); len(f) != 0 {
		t.Errorf("a view that is not stalled has facts %v", f)
	}
	f := stallView{Stalled: true, For: 612*time.Second + 700*time.Millisecond}.facts()
	if len(f) != 2 || f[0].Key != "attention" || f[0].Text != "stalled" ||
		f[1].Key != "stalled_for_s" || f[1].TextKey() != "stalled_for" || f[1].Text != "612s" || f[1].Value != 612 {
		t.Errorf("facts = %+v", f)
	}
}
