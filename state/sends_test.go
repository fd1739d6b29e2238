package state

import "testing"

// MarkSends changes the named messages' verdict and nothing else of the
// ledger: the other sends, their order and their fields stay.
func TestMarkSendsChangesOnlyTheNamed(t *testing.T) {
	s := Store{Dir: t.TempDir()}
	for _, m := range []Send{
		{MessageID: "m20261207T090000-00000001", Verdict: "queued", Harness: "cline", Gen: "g1", Length: 5},
		{MessageID: "m20261207T090000-00000002", Verdict: "queued", Harness: "cline", Gen: "g1"},
		{MessageID: "m20261207T090000-00000003", Verdict: "unrecorded", Harness: "cline", Gen: "g1"},
	} {
		if err := s.AddSend("t1", m); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.MarkSends("t1", []string{"m20261207T090000-00000001", "m20261207T090000-00000003"}, VerdictUntaken); err != nil {
		t.Fatal(err)
	}
	got, err := s.Sends("t1")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{VerdictUntaken, "queued", VerdictUntaken}
	if len(got) != len(want) {
		t.Fatalf("ledger holds %d sends, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		if got[i].Verdict != w {
			t.Errorf("send %d (%s): verdict %q, want %q", i, got[i].MessageID, got[i].Verdict, w)
		}
	}
	if got[0].Length != 5 || got[0].Gen != "g1" || got[0].Harness != "cline" {
		t.Errorf("MarkSends lost a field of the marked send: %+v", got[0])
	}
}
