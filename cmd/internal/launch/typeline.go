package launch

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"time"

	"fmctl/backends"
	"fmctl/cmd/internal/deliver"
	"fmctl/cmd/internal/press"
	"fmctl/harness"
	"fmctl/state"
)

// Readiness is what the launch wait saw: confirmed, starting, or blocked at
// a named dialog.
type Readiness struct{ Ready, Dialog string }

// Type types the incarnation's launch line into the endpoint's shell and
// waits, bounded, for the classifier to see the agent and then, where the
// harness has verified screen signatures, for its screen to show it ready.
// A harness that takes its prompt through the composer gets it once it is
// up. A line the shell has already finished (the binary missing, the
// agent gone at once) ends the wait with a *LaunchFailed.
func (l Launcher) Type(ctx context.Context, be backends.Backend, ability harness.Backend, ep backends.Endpoint, h harness.Harness, inc Incarnation, brief string) (Readiness, error) {
	ready, err := l.typeLine(ctx, be, ability, ep, h, inc, brief)
	var lf *LaunchFailed
	if errors.As(err, &lf) {
		// Where the caller's own shell finds the program is the pin that
		// mends a pane whose login shell set PATH anew.
		lf.Pins = inc.pins
		if l.Env != nil {
			lf.Found = onPath(l.Env("PATH"), path.Base(lf.Binary))
		}
	}
	return ready, err
}

func (l Launcher) typeLine(ctx context.Context, be backends.Backend, ability harness.Backend, ep backends.Endpoint, h harness.Harness, inc Incarnation, brief string) (Readiness, error) {
	if err := state.Inject("launch"); err != nil {
		return Readiness{}, err
	}
	w := launchWatch{be: be, ep: ep, line: inc.Line, bin: inc.Binary, reported: inc.launchTurnReported}
	if sl, ok := be.(backends.ShellLiner); ok {
		prompt, err := l.typeClean(ctx, be, sl, ep, inc.Line)
		if err != nil {
			return Readiness{}, err
		}
		w.prompt = prompt
	} else if err := be.SendText(ctx, ep, inc.Line); err != nil {
		return Readiness{}, fmt.Errorf("type the launch command into %s: %w", ep.Target, err)
	}
	// No gate: the Enter goes to the shell the line was typed into.
	if _, err := (press.Keys{Backend: be, Endpoint: ep}).Press(ctx, harness.KeyEnter, press.Opts{}); err != nil {
		return Readiness{}, fmt.Errorf("submit the launch command in %s: %w", ep.Target, err)
	}
	if !ability.Classifier {
		return Readiness{Ready: "starting"}, nil
	}
	deadline := time.Now().Add(l.launchWait())
	stopWaiting := l.Print.Waiting(fmt.Sprintf("waiting for %s to come up at %s", h.Name, ep.Target), deadline)
	defer stopWaiting()
	up, err := l.waitAlive(ctx, w, deadline)
	if err != nil {
		return Readiness{}, err
	}
	if !up {
		return Readiness{Ready: "starting"}, nil
	}
	if ready, err := l.waitScreen(ctx, w, h, deadline); err != nil || ready.Ready != "confirmed" {
		return ready, err
	}
	if h.Launch.PromptVia == harness.PromptComposer {
		res := deliver.Submit(ctx, be, ep, harness.BriefPrompt(brief), deliver.DefaultOptions())
		if res.Verdict != deliver.Submitted {
			return Readiness{}, fmt.Errorf("%s started, but its brief prompt was not confirmed submitted (verdict=%s)", h.Name, res.Verdict)
		}
	}
	return Readiness{Ready: "confirmed"}, nil
}

// launchWatch is what the launch wait needs to tell a launch line its
// shell has finished from one it has not run yet: the line, the program
// it runs, and the prompt it was typed after.
type launchWatch struct {
	be                backends.Backend
	ep                backends.Endpoint
	line, prompt, bin string
	// reported: the agent's own hooks report its launch turn
	// (Incarnation.launchTurnReported).
	reported func() bool
}

// ended reads the screen of an endpoint whose shell is in the foreground
// for the proof that the launch line already ran and ended.
func (w launchWatch) ended(ctx context.Context) *LaunchFailed {
	scr, err := w.be.Capture(ctx, w.ep)
	if err != nil {
		return nil
	}
	return shellBack(scr.Lines, w.line, w.prompt, w.bin)
}

// waitAlive waits, until deadline, for the classifier to see the agent at
// the endpoint; up is false while a shell there still waits for it.
func (l Launcher) waitAlive(ctx context.Context, w launchWatch, deadline time.Time) (up bool, err error) {
	be, ep := w.be, w.ep
	for {
		obs := be.AgentState(ctx, ep)
		if obs.State == backends.StateAlive {
			return true, nil
		}
		if obs.State == backends.StateDead {
			if failed := w.ended(ctx); failed != nil {
				return false, failed
			}
		}
		if obs.State == backends.StateMissing {
			return false, fmt.Errorf("the endpoint %s disappeared while the agent was starting", ep.Target)
		}
		if time.Now().After(deadline) {
			// Only a shell still waiting for the agent is "starting"; any
			// other process there is not the agent that was launched, and
			// calling it a replacement in progress would hide that.
			if obs.State != backends.StateDead {
				return false, fmt.Errorf("the agent is not at the endpoint it was launched at: %s reads '%s' (%s) after %s", ep.Target, obs.State, obs.Detail, l.launchWait())
			}
			return false, nil
		}
		if backends.Sleep(ctx, l.poll()) != nil {
			return false, nil
		}
	}
}

// waitScreen waits, until deadline, for a harness with verified screen
// signatures to show itself ready: its composer drawn, no blocking dialog,
// no not-ready mark, and where the harness draws its composer early (codex,
// gemini), its launch prompt's turn seen on the screen or reported by the
// agent's own hooks, whichever comes first: opencode and kilo draw the
// turn's mark only once their record holds the prompt and their hooks
// have reported it. A process alive is not enough:
// real CLIs run for seconds before they draw a composer. A dialog is
// reported at once, with nothing typed into it. An agent that exits
// before it is ready (its shell back in front, the line ended) is a
// *LaunchFailed.
func (l Launcher) waitScreen(ctx context.Context, w launchWatch, h harness.Harness, deadline time.Time) (Readiness, error) {
	sig, ok := h.Screen()
	if !ok {
		return Readiness{Ready: "confirmed"}, nil
	}
	for {
		if scr, err := w.be.Capture(ctx, w.ep); err == nil {
			st := sig.ReadScreen(launchedRows(scr.Lines, w.line))
			if st.Dialog != "" {
				return Readiness{Ready: "blocked", Dialog: st.Dialog}, nil
			}
			if st.Launched(sig) || (st.Ready() && w.reported != nil && w.reported()) {
				return Readiness{Ready: "confirmed"}, nil
			}
			if w.be.AgentState(ctx, w.ep).State == backends.StateDead {
				if failed := shellBack(scr.Lines, w.line, w.prompt, w.bin); failed != nil {
					return Readiness{}, failed
				}
			}
		}
		if time.Now().After(deadline) || backends.Sleep(ctx, l.poll()) != nil {
			return Readiness{Ready: "starting"}, nil
		}
	}
}

// launchedRows is the part of a screen the launched agent drew: the rows
// below its launch line. In a relaunch the pane still shows the old
// agent above that line (gemini draws inline, and 0.52 took seconds to
// draw anything under load), and the old agent's composer and launch
// prompt there would read as the new one ready. A launch line no longer on
// the screen was cleared or scrolled off by the new agent: all is its own.
func launchedRows(rows []string, line string) []string {
	return rowsAfter(rows, line)
}

// WaitPath polls the endpoint's current directory until it is want, bounded
// by FM_SPAWN_PATH_WAIT, and returns the last directory it read.
func (l Launcher) WaitPath(ctx context.Context, be backends.Backend, ep backends.Endpoint, want string) (string, bool) {
	deadline := time.Now().Add(l.pathWait())
	last := ""
	for {
		if p, err := be.CurrentPath(ctx, ep); err == nil {
			last = p
			if backends.SameDirKey(p) == backends.SameDirKey(want) {
				return p, true
			}
		}
		if time.Now().After(deadline) {
			return last, false
		}
		if backends.Sleep(ctx, l.poll()) != nil {
			return last, false
		}
	}
}

// typeAttempts is how many times the launch line is typed into a shell
// whose input line did not then read as it: a shell that came back from
// its agent under load may start its line editor only after the line was
// typed, when the terminal had already echoed it, and the editor's redraw
// beside that echo is garbled (seen in CI: an opencode relaunch left the
// task with no agent). Each attempt clears the line and proves it anew.
const typeAttempts = 2

// typeClean empties the shell's input line, types the launch line, and
// proves the input line then reads the prompt followed by exactly the
// launch line, so leftover or late text is never glued to it. On any
// doubt it clears the line again and, after the last attempt, refuses
// before Enter.
func (l Launcher) typeClean(ctx context.Context, be backends.Backend, sl backends.ShellLiner, ep backends.Endpoint, line string) (prompt string, err error) {
	for range typeAttempts {
		if prompt, err = l.typeCleanOnce(ctx, be, sl, ep, line); err == nil || !errors.Is(err, errNotTheLine) || ctx.Err() != nil {
			return prompt, err
		}
	}
	return "", err
}

// errNotTheLine marks a typed launch line the shell's input line never
// showed whole: worth typing once more, unlike a shell that cannot be read
// or text glued before the line.
var errNotTheLine = errors.New("nothing was launched")

func (l Launcher) typeCleanOnce(ctx context.Context, be backends.Backend, sl backends.ShellLiner, ep backends.Endpoint, line string) (prompt string, err error) {
	before, err := sl.ShellRows(ctx, ep)
	if err != nil {
		return "", fmt.Errorf("read the shell line of %s: %w", ep.Target, err)
	}
	if err := sl.ClearShellLine(ctx, ep); err != nil {
		return "", err
	}
	if err := be.SendText(ctx, ep, line); err != nil {
		return "", fmt.Errorf("type the launch command into %s: %w", ep.Target, err)
	}
	deadline := time.Now().Add(l.pathWait())
	for {
		rows, err := sl.ShellRows(ctx, ep)
		got, span := inputLine(rows, line)
		if err == nil && span > 0 {
			// What precedes the launch line must be the prompt the
			// line began with (or anything, in a shell that had drawn
			// nothing yet).
			prompt := strings.TrimRight(strings.TrimSuffix(got, line), " ")
			if len(before) > 0 && !beganWith(before, prompt, span) {
				_ = sl.ClearShellLine(ctx, ep)
				if !promptBegun(before, prompt, span) {
					// The shell drew its prompt only after the read
					// before the line (over the screen an old agent
					// left, under load): typed again, on a prompt now
					// read before it.
					return "", fmt.Errorf("the shell line in %s reads %q: the shell drew %q after the line was begun; cleared it, %w", ep.Target, got, prompt, errNotTheLine)
				}
				// Not typed again: text arrived from elsewhere (a user at
				// the pane), and a launch must not fight them for it.
				return "", fmt.Errorf("the shell line in %s reads %q: %q came before the launch line, not the prompt it began with; cleared it, nothing was launched", ep.Target, got, prompt)
			}
			return prompt, nil
		}
		if time.Now().After(deadline) || backends.Sleep(ctx, l.poll()) != nil {
			_ = sl.ClearShellLine(ctx, ep)
			return "", fmt.Errorf("the shell line in %s reads %q, not the launch line; cleared it, %w", ep.Target, got, errNotTheLine)
		}
	}
}

// maxInputRows bounds how many screen rows an input line may span.
const maxInputRows = 40

// inputLine finds the input line ending in line among the bottom rows,
// joining as many as it spans, and returns it with that count; otherwise
// it returns the last row and 0.
func inputLine(rows []string, line string) (string, int) {
	for n := 1; n <= len(rows) && n <= maxInputRows; n++ {
		if joined := strings.Join(rows[len(rows)-n:], ""); strings.HasSuffix(joined, line) {
			return joined, n
		}
	}
	if len(rows) == 0 {
		return "", 0
	}
	return rows[len(rows)-1], 0
}

// beganWith reports whether the input line before the clear (its bottom
// rows, joined, spanning at most span rows) started with prompt.
func beganWith(rows []string, prompt string, span int) bool {
	for n := 1; n <= len(rows) && n <= span; n++ {
		if strings.HasPrefix(strings.Join(rows[len(rows)-n:], ""), prompt) {
			return true
		}
	}
	return false
}

// promptBegun reports whether one of the rows the launch line spans, as
// read before it was typed, is the beginning of prompt, the text the input
// line now shows before the launch line: the shell had drawn its prompt,
// and the rest of that text arrived from elsewhere. A blank row, or an
// old agent's leftover screen, begins no prompt: the shell drew it later.
func promptBegun(rows []string, prompt string, span int) bool {
	for n := 1; n <= len(rows) && n <= span; n++ {
		if row := strings.TrimRight(rows[len(rows)-n], " "); row != "" && strings.HasPrefix(prompt, row) {
			return true
		}
	}
	return false
}

// MarkLaunchPrompt records, before the launch line is typed, that it
// submits the launch prompt: a submit as fm-send's is (the send ledger's
// stamp), and the typed record's text, so a composer that draws the
// prompt before the agent takes it (kilo, loaded) reads as the agent still
// starting, never as a person's draft.
func MarkLaunchPrompt(store state.Store, id, brief string, at time.Time) {
	_ = store.StampSubmitted(id, at)
	_ = store.RecordTyped(id, state.Typed{At: at.UnixNano(), Digest: deliver.ComposerDigest(harness.BriefPrompt(brief)), Submitted: true, Launch: true})
}
