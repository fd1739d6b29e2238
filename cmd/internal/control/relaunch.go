package control

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"time"

	"fmctl/cmd/internal/cli"
	"fmctl/cmd/internal/fault"
	"fmctl/cmd/internal/launch"
	"fmctl/cmd/internal/lifecycle"
	"fmctl/cmd/internal/task"
	"fmctl/harness"
	"fmctl/state"
)

// relaunchTx is one relaunch transaction in flight. Every step rewrites the
// journal atomically before it acts, so a crash at any point leaves a journal
// naming the last phase entered, which `fm-control recover` settles.
type relaunchTx struct {
	c       *Controller
	t       *task.Target
	paths   state.JournalPaths
	journal state.Journal
	prof    profile
	facts   []state.Entry // checkpoint and note lines, kept through the phases
	left    string        // the old agent's daemon, left running (lifecycle.Stopped)
}

func (x *relaunchTx) enter(phase string, extra ...state.Entry) error {
	x.journal.Phase = phase
	x.journal.Extra = state.Record{Entries: append(append([]state.Entry(nil), x.facts...), extra...)}
	if err := state.WriteJournal(x.paths.Journal, x.journal); err != nil {
		return fmt.Errorf("write relaunch journal %s (phase %s): %w", x.paths.Journal, phase, err)
	}
	return nil
}

// runRelaunch replaces t's agent as one journaled transaction: every
// refusal comes before anything durable changes, and from the prior-record
// copy on, a failure in any phase is settled by rollback.
func (c *Controller) runRelaunch(ctx context.Context, t *task.Target, o RelaunchOptions) error {
	x, note, err := c.planRelaunch(ctx, t, o)
	if err != nil {
		return err
	}
	brief := t.Home.BriefPath(t.ID)
	if err := x.begin(ctx, note, brief); err != nil {
		return err
	}
	launched, err := x.replace(ctx)
	if err != nil {
		return err
	}
	out := cli.Outcome{Word: "relaunched", ID: t.ID}
	out.Add("harness", x.prof.To.Name).Add("from", x.prof.FromHarness).Add("model", x.prof.ToModel).Add("effort", x.prof.ToEffort).
		Add("backend", t.BackendName).Add("endpoint", t.Task.Record.Window()).Add("worktree", t.Endpoint.Worktree).
		Add("ready", launched.Ready).Add("phase", state.PhaseComplete)
	if x.left != "" {
		out.Add("left", x.left)
	}
	c.print.Outcome(out)
	if launched.Ready == "starting" {
		c.print.Notice("%s's replacement is in place at %s with its work at %s, and had not finished starting after %s; read its state with fm-control status %s rather than relaunching it again or tearing it down", t.ID, t.Task.Record.Window(), t.Endpoint.Worktree, lifecycle.Seconds(c.waits.Launch), t.ID)
	}
	return nil
}

// planRelaunch makes every refusal a relaunch has before it changes
// anything (Lifecycle has checked the verb row's classifier need): no torn journal, the note, the
// replacement's profile, the kind's shape, and the worktree's checkpoint.
// It returns the transaction, not yet begun, and the trimmed note.
func (c *Controller) planRelaunch(ctx context.Context, t *task.Target, o RelaunchOptions) (*relaunchTx, string, error) {
	if err := t.Store.RefuseTorn(t.ID); err != nil {
		return nil, "", err
	}
	if err := o.readNote(); err != nil {
		return nil, "", err
	}
	prof, err := c.resolveProfile(t, o)
	if err != nil {
		return nil, "", err
	}
	note := strings.TrimSpace(o.Note)
	if err := relaunchShape(t, t.Home.BriefPath(t.ID)); err != nil {
		return nil, "", err
	}
	if note == "" && t.Kind.RelaunchNeedsNote() {
		// A flag the kind requires, missing: a usage error, found only
		// once the record says the kind (a secondmate needs none).
		return nil, "", fault.Usage("relaunch of a %s task requires --note (or --note-file)", t.Kind).Coded(fault.ENoteRequired).
			Hint("the replacement inherits the worktree but none of the conversation; say where the work stands: %s", o.command(t.ID))
	}
	if err := c.launcher().CheckReplacement(ctx, t, launch.Replacement{Harness: prof.To, Model: prof.ToModel, Effort: prof.ToEffort}); err != nil {
		return nil, "", err
	}
	facts, err := c.checkpoint(ctx, t)
	if err != nil {
		return nil, "", err
	}
	x := &relaunchTx{c: c, t: t, paths: t.Store.Journal(t.ID), prof: prof}
	x.journal.Header = journalHeader(t, prof)
	if note != "" {
		facts = append(facts, state.Entry{Key: "note_file", Value: x.paths.Note})
	} else {
		facts = append(facts, state.Entry{Key: "note", Value: "none"})
	}
	x.facts = facts
	return x, note, nil
}

// relaunchShape checks the brief a kind's replacement is pointed at: a ship
// or scout re-reads its brief (and is told where the work stands, see
// harness.Kind.RelaunchNeedsNote); a secondmate is pointed at its charter,
// which is never rewritten.
func relaunchShape(t *task.Target, brief string) error {
	switch t.Kind {
	case harness.KindShip, harness.KindScout:
		if err := state.RegularUnder(t.Home.Data, brief); err != nil {
			return launch.BriefRefusal(brief, err).Hint("a relaunched %s reads its brief there: write it before relaunching", t.Kind)
		}
	case harness.KindSecondmate:
		// The charter is never rewritten, but the replacement is still
		// pointed at it: finding it missing only after the stop would leave
		// the secondmate with no agent at all.
		if err := state.RegularUnder(t.Home.Data, brief); err != nil {
			return launch.BriefRefusal(brief, err).Hint("a relaunched secondmate is pointed at its charter there: write it before relaunching")
		}
	default:
		return fault.Failed("task %s records kind '%s', which has no defined relaunch shape", t.ID, t.Kind)
	}
	return nil
}

// begin makes the transaction durable: the prior record is kept, then the
// note is recorded (and appended to a ship's or scout's brief), each phase
// journaled before it acts.
func (x *relaunchTx) begin(ctx context.Context, note, brief string) error {
	t := x.t
	// Nothing durable has changed yet; from the prior-record copy on, every
	// failure is settled by rollback. Companions of an earlier transaction
	// must not be mistaken for this one's.
	for _, p := range []string{x.paths.BriefPrior, x.paths.Note} {
		if err := state.RemoveIfExists(p); err != nil {
			return fault.Failed("relaunch of %s could not clear %s from an earlier transaction: %v; nothing changed", t.ID, p, err)
		}
	}
	if err := state.WriteAtomic(x.paths.MetaPrior, t.Task.Raw); err != nil {
		return fault.Failed("relaunch of %s could not preserve its prior record: %v; nothing changed", t.ID, err)
	}
	if err := x.enter(state.PhaseCheckpoint); err != nil {
		return x.fail(ctx, state.PhaseCheckpoint, err, outcomeFacts{})
	}
	if err := x.recordNote(note, brief); err != nil {
		return x.fail(ctx, state.PhaseCheckpoint, err, outcomeFacts{})
	}
	if err := x.enter(state.PhaseNoted); err != nil {
		return x.fail(ctx, state.PhaseNoted, err, outcomeFacts{})
	}
	return nil
}

// replace stops the old agent and launches the replacement, journaling each
// phase, and completes the transaction once the new record is proven this
// transaction's.
func (x *relaunchTx) replace(ctx context.Context) (launch.Result, error) {
	c, t := x.c, x.t
	// The input lock is held from the stop until the replacement is up, so
	// no fm-send can type into the bare shell between the two agents.
	input, err := c.lockDelivery(t)
	if err != nil {
		return launch.Result{}, x.fail(ctx, state.PhaseNoted, err, outcomeFacts{})
	}
	defer input.Release()
	if err := x.enter(state.PhaseStopping); err != nil {
		return launch.Result{}, x.fail(ctx, state.PhaseNoted, err, outcomeFacts{})
	}
	res, err := c.verbs.Stop(ctx, t, true, true)
	if err == nil {
		err = state.Inject("exit")
	}
	if err != nil {
		return launch.Result{}, x.fail(ctx, state.PhaseStopping, err, outcomeFacts{})
	}
	if note := res.LeftNotice(t); note != "" {
		c.print.Notice("%s", note)
	}
	x.left = res.LeftValue()
	exitLine := state.Entry{Key: "exit_result", Value: string(res.Result)}
	if err := x.enter(state.PhaseExited, exitLine); err != nil {
		return launch.Result{}, x.fail(ctx, state.PhaseExited, err, outcomeFacts{})
	}
	tx := fmt.Sprintf("%d.%s.%d", os.Getpid(), time.Now().UTC().Format("20060102T150405Z"), rand.IntN(1<<16))
	txLine := state.Entry{Key: state.JournalRelaunchTx, Value: tx}
	if err := x.enter(state.PhaseLaunching, exitLine, txLine); err != nil {
		return launch.Result{}, x.fail(ctx, state.PhaseExited, err, outcomeFacts{})
	}
	launched, err := c.launcher().Relaunch(ctx, t, launch.Replacement{Harness: x.prof.To, Model: x.prof.ToModel, Effort: x.prof.ToEffort, TxID: tx})
	if err != nil {
		return launch.Result{}, x.fail(ctx, state.PhaseLaunching, fmt.Errorf("%s's replacement could not be launched on %s: %w", t.ID, x.prof.To.Name, err), outcomeFacts{tx: tx})
	}
	if err := x.adopt(tx); err != nil {
		return launch.Result{}, x.fail(ctx, state.PhaseLaunching, err, outcomeFacts{tx: tx})
	}
	of := outcomeFacts{tx: tx, confirmed: launched.Ready == "confirmed", placed: true}
	if err := x.enter(state.PhaseComplete, exitLine, txLine, state.Entry{Key: state.JournalReady, Value: launched.Ready}); err != nil {
		return launch.Result{}, x.fail(ctx, state.PhaseLaunching, err, of)
	}
	return launched, nil
}

// launcher launches the replacement; the caller holds the input lock.
func (c *Controller) launcher() launch.Launcher {
	return launch.Launcher{Tool: "fm-control", Env: c.env, Tunables: c.tun, Runner: c.runner, Print: c.print, LaunchWait: c.waits.Launch, InputHeld: true}
}

func journalHeader(t *task.Target, p profile) state.Record {
	return state.JournalHeader{
		Task: t.ID, Backend: t.BackendName, Endpoint: t.Endpoint.Target, Worktree: t.Endpoint.Worktree, Kind: string(t.Kind),
		FromHarness: p.FromHarness, FromModel: p.FromModel, FromEffort: p.FromEffort,
		ToHarness: p.To.Name, ToModel: p.ToModel, ToEffort: p.ToEffort,
	}.Record()
}

// recordNote keeps the note beside the journal and, for a ship or scout,
// appends it to the brief the replacement reads (the prior brief is kept for
// rollback). A secondmate's charter is never rewritten.
func (x *relaunchTx) recordNote(note, brief string) error {
	if note == "" {
		return nil
	}
	if err := state.WriteAtomic(x.paths.Note, []byte(note+"\n")); err != nil {
		return fmt.Errorf("record the progress note: %w", err)
	}
	if x.t.Kind == harness.KindSecondmate {
		return nil
	}
	prior, err := state.ReadSmallFile(brief, state.MaxBriefBytes)
	if err != nil {
		return fmt.Errorf("read %s: %w", brief, err)
	}
	if err := state.WriteAtomic(x.paths.BriefPrior, prior); err != nil {
		return fmt.Errorf("preserve the prior brief: %w", err)
	}
	stamp := time.Now().UTC().Format("2006-01-02 15:04 UTC")
	appended := fmt.Sprintf("%s\n\n## Progress note (%s)\n\nThis task was relaunched. Continue from here; the local copy and every\nuncommitted change are exactly as the previous worker left them.\n\n%s\n",
		strings.TrimRight(string(prior), "\n"), stamp, note)
	if err := state.WriteAtomic(brief, []byte(appended)); err != nil {
		return fmt.Errorf("append the progress note to %s: %w", brief, err)
	}
	return nil
}

// adopt re-reads the record fm-spawn published and checks it is this
// transaction's, on the same backend.
func (x *relaunchTx) adopt(tx string) error {
	task, err := x.t.Store.LoadTask("fm-control", x.t.ID)
	if err != nil {
		return err
	}
	if got := task.Record.ControlRelaunchTx(); got != tx {
		return fault.Failed("task %s's record names relaunch transaction '%s', not this one (%s); another writer replaced it", x.t.ID, got, tx)
	}
	if err := task.ValidateIdentity(); err != nil {
		return err
	}
	b := task.Record.Backend()
	if b != x.t.BackendName {
		return fault.Failed("task %s's new record moved from backend %s to %s; refusing to read a postcondition across a backend change", x.t.ID, x.t.BackendName, b)
	}
	x.t.Task = task
	return nil
}
