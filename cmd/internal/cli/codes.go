package cli

import (
	"fmctl/config"
	"fmctl/state"
)

// ErrCode is an error's stable class under --json ("code"): a script
// branches on it, while the sentence beside it is for a human and may be
// reworded. Codes are only ever added, never renamed.
type ErrCode string

// The codes, each a row of Codes below (the one table docs/json.md and
// docs/schema/error.json are checked against).
const (
	ERefused              ErrCode = "refused"
	EUsage                ErrCode = "usage"
	EUnconfirmed          ErrCode = "unconfirmed"
	ETimeout              ErrCode = "timeout"
	ENoHome               ErrCode = "no-home"
	EBadPin               ErrCode = "bad-pin"
	EBadTaskID            ErrCode = "bad-task-id"
	ENoSuchTask           ErrCode = "no-such-task"
	EBadRecord            ErrCode = "bad-record"
	EForeignEndpoint      ErrCode = "foreign-endpoint"
	ELockHeld             ErrCode = "lock-held"
	ETornRelaunch         ErrCode = "torn-relaunch"
	ETornSpawn            ErrCode = "torn-spawn"
	ERemoteTask           ErrCode = "remote-task"
	EUnverifiedHarness    ErrCode = "unverified-harness"
	ENoAdapter            ErrCode = "no-adapter"
	ENoClassifier         ErrCode = "no-classifier"
	EKeyUnsupported       ErrCode = "key-unsupported"
	EKeyEndsAgent         ErrCode = "key-ends-agent"
	EAgentNotRunning      ErrCode = "agent-not-running"
	EAgentRunning         ErrCode = "agent-running"
	EAgentSuspended       ErrCode = "agent-suspended"
	EForeignAgent         ErrCode = "foreign-agent"
	EAgentUnverified      ErrCode = "agent-unverified"
	EEndpointMissing      ErrCode = "endpoint-missing"
	EEndpointDrifted      ErrCode = "endpoint-drifted"
	EEndpointUnreadable   ErrCode = "endpoint-unreadable"
	ENotReady             ErrCode = "not-ready"
	EDialog               ErrCode = "dialog"
	EBusy                 ErrCode = "busy"
	EComposerHeld         ErrCode = "composer-held"
	EDeliveryFailed       ErrCode = "delivery-failed"
	ENotStopped           ErrCode = "not-stopped"
	ENoSignal             ErrCode = "no-signal"
	EInterrupted          ErrCode = "interrupted"
	ETaskExists           ErrCode = "task-exists"
	EWorktreeInUse        ErrCode = "worktree-in-use"
	EBadWorktree          ErrCode = "bad-worktree"
	ENoBrief              ErrCode = "no-brief"
	ENoteRequired         ErrCode = "note-required"
	ELaunchFailed         ErrCode = "launch-failed"
	ERelaunchFailed       ErrCode = "relaunch-failed"
	ENoPane               ErrCode = "no-pane"
	EAmbiguousPane        ErrCode = "ambiguous-pane"
	EEventUnauthenticated ErrCode = "event-unauthenticated"
	ETornTeardown         ErrCode = "torn-teardown"
	ENotLanded            ErrCode = "not-landed"
	ETasksInFlight        ErrCode = "tasks-in-flight"
	ENotAuthorized        ErrCode = "not-authorized"
	EBadHosts             ErrCode = "bad-hosts"
	ENoSuchHost           ErrCode = "no-such-host"
	EHostUnreachable      ErrCode = "host-unreachable"
	EProtocolMismatch     ErrCode = "protocol-mismatch"
	ENoRemoteBinaries     ErrCode = "no-remote-binaries"
	EDuplicated           ErrCode = "duplicated"
	ENoSuchMessage        ErrCode = "no-such-message"
)

// CodeRow is one error class: its code, the exit code it comes with, the
// error kind (state's or config's) that maps to it, and what it means.
type CodeRow struct {
	Code    ErrCode
	Exit    int
	Kind    error // matched with errors.Is; nil when a refusal names it with Coded
	Meaning string
}

// Codes is the table of every error code the binaries print.
var Codes = []CodeRow{
	{ERefused, CodeFailed, nil, "refused or failed, with no more specific class; the sentence says why"},
	{EUsage, CodeUsage, nil, "the command line is wrong: an unknown verb or flag, a missing or extra argument, a value outside the flag's set (with the one probably meant), an empty message"},
	{EUnconfirmed, CodeUnconfirmed, nil, "the action happened but its effect could not be proven (fm-send's submit, an interrupt's turn still running, exit's background turn); look before repeating it"},
	{ETimeout, CodeTimeout, nil, "fm-control wait: the condition did not hold before `--timeout`"},
	{ENoHome, CodeFailed, config.ErrNoHome, "`FM_HOME` is unset or is not a firstmate home"},
	{EBadPin, CodeFailed, config.ErrBadPin, "a configured harness pin names a harness fmctl will not launch"},
	{EBadTaskID, CodeFailed, state.ErrBadTaskID, "the argument is not a valid task id (an endpoint, a label, bad characters)"},
	{ENoSuchTask, CodeFailed, state.ErrNoSuchTask, "no record `state/<id>.meta` for the id"},
	{EBadRecord, CodeFailed, state.ErrBadRecord, "the task's record cannot be read or is malformed"},
	{EForeignEndpoint, CodeFailed, state.ErrForeignEndpoint, "the record's endpoint belongs to another task"},
	{ELockHeld, CodeFailed, state.ErrLockHeld, "another delivery or lifecycle action holds the task's lock"},
	{ETornRelaunch, CodeFailed, state.ErrTornRelaunch, "a relaunch was torn (its process died); settle it with `fm-control recover`"},
	{ETornSpawn, CodeFailed, nil, "an interrupted fm-spawn left an intent or window that must be settled first"},
	{ERemoteTask, CodeFailed, nil, "the task is a secondmate placed on another host"},
	{EUnverifiedHarness, CodeFailed, nil, "the harness (recorded or asked for) has no verified mechanics for this, or not for this kind of task"},
	{ENoAdapter, CodeFailed, nil, "the task's backend is unknown or fmctl ships no adapter (or no such ability) for it"},
	{ENoClassifier, CodeFailed, nil, "the backend cannot prove an agent-free or stopped endpoint, so the verb refuses rather than act blind"},
	{EKeyUnsupported, CodeFailed, nil, "the backend cannot deliver a key the harness needs"},
	{EKeyEndsAgent, CodeFailed, nil, "fm-send --key: the key quits the task's harness (the capability table's key effects); use `fm-control exit`, or `--allow-exit`"},
	{EAgentNotRunning, CodeFailed, nil, "the endpoint holds a shell, not the task's agent"},
	{EAgentRunning, CodeFailed, nil, "an agent already runs where an agent-free endpoint is needed"},
	{EAgentSuspended, CodeFailed, nil, "the agent is stopped (job control); resume it with `fg` first"},
	{EForeignAgent, CodeFailed, nil, "the endpoint runs something other than the task's recorded harness"},
	{EAgentUnverified, CodeFailed, nil, "the endpoint's agent cannot be positively classified"},
	{EEndpointMissing, CodeFailed, nil, "the recorded endpoint is gone"},
	{EEndpointDrifted, CodeFailed, nil, "the recorded endpoint no longer carries the task's identity; see `fm-control rebind`"},
	{EEndpointUnreadable, CodeFailed, nil, "the multiplexer did not answer for the endpoint"},
	{ENotReady, CodeFailed, nil, "the agent did not show a ready composer within the wait"},
	{EDialog, CodeFailed, nil, "the agent is at a blocking dialog (the dialog fact names it); nothing was typed"},
	{EBusy, CodeFailed, nil, "the agent is mid-turn and refuses the input"},
	{EComposerHeld, CodeFailed, nil, "the composer holds text that could not be cleared; nothing was typed"},
	{EDeliveryFailed, CodeFailed, nil, "the backend failed to deliver text or a key"},
	{ENotStopped, CodeFailed, nil, "fm-control exit: the agent did not stop within the wait"},
	{ENoSignal, CodeFailed, nil, "fm-control wait: the harness reports no activity the condition could be read from"},
	{EInterrupted, CodeFailed, nil, "a verb that waits was interrupted by SIGINT or SIGTERM (the others end by the signal)"},
	{ETaskExists, CodeFailed, nil, "fm-spawn: the task already has a record; relaunch it instead"},
	{EWorktreeInUse, CodeFailed, nil, "fm-spawn: another task or agent already works in the worktree"},
	{EBadWorktree, CodeFailed, nil, "the worktree or project is missing, not a git worktree root, dirty, or not the recorded one"},
	{ENoBrief, CodeFailed, nil, "the task's brief (`data/<id>/brief.md` or `--brief`) is missing, or `--brief` is not a regular file of at most 4 MiB"},
	{ENoteRequired, CodeUsage, nil, "fm-control relaunch of a ship or scout needs `--note` or `--note-file`"},
	{ELaunchFailed, CodeFailed, nil, "the agent could not be launched, did not come up, or its shell came back at once having ended the launch line (the pane fact quotes it; the published fact says whether its record was written)"},
	{ERelaunchFailed, CodeFailed, nil, "fm-control relaunch failed in a phase (phase and rollback facts say where and what was undone)"},
	{ENoPane, CodeFailed, nil, "fm-control rebind: no pane proves to be the task's"},
	{EAmbiguousPane, CodeFailed, nil, "fm-control rebind: several panes carry the task's identity"},
	{EEventUnauthenticated, CodeFailed, nil, "fm-control agent-event: the caller did not present the task's current event key (`FM_EVENT_KEY`); nothing was recorded, and the refusal is counted"},
	{ETornTeardown, CodeFailed, state.ErrTornTeardown, "a teardown was torn (its process died); settle it with `fm-control recover`"},
	{ENotLanded, CodeFailed, nil, "fm-teardown: the task's work has not landed (unpushed or unmerged commits, uncommitted or untracked changes, a detached HEAD, a scout's missing report); `--force` discards it"},
	{ETasksInFlight, CodeFailed, nil, "fm-teardown: the secondmate's home still has tasks of its own; tear them down first"},
	{ENotAuthorized, CodeFailed, nil, "the caller runs inside another task's pane and may not do this to the task named (docs/security.md); nothing was typed, locked or written, and the attempt is in the audit trail"},
	{EBadHosts, CodeFailed, config.ErrBadHosts, "`config/hosts.toml` cannot be read, or names a host fmctl would not reach safely (the sentence says which key)"},
	{ENoSuchHost, CodeFailed, config.ErrNoSuchHost, "a `<host>/<id>` names a host `config/hosts.toml` lacks"},
	{EHostUnreachable, CodeFailed, nil, "ssh or the host's fmctl did not answer before the request was sent (nothing was sent), or a read-only verb's answer was lost"},
	{EProtocolMismatch, CodeFailed, nil, "the host's fmctl speaks another protocol version (both are named); nothing was sent; see `fm-control hosts install`"},
	{ENoRemoteBinaries, CodeFailed, nil, "the host has no fmctl binaries where `config/hosts.toml` says; nothing was sent; see `fm-control hosts install`"},
	{EDuplicated, CodeUnconfirmed, nil, "fm-send, `fm-control wait --for submitted`: the agent's own record holds the message more than once since the send; do not send it again"},
	{ENoSuchMessage, CodeFailed, nil, "`fm-control wait --for submitted`: the task's send ledger (`state/<id>.sends`) holds no such message id"},
}

// CodeOf is err's code: the first refusal in its chain that names one, or
// the first error kind the table maps, else the fallback of its exit code.
// It is never empty.
func CodeOf(err error) ErrCode {
	if c := findCode(err); c != "" {
		return c
	}
	switch Code(err) {
	case CodeUsage:
		return EUsage
	case CodeUnconfirmed:
		return EUnconfirmed
	case CodeTimeout:
		return ETimeout
	}
	return ERefused
}

// findCode walks err's chain outermost first, through joined and
// multi-%w errors, stopping at the first named code or mapped kind.
func findCode(err error) ErrCode {
	if err == nil {
		return ""
	}
	if r, ok := err.(*Error); ok && r.Code != "" {
		return r.Code
	}
	for _, row := range Codes {
		if row.Kind != nil && err == row.Kind {
			return row.Code
		}
	}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		return findCode(u.Unwrap())
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			if c := findCode(e); c != "" {
				return c
			}
		}
	}
	return ""
}
