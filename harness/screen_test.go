package harness

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// capture reads a committed real capture (capture-pane -p) as screen rows.
func capture(t *testing.T, h, name string) []string {
	t.Helper()
	sig, ok := screens[h]
	if !ok {
		t.Fatalf("no screen signatures for %s", h)
	}
	data, err := os.ReadFile(filepath.Join("..", "tests", "captures", h+"-"+sig.Release, name+".txt"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimRight(string(data), "\n"), "\n")
}

// Every signature is read against the real capture it came from.
func TestScreenSignaturesOnRealCaptures(t *testing.T) {
	cases := []struct {
		h, file  string
		composer ComposerState
		held     string // first held row
		busy     bool
		dialog   string
		ready    bool // Ready()
		launched bool // Launched()
	}{
		{"claude", "composer-empty-after-400", ComposerEmpty, "", false, "", true, true},
		{"claude", "composer-text", ComposerHolding, "hello one", false, "", true, true},
		{"claude", "busy", ComposerEmpty, "", true, "", true, true},
		{"claude", "busy-queued", ComposerEmpty, "", true, "", true, true},
		{"claude", "after-interrupt-2", ComposerHolding, "queued while busy", false, "", true, true},
		{"claude", "paste-enter-lost", ComposerHolding, "pasted race 30696", false, "", true, true},
		{"claude", "help", ComposerAbsent, "", false, "help", false, false},
		{"claude", "esc-esc-empty", ComposerAbsent, "", false, "rewind", false, false},
		{"codex", "composer-empty-after-400", ComposerEmpty, "", false, "", true, true},
		{"codex", "composer-text", ComposerHolding, "hello one", false, "", true, true},
		{"codex", "help", ComposerHolding, "/help", false, "", true, true},
		{"codex", "busy", ComposerEmpty, "", true, "", true, true},
		// The launch prompt's turn over between two looks: its footer.
		{"codex", "launched-turn-over", ComposerEmpty, "", false, "", true, true},
		{"codex", "busy-queued", ComposerEmpty, "", true, "", true, true},
		{"codex", "ctrl-c-busy", ComposerAbsent, "", false, "task-running", false, false},
		{"codex", "esc-esc-idle", ComposerAbsent, "", false, "transcript", false, false},
		{"opencode", "composer-empty", ComposerEmpty, "", false, "", true, false}, // home screen: no turn yet
		{"opencode", "composer-text", ComposerHolding, "hello one", false, "", true, false},
		{"opencode", "composer-multiline", ComposerHolding, "[Pasted ~3 lines]", false, "", true, true},
		{"opencode", "busy", ComposerEmpty, "", true, "", true, true},
		{"opencode", "busy-after-one-escape", ComposerEmpty, "", true, "", true, true},
		{"opencode", "after-help", ComposerAbsent, "", false, "help", false, false}, // the Help dialog is up
		{"opencode", "slash-unknown-typed", ComposerHolding, "/nosuchcmd", false, "", true, true},
		{"opencode", "slash-help-popup", ComposerHolding, "/help", false, "", true, true},
		{"opencode", "launch-prompt-held", ComposerHolding, "Read the brief at /tmp/fmagents-opencode-2979118695/fmhome/data/t1/", false, "", true, false},
		{"opencode", "busy-wrapped-branch", ComposerEmpty, "", true, "", true, true},
		{"kilo", "idle", ComposerEmpty, "", false, "", true, false}, // home screen: no turn yet
		{"kilo", "after-reply", ComposerEmpty, "", false, "", true, true},
		{"kilo", "pasted", ComposerHolding, "line one", false, "", true, true},
		{"kilo", "busy", ComposerEmpty, "", true, "", true, true},
		{"kilo", "busy-queued", ComposerEmpty, "", true, "", true, true},
		{"kilo", "busy-after-one-escape", ComposerEmpty, "", true, "", true, true},
		{"kilo", "interrupted", ComposerEmpty, "", false, "", true, true},
		{"kilo", "slash-popup", ComposerHolding, "/help", false, "", true, true},
		{"kilo", "help-dialog", ComposerAbsent, "", false, "help", false, false},
		{"pi", "composer-empty", ComposerEmpty, "", false, "", true, true},
		{"pi", "composer-text", ComposerHolding, "hello one", false, "", true, true},
		{"pi", "composer-multiline", ComposerHolding, "line one", false, "", true, true},
		{"pi", "busy", ComposerEmpty, "", true, "", true, true},
		// Its retry loader alone, no "Working...": a 429 in back-off.
		{"pi", "retrying-backoff", ComposerEmpty, "", true, "", true, true},
		{"pi", "idle-text-after-escape", ComposerHolding, "some text", false, "", true, true},
		{"gemini", "composer-empty", ComposerEmpty, "", false, "", true, false},
		{"gemini", "composer-text", ComposerHolding, "hello one", false, "", true, false},
		{"gemini", "yolo-composer-after-initial-prompt", ComposerEmpty, "", false, "", true, true},
		{"gemini", "yolo-busy", ComposerEmpty, "", true, "", true, true},
		{"gemini", "busy-quit-refused", ComposerHolding, "/quit", true, "", true, true},
		{"gemini", "rewind-dialog", ComposerAbsent, "", false, "rewind", false, false},
		{"gemini", "paste-collapsed", ComposerHolding, "[Pasted Text: 4096 chars]", false, "", true, true},
		{"gemini", "escape-then-quit-read-as-alt", ComposerHolding, "quit", true, "", true, true},
		{"pi", "paste-collapsed", ComposerHolding, "[paste #1 4096 chars]", false, "", true, true},
		{"gemini", "after-double-escape-multiline", ComposerEmpty, "", false, "", true, true},
		{"qwen", "composer-empty", ComposerEmpty, "", false, "", true, true},
		{"qwen", "composer-text", ComposerHolding, "hello one", false, "", true, true},
		{"qwen", "composer-multiline", ComposerHolding, "line one", false, "", true, true},
		{"qwen", "busy", ComposerEmpty, "", true, "", true, true},
		{"qwen", "busy-queued", ComposerEmpty, "", true, "", true, true},
		{"qwen", "after-interrupt-restored", ComposerHolding, "queued while busy", false, "", true, true},
		{"qwen", "after-double-escape-multiline", ComposerEmpty, "", false, "", true, true},
		{"qwen", "permission-dialog", ComposerAbsent, "", false, "permission", false, false},
		{"qwen", "rewind-dialog", ComposerAbsent, "", false, "rewind", false, false},
		{"qwen", "basic/13-slash-help", ComposerAbsent, "", false, "help", false, false},
		{"qwen", "interrupts/30-interrupt-streaming-3-interrupted", ComposerEmpty, "", false, "", true, true},
		{"qwen", "permission/03-waiting-at-permission-dialog", ComposerAbsent, "", false, "permission", false, false},
		{"copilot", "composer-empty", ComposerEmpty, "", false, "", true, true},
		{"copilot", "composer-text", ComposerHolding, "hello one", false, "", true, true},
		{"copilot", "composer-multiline", ComposerHolding, "line one", false, "", true, true},
		{"copilot", "paste-collapsed", ComposerHolding, "[Paste #1 - 30 lines]", false, "", true, true},
		{"copilot", "busy", ComposerEmpty, "", true, "", true, true},
		{"copilot", "busy-after-one-escape", ComposerEmpty, "", true, "", true, true},
		{"copilot", "busy-streaming", ComposerEmpty, "", true, "", true, true},
		{"copilot", "busy-holding", ComposerHolding, "typed while busy", true, "", true, true},
		{"copilot", "busy-exit", ComposerEmpty, "", true, "", true, true},
		{"copilot", "after-double-escape", ComposerHolding, "please fmhang now", false, "", true, true},
		{"copilot", "after-ctrlc-hang", ComposerEmpty, "", false, "", true, true},
		{"copilot", "after-clear-multiline", ComposerEmpty, "", false, "", true, true},
		{"copilot", "trust-dialog", ComposerAbsent, "", false, "trust", false, false},
		{"copilot", "permission-dialog", ComposerAbsent, "", false, "permission", false, false},
		{"copilot", "basic/13-slash-help", ComposerAbsent, "", false, "help", false, false},
		// Before the first turn the composer is drawn centred under the
		// logo, not read as the composer; the launch prompt's turn moves it
		// to column 0.
		{"cline", "composer-empty", ComposerAbsent, "", false, "", false, false},
		{"cline", "composer-text", ComposerAbsent, "", false, "", false, false},
		{"cline", "composer-multiline", ComposerHolding, "line one", false, "", true, true},
		{"cline", "busy", ComposerEmpty, "", true, "", true, true},
		{"cline", "busy-hang", ComposerEmpty, "", true, "", true, true},
		{"cline", "busy-queued", ComposerEmpty, "", true, "", true, true},
		{"cline", "after-interrupt", ComposerEmpty, "", false, "", true, false}, // the answer's "* " scrolled off
		{"cline", "after-interrupt-queued", ComposerEmpty, "", false, "", true, true},
		{"cline", "idle-queue-stranded", ComposerEmpty, "", false, "", true, true},
		// The tool's row keeps its spinner while the dialog waits.
		{"cline", "permission-dialog", ComposerAbsent, "", true, "permission", false, false},
		{"cline", "notice-dialog", ComposerAbsent, "", false, "notice", false, false},
		{"cline", "onboarding", ComposerAbsent, "", false, "sign-in", false, false},
		{"cline", "help", ComposerAbsent, "", false, "help", false, false},
	}
	for _, c := range cases {
		t.Run(c.h+"/"+c.file, func(t *testing.T) {
			sig := screens[c.h]
			st := sig.ReadScreen(capture(t, c.h, c.file))
			if st.Composer != c.composer || st.Busy != c.busy || st.Dialog != c.dialog {
				t.Fatalf("read %+v, want composer=%s busy=%v dialog=%q", st, c.composer, c.busy, c.dialog)
			}
			if c.held != "" && (len(st.Held) == 0 || st.Held[0] != c.held) {
				t.Fatalf("held %q, want first row %q", st.Held, c.held)
			}
			if st.Ready() != c.ready || st.Launched(sig) != c.launched {
				t.Fatalf("ready=%v launched=%v, want %v %v (%+v)", st.Ready(), st.Launched(sig), c.ready, c.launched, st)
			}
		})
	}
}

// The clear sequences are the verified ones, sized to what the composer holds.
func TestClearSequencesPerHarness(t *testing.T) {
	keys := func(ks []Key) string {
		var s []string
		for _, k := range ks {
			s = append(s, string(k))
		}
		return strings.Join(s, " ")
	}
	cases := []struct {
		h    string
		held []string
		want string
	}{
		{"claude", []string{"hello one"}, "End C-u C-u C-u"},
		{"codex", []string{"a", "b"}, "End C-u C-u C-u C-u C-u"},
		{"opencode", []string{"[Pasted ~3 lines]"}, "C-u C-u"},
		{"opencode", []string{"/nosuchcmd"}, "Escape"},
		{"kilo", []string{"line one", "line two", "  indented three"}, "C-u C-u C-u C-u C-u C-u C-u"},
		{"kilo", []string{"/help"}, "C-u C-u C-u"},
		{"pi", []string{"a", "b", "c"}, "C-c"},
		{"gemini", []string{"hello"}, "Escape Escape"},
		{"qwen", []string{"a", "b"}, "Escape Escape"},
		{"copilot", []string{"a", "b"}, "C-c"},
		{"cline", []string{"a", "b"}, "End C-u C-u C-u C-u C-u"},
	}
	for _, c := range cases {
		if got := keys(screens[c.h].Clear.Presses(c.held)); got != c.want {
			t.Errorf("%s clearing %q: %s, want %s", c.h, c.held, got, c.want)
		}
	}
}

// pi throws away text submitted while it waits out a retry: its loader
// then is the mark, and its ordinary turn is not.
func TestDropsInputOnRealCaptures(t *testing.T) {
	for _, c := range []struct {
		h, file string
		want    bool
	}{
		{"pi", "retrying-backoff", true},
		{"pi", "busy", false},
		{"pi", "composer-empty", false},
		{"gemini", "yolo-busy", false},
	} {
		if got := screens[c.h].ReadScreen(capture(t, c.h, c.file)).Dropping; got != c.want {
			t.Errorf("%s/%s: dropping=%v, want %v", c.h, c.file, got, c.want)
		}
	}
}

// A queue left holding a text after its turn is read only where the
// release key would submit it: an idle cline with its composer empty.
// Busy, its queue is the queue's own business; after an interrupt that
// drained it, nothing is stranded.
func TestStrandedQueueOnRealCaptures(t *testing.T) {
	for _, c := range []struct {
		h, file, want string
	}{
		{"cline", "idle-queue-stranded", "first message right after spawn fba638"},
		{"cline", "busy-queued", ""},
		{"cline", "after-interrupt-queued", ""},
		{"cline", "composer-multiline", ""},
		{"gemini", "composer-empty", ""}, // no release key
	} {
		got, ok := screens[c.h].StrandedQueue(capture(t, c.h, c.file))
		if ok != (c.want != "") || !strings.HasPrefix(got, c.want) {
			t.Errorf("%s/%s: stranded %q, %v; want %q", c.h, c.file, got, ok, c.want)
		}
	}
}

func TestARowStartMarkMatchesAtTheRowsStartOnly(t *testing.T) {
	for _, c := range []struct {
		row  string
		want bool
	}{
		{"■ Conversation interrupted", true},
		{"  ■ indented by the layout", true},
		{"■", true}, // the mark alone, its space trimmed off the row
		{"■x", false},
		{"a ■ in the middle", false},
		{"", false},
	} {
		if got := anyOn([]string{c.row}, []string{"^■ "}); got != c.want {
			t.Errorf("anyOn(%q, ^■ ) = %v, want %v", c.row, got, c.want)
		}
	}
}
