package harness

import (
	"slices"
	"testing"
)

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

// kilo's permission dialog is rejected by Escape then Enter (its Escape
// alone opens a reject stage, whose Escape goes back), so an interrupt
// there sends those, and at the reject stage Enter; every other
// harness's interrupt keys answer its dialogs, and no key is read for a
// screen with no dialog.
func TestDialogCancelKeysOnRealCaptures(t *testing.T) {
	kilo := screens["kilo"]
	if !kilo.CancelsDialogs() {
		t.Fatal("kilo's dialogs need no cancel keys of their own")
	}
	for file, want := range map[string][]Key{
		"permission":              {KeyEscape, KeyEnter},
		"permission-reject-stage": {KeyEnter},
		"busy":                    nil,
	} {
		st := kilo.ReadScreen(capture(t, "kilo", file))
		if got := kilo.DialogCancel(st.Dialog); !slices.Equal(got, want) {
			t.Errorf("kilo/%s: cancel keys %v, want %v", file, got, want)
		}
	}
	for name, sig := range screens {
		if name != "kilo" && sig.CancelsDialogs() {
			t.Errorf("%s has dialog cancel keys, verified for kilo only", name)
		}
	}
}

// kilo's held "/..." is cleared with C-u, as any text: its popup's Enter
// completed /nosuchcmd to /kilo-config:skill, which Escape left held and
// C-u emptied (real captures); opencode's popup eats C-u, so it keeps
// Escape.
func TestKiloClearsASlashCommandWithCtrlU(t *testing.T) {
	kilo := screens["kilo"]
	st := kilo.ReadScreen(capture(t, "kilo", "slash-completed"))
	if st.Composer != ComposerHolding || st.HeldText() != "/kilo-config:skill" {
		t.Fatalf("slash-completed: composer %v holding %q", st.Composer, st.HeldText())
	}
	if keys := kilo.Clear.Presses(st.Held); len(keys) == 0 || slices.Contains(keys, KeyEscape) || keys[0] != KeyCtrlU {
		t.Errorf("kilo clears a held slash command with %v, want C-u and no Escape", keys)
	}
	for _, f := range []string{"slash-completed-after-ctrl-u", "slash-popup-after-ctrl-u"} {
		if st := kilo.ReadScreen(capture(t, "kilo", f)); st.Composer != ComposerEmpty {
			t.Errorf("%s: composer %v, want empty", f, st.Composer)
		}
	}
	if st := kilo.ReadScreen(capture(t, "kilo", "slash-completed-after-escape")); st.Composer != ComposerHolding {
		t.Errorf("slash-completed-after-escape: composer %v, want the command still held", st.Composer)
	}
	if keys := screens["opencode"].Clear.Presses([]string{"/help"}); !slices.Equal(keys, []Key{KeyEscape}) {
		t.Errorf("opencode clears a held slash command with %v, want Escape", keys)
	}
}
