// Package fault is the domain's typed error: what happened (a sentence), its
// class for machine readers (a code from the one vocabulary below), the exit
// class it comes with, what to do next (hints), the facts a script may read,
// and the cause (kept for errors.Is). Domain packages return it; only the
// CLI edge (cmd/internal/cli and the binaries' packages) prints it, as one
// `error:` line and `hint:` lines, or one JSON object, and exits with its
// class.
package fault

import (
	"fmctl/config"
	"fmctl/state"
)

// Code is an error's stable class under --json ("code"): a script
// branches on it, while the sentence beside it is for a human and may be
// reworded. Codes are only ever added, never renamed.
type Code string

// The codes, each a row of Codes below (the one table docs/json.md and
// docs/schema/error.json are checked against).
const (
	ERefused              Code = "refused"
	EUsage                Code = "usage"
	EUnconfirmed          Code = "unconfirmed"
	ETimeout              Code = "timeout"
	ENoHome               Code = "no-home"
	EBadPin               Code = "bad-pin"
	EBadTaskID            Code = "bad-task-id"
	ENoSuchTask           Code = "no-such-task"
	EBadRecord            Code = "bad-record"
	EForeignEndpoint      Code = "foreign-endpoint"
	ELockHeld             Code = "lock-held"
	ETornRelaunch         Code = "torn-relaunch"
	ETornSpawn            Code = "torn-spawn"
	ERemoteTask           Code = "remote-task"
	EUnverifiedHarness    Code = "unverified-harness"
	ENoAdapter            Code = "no-adapter"
	ENoClassifier         Code = "no-classifier"
	EKeyUnsupported       Code = "key-unsupported"
	EKeyEndsAgent         Code = "key-ends-agent"
	EAgentNotRunning      Code = "agent-not-running"
	EAgentRunning         Code = "agent-running"
	EAgentSuspended       Code = "agent-suspended"
	EForeignAgent         Code = "foreign-agent"
	EAgentUnverified      Code = "agent-unverified"
	EEndpointMissing      Code = "endpoint-missing"
	EEndpointDrifted      Code = "endpoint-drifted"
	EEndpointUnreadable   Code = "endpoint-unreadable"
	ENotReady             Code = "not-ready"
	EDialog               Code = "dialog"
	EBusy                 Code = "busy"
	EComposerHeld         Code = "composer-held"
	EDraftInComposer      Code = "draft-in-composer"
	ETurnNotCompleted     Code = "turn-not-completed"
	EAgentRetrying        Code = "agent-retrying"
	EDeliveryFailed       Code = "delivery-failed"
	ENotStopped           Code = "not-stopped"
	ENoSignal             Code = "no-signal"
	EInterrupted          Code = "interrupted"
	ETaskExists           Code = "task-exists"
	EWorktreeInUse        Code = "worktree-in-use"
	EBadWorktree          Code = "bad-worktree"
	ENoBrief              Code = "no-brief"
	ENoteRequired         Code = "note-required"
	ELaunchFailed         Code = "launch-failed"
	ERelaunchFailed       Code = "relaunch-failed"
	ENoPane               Code = "no-pane"
	EAmbiguousPane        Code = "ambiguous-pane"
	EEventUnauthenticated Code = "event-unauthenticated"
	ETornTeardown         Code = "torn-teardown"
	ENotLanded            Code = "not-landed"
	ETasksInFlight        Code = "tasks-in-flight"
	ENotAuthorized        Code = "not-authorized"
	EBadHosts             Code = "bad-hosts"
	ENoSuchHost           Code = "no-such-host"
	EHostUnreachable      Code = "host-unreachable"
	EProtocolMismatch     Code = "protocol-mismatch"
	ENoRemoteBinaries     Code = "no-remote-binaries"
	EDuplicated           Code = "duplicated"
	ENoSuchMessage        Code = "no-such-message"
	ENoRecordReader       Code = "no-record-reader"
	ENoRecord             Code = "no-record"
	EQueueNotDropped      Code = "queue-not-dropped"
	EAgentStalled         Code = "agent-stalled"
)

// CodeRow is one error class: its code, the exit class it comes with, the
// error kind (state's or config's) that maps to it, and what it means.
type CodeRow struct {
	Code    Code
	Class   Class
	Kind    error // matched with errors.Is; nil when a refusal names it with Coded
	Meaning string
}

// Codes is the table of every error code the binaries print.
var Codes = []CodeRow{
	{ERefused, ClassFailed, nil, "refused or failed, with no more specific class; the sentence says why"},
	{EUsage, ClassUsage, nil, "the command line is wrong: an unknown verb or flag, a missing or extra argument, a value outside the flag's set (with the one probably meant), an empty message"},
	{EUnconfirmed, ClassUnconfirmed, nil, "the action happened but its effect could not be proven (fm-send's submit, an interrupt's cancel, exit's background turn); look before repeating it"},
	{ETimeout, ClassTimeout, nil, "fm-control wait: the condition did not hold before `--timeout`"},
	{ENoHome, ClassFailed, config.ErrNoHome, "`FM_HOME` is unset or is not a firstmate home"},
	{EBadPin, ClassFailed, config.ErrBadPin, "a configured harness pin names a harness fmctl will not launch"},
	{EBadTaskID, ClassFailed, state.ErrBadTaskID, "the argument is not a valid task id (an endpoint, a label, bad characters)"},
	{ENoSuchTask, ClassFailed, state.ErrNoSuchTask, "no record `state/<id>.meta` for the id"},
	{EBadRecord, ClassFailed, state.ErrBadRecord, "the task's record cannot be read or is malformed"},
	{EForeignEndpoint, ClassFailed, state.ErrForeignEndpoint, "the record's endpoint belongs to another task"},
	{ELockHeld, ClassFailed, state.ErrLockHeld, "another delivery or lifecycle action holds the task's lock"},
	{ETornRelaunch, ClassFailed, state.ErrTornRelaunch, "a relaunch was torn (its process died); settle it with `fm-control recover`"},
	{ETornSpawn, ClassFailed, nil, "an interrupted fm-spawn left an intent or window that must be settled first"},
	{ERemoteTask, ClassFailed, nil, "the task is a secondmate placed on another host"},
	{EUnverifiedHarness, ClassFailed, nil, "the harness (recorded or asked for) has no verified mechanics for this, or not for this kind of task"},
	{ENoAdapter, ClassFailed, nil, "the task's backend is unknown or fmctl ships no adapter (or no such ability) for it"},
	{ENoClassifier, ClassFailed, nil, "the backend cannot prove an agent-free or stopped endpoint, so the verb refuses rather than act blind"},
	{EKeyUnsupported, ClassFailed, nil, "the backend cannot deliver a key the harness needs"},
	{EKeyEndsAgent, ClassFailed, nil, "fm-send --key: the key quits the task's harness (the capability table's key effects); use `fm-control exit`, or `--allow-exit`"},
	{EAgentNotRunning, ClassFailed, nil, "the endpoint holds a shell, not the task's agent"},
	{EAgentRunning, ClassFailed, nil, "an agent already runs where an agent-free endpoint is needed"},
	{EAgentSuspended, ClassFailed, nil, "the agent is stopped (job control); resume it with `fg` first"},
	{EForeignAgent, ClassFailed, nil, "the endpoint runs something other than the task's recorded harness"},
	{EAgentUnverified, ClassFailed, nil, "the endpoint's agent cannot be positively classified"},
	{EEndpointMissing, ClassFailed, nil, "the recorded endpoint is gone"},
	{EEndpointDrifted, ClassFailed, nil, "the recorded endpoint no longer carries the task's identity; see `fm-control rebind`"},
	{EEndpointUnreadable, ClassFailed, nil, "the multiplexer did not answer for the endpoint"},
	{ENotReady, ClassFailed, nil, "the agent did not show a ready composer within the wait"},
	{EDialog, ClassFailed, nil, "the agent is at a blocking dialog (the dialog fact names it); nothing was typed"},
	{EBusy, ClassFailed, nil, "the agent is mid-turn and refuses the input"},
	{EComposerHeld, ClassFailed, nil, "the composer holds text that could not be cleared; nothing was typed"},
	{EAgentRetrying, ClassFailed, nil, "fm-send: the agent is waiting out a retry of its model call, when it throws away text submitted to it (pi); nothing was typed; `--when-ready` waits until it can take the text"},
	{ETurnNotCompleted, ClassFailed, nil, "fm-control wait --for done: the agent's own record ends its newest turn failed (its model call gave up) or cancelled, not completed; the turn fact names which"},
	{EDraftInComposer, ClassFailed, nil, "fm-send: the composer holds a person's draft (text fmctl did not type, nor the agent put back after an interrupt fmctl sent); it is kept, nothing was typed (the draft fact quotes it); `--discard-draft` sends over it"},
	{EDeliveryFailed, ClassFailed, nil, "the backend failed to deliver text or a key; or fm-send's Enter chose another command from the agent's completion popup (`submit=replaced`, `replaced`: the command the composer then holds, which the next fm-send clears); or, to `fm-control wait --for submitted`, a message an interrupt found the agent had let go of (`verdict=untaken`)"},
	{ENotStopped, ClassFailed, nil, "fm-control exit: the agent did not stop within the wait"},
	{ENoSignal, ClassFailed, nil, "fm-control wait: the harness reports no activity the condition could be read from"},
	{EInterrupted, ClassFailed, nil, "a verb's wait was interrupted by SIGINT or SIGTERM"},
	{ETaskExists, ClassFailed, nil, "fm-spawn: the task already has a record; relaunch it instead"},
	{EWorktreeInUse, ClassFailed, nil, "fm-spawn: another task or agent already works in the worktree"},
	{EBadWorktree, ClassFailed, nil, "the worktree or project is missing, not a git worktree root, dirty, or not the recorded one"},
	{ENoBrief, ClassFailed, nil, "the task's brief (`data/<id>/brief.md` or `--brief`) is missing, or `--brief` is not a regular file of at most 4 MiB"},
	{ENoteRequired, ClassUsage, nil, "fm-control relaunch of a ship or scout needs `--note` or `--note-file`"},
	{ELaunchFailed, ClassFailed, nil, "the agent could not be launched, did not come up, or its shell came back at once having ended the launch line (the pane fact quotes it; the published fact says whether its record was written)"},
	{ERelaunchFailed, ClassFailed, nil, "fm-control relaunch failed in a phase (phase and rollback facts say where and what was undone)"},
	{ENoPane, ClassFailed, nil, "fm-control rebind: no pane proves to be the task's"},
	{EAmbiguousPane, ClassFailed, nil, "fm-control rebind: several panes carry the task's identity"},
	{EEventUnauthenticated, ClassFailed, nil, "fm-control agent-event: the caller did not present the task's current event key (`FM_EVENT_KEY`); nothing was recorded, and the refusal is counted"},
	{ETornTeardown, ClassFailed, state.ErrTornTeardown, "a teardown was torn (its process died); settle it with `fm-control recover`"},
	{ENotLanded, ClassFailed, nil, "fm-teardown: the task's work has not landed (unpushed or unmerged commits, uncommitted or untracked changes, a detached HEAD, a scout's missing report); `--force` discards it"},
	{ETasksInFlight, ClassFailed, nil, "fm-teardown: the secondmate's home still has tasks of its own; tear them down first"},
	{ENotAuthorized, ClassFailed, nil, "the caller runs inside another task's pane and may not do this to the task named (docs/security.md); nothing was typed, locked or written, and the attempt is in the audit trail"},
	{EBadHosts, ClassFailed, config.ErrBadHosts, "`config/hosts.toml` cannot be read, or names a host fmctl would not reach safely (the sentence says which key)"},
	{ENoSuchHost, ClassFailed, config.ErrNoSuchHost, "a `<host>/<id>` names a host `config/hosts.toml` lacks"},
	{EHostUnreachable, ClassFailed, nil, "ssh or the host's fmctl did not answer before the request was sent (nothing was sent), or a read-only verb's answer was lost"},
	{EProtocolMismatch, ClassFailed, nil, "the host's fmctl speaks another protocol version (both are named); nothing was sent; see `fm-control hosts install`"},
	{ENoRemoteBinaries, ClassFailed, nil, "the host has no fmctl binaries where `config/hosts.toml` says; nothing was sent; see `fm-control hosts install`"},
	{EDuplicated, ClassUnconfirmed, nil, "fm-send, `fm-control wait --for submitted`: the agent's own record holds the message more than once since the send; do not send it again"},
	{ENoSuchMessage, ClassFailed, nil, "`fm-control wait --for submitted`: the task's send ledger (`state/<id>.sends`) holds no such message id"},
	{ENoRecordReader, ClassFailed, nil, "`fm-control read --record`: fmctl has no reader for the own record of the task's harness, or the task names none"},
	{ENoRecord, ClassFailed, nil, "`fm-control read --record`: the agent's own record cannot be found or read where its harness keeps it"},
	{EQueueNotDropped, ClassUnconfirmed, nil, "`fm-control interrupt --drop-queue`: the turn was cancelled, but nothing proves the messages fm-send left queued were dropped (the turn the agent took them into still runs per its record, they are still drawn in its queue, or no record of the agent can be read); the agent may be busy with them"},
	{EAgentStalled, ClassStalled, nil, "fm-control wait: the agent is busy and showed no progress (its own record unwritten, no report from it) for `FM_STALL_AFTER`, so the condition may never hold; the stalled_for_s fact says how long"},
}

// CodeOf is err's code: the first refusal in its chain that names one, or
// the first error kind the table maps, else the fallback of its exit class.
// It is never empty.
func CodeOf(err error) Code {
	if c := findCode(err); c != "" {
		return c
	}
	switch ClassOf(err) {
	case ClassUsage:
		return EUsage
	case ClassUnconfirmed:
		return EUnconfirmed
	case ClassTimeout:
		return ETimeout
	case ClassStalled:
		return EAgentStalled
	}
	return ERefused
}

// findCode walks err's chain, stopping at the first named code or mapped
// kind.
func findCode(err error) Code {
	var code Code
	walk(err, func(e error) bool {
		if r, ok := e.(*Error); ok && r.Code != "" {
			code = r.Code
			return false
		}
		for _, row := range Codes {
			if row.Kind != nil && e == row.Kind {
				code = row.Code
				return false
			}
		}
		return true
	})
	return code
}

// HintsOf is every next step in err's chain, outermost first, each once:
// a refusal's own hints, then those its causes carry (a record's or a
// home's error says how to mend it, through a Hints method).
func HintsOf(err error) []string {
	var hints []string
	seen := map[string]bool{}
	walk(err, func(e error) bool {
		var own []string
		switch e := e.(type) {
		case *Error:
			own = e.Hints
		case interface{ Hints() []string }:
			own = e.Hints()
		}
		for _, h := range own {
			if !seen[h] {
				seen[h] = true
				hints = append(hints, h)
			}
		}
		return true
	})
	return hints
}

// walk visits err and every error it wraps, outermost first and depth
// first through joined and multi-%w errors, until visit returns false; it
// reports whether the walk ran to the end.
func walk(err error, visit func(error) bool) bool {
	if err == nil {
		return true
	}
	if !visit(err) {
		return false
	}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		return walk(u.Unwrap(), visit)
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			if !walk(e, visit) {
				return false
			}
		}
	}
	return true
}
