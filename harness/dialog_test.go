package harness

import "testing"

// Every dialog an agent waits at is read off a real capture of it, with
// what it waits for, and with the keys that answer it named for fm-send's
// refusal; an overlay the user opened waits for nothing.
func TestWaitingDialogsOnRealCaptures(t *testing.T) {
	cases := []struct {
		h, file, dialog, waits string
	}{
		{"claude", "permission-dialog", "permission", WaitPermission},
		{"claude", "help", "help", ""},
		{"claude", "esc-esc-empty", "rewind", ""},
		{"codex", "ctrl-c-busy", "task-running", ""},
		{"codex", "permission-dialog", "permission", WaitPermission},
		{"gemini", "rewind-dialog", "rewind", ""},
		{"gemini", "permission-dialog", "permission", WaitPermission},
		{"opencode", "after-help", "help", ""},
		{"opencode", "permission-dialog", "permission", WaitPermission},
		{"kilo", "help-dialog", "help", ""},
		{"kilo", "permission", "permission", WaitPermission},
		{"kilo", "permission-reject-stage", "permission-reject", WaitPermission},
	}
	for _, c := range cases {
		t.Run(c.h+"/"+c.file, func(t *testing.T) {
			sig := screens[c.h]
			st := sig.ReadScreen(capture(t, c.h, c.file))
			d, ok := sig.Dialog(st.Dialog)
			if !ok || d.Name != c.dialog || d.Waits != c.waits {
				t.Fatalf("read dialog %q (waits %q), want %q waiting for %q", st.Dialog, d.Waits, c.dialog, c.waits)
			}
			if st.Ready() {
				t.Fatalf("ready at the %s dialog: fm-send would type into it", c.dialog)
			}
			if d.Waits != "" && d.Answer == "" {
				t.Fatalf("the %s dialog names no key that answers it", c.dialog)
			}
		})
	}
}

// A screen with no dialog on it waits for nothing, whatever a transcript
// above the composer says.
func TestNoWaitingDialogOffDialogCaptures(t *testing.T) {
	for _, c := range []struct{ h, file string }{
		{"claude", "busy"}, {"claude", "composer-text"}, {"codex", "busy"}, {"opencode", "busy"},
		// a relaunched opencode's home screen, its tip the help text
		{"opencode", "home-tip"},
		{"pi", "busy"}, {"gemini", "yolo-busy"}, {"kilo", "busy"}, {"kilo", "idle"},
	} {
		sig := screens[c.h]
		if st := sig.ReadScreen(capture(t, c.h, c.file)); st.Dialog != "" {
			t.Errorf("%s/%s: read a %q dialog", c.h, c.file, st.Dialog)
		}
	}
}
