package task

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"fmctl/authority"
	"fmctl/backends/proc"
	"fmctl/cmd/internal/fault"
	"fmctl/config"
	"fmctl/state"
)

// Authority is the gate every verb passes before it reads more than a
// record: who calls (authority.Resolver), whether they may (authority.Decide),
// and the audit trail of the attempt.
type Authority struct {
	Tool     string
	Tunables config.Tunables
	// Procs reads the caller's ancestry; nil where there is no /proc.
	Procs authority.ProcessTable
	Self  int // the calling process
	Now   func() time.Time
	// Warn reports an attempt the audit trail could not take.
	Warn func(format string, args ...any)
}

// NewAuthority is the gate with the process's real edges.
func NewAuthority(tool string, tun config.Tunables, warn func(string, ...any)) Authority {
	a := Authority{Tool: tool, Tunables: tun, Self: os.Getpid(), Now: time.Now, Warn: warn}
	if _, err := os.Stat("/proc/self/stat"); err == nil {
		a.Procs = proc.FS{Root: "/proc"}
	}
	return a
}

// Guard runs fn when the caller may run verb on task id, and keeps the
// audit trail: a refusal is audited and returned before fn runs (so nothing
// is typed, locked or written); an allowed call of an audited verb is
// audited with its outcome once fn returns, unless fn refused its command
// line (exit 2). A home or id fn would refuse anyway is left to fn, which
// says so in its own words.
func (a Authority) Guard(verb, id string, fn func() error) error {
	return a.GuardAs(verb, id, func(authority.Caller) error { return fn() })
}

// GuardAs is Guard for a verb that records who called (fm-spawn's
// spawned_by): fn is given the caller.
func (a Authority) GuardAs(verb, id string, fn func(authority.Caller) error) error {
	home, err := config.LocateHome(a.Tool, a.Tunables.Home)
	if err != nil || state.CheckTaskArg(a.Tool, id) != nil {
		return fn(authority.Caller{})
	}
	return a.guard(home, verb, id, a.Caller, fn)
}

// GuardOwn is Guard for a verb a task's agent runs on itself on every turn
// (agent-event, from its hooks): the caller is first looked for in the
// task's own record (authority.Resolver.ResolveAs), so a fleet's size does
// not weigh on each of its agents' turns. The decision is Guard's.
func (a Authority) GuardOwn(verb, id string, fn func() error) error {
	home, err := config.LocateHome(a.Tool, a.Tunables.Home)
	if err != nil || state.CheckTaskArg(a.Tool, id) != nil {
		return fn()
	}
	resolve := func(home config.Home) (authority.Caller, error) {
		return a.resolver(home).ResolveAs(id)
	}
	return a.guard(home, verb, id, resolve, func(authority.Caller) error { return fn() })
}

// GuardRemote is Guard for a verb on another host's task (target is
// <host>/<id>). The host's fmctl, reached over ssh, cannot see who called
// here, so the gate is kept here: the operator may, and a task may not
// (no grant names another host's task). Without a home here no task pane
// can be told apart, and the caller is the operator.
func (a Authority) GuardRemote(verb, target string, fn func() error) error {
	home, err := config.LocateHome(a.Tool, a.Tunables.Home)
	if err != nil {
		return fn()
	}
	return a.guard(home, verb, target, a.Caller, func(authority.Caller) error { return fn() })
}

func (a Authority) guard(home config.Home, verb, id string, resolve func(config.Home) (authority.Caller, error), fn func(authority.Caller) error) error {
	store := state.Store{Dir: home.State}
	caller, err := resolve(home)
	if err != nil {
		return fault.Failed("%s cannot tell whether it runs inside a task's pane (%v), so it refuses to act as the operator; nothing was done", a.Tool, err).Coded(fault.ENotAuthorized)
	}
	req := authority.Request{Caller: caller, Verb: verb, Target: id}
	// Another host's task (<host>/<id>) has its record there, not here.
	if state.ValidTaskID(id) {
		if rec, err := readTaskRecord(store, id); err == nil {
			req.TargetParent = rec.SpawnedBy()
		}
	}
	if err := authority.Decide(req); err != nil {
		refused := a.refusal(err, req)
		a.audit(store, req, refused)
		return refused
	}
	if !authority.Audited(verb, true) {
		return fn(caller)
	}
	err = fn(caller)
	// A command line refused as wrong (exit 2) attempted nothing, and bad
	// input changes nothing in the home, its trail included.
	if fault.ClassOf(err) != fault.ClassUsage {
		a.audit(store, req, err)
	}
	return err
}

// Caller resolves the caller alone, for a verb that filters what it shows
// (list) rather than refusing.
func (a Authority) Caller(home config.Home) (authority.Caller, error) {
	return a.resolver(home).Resolve()
}

func (a Authority) resolver(home config.Home) authority.Resolver {
	return authority.Resolver{Store: state.Store{Dir: home.State}, Procs: a.Procs, Self: a.Self}
}

// refusal is the user's error for a decided refusal.
func (a Authority) refusal(err error, req authority.Request) *fault.Error {
	e := fault.Failed("%w; nothing was typed, locked or written", err).Coded(fault.ENotAuthorized)
	e.With("caller", req.Caller.Task, "verb", req.Verb)
	var r *authority.Refusal
	if errors.As(err, &r) {
		e.Hint("%s", r.MayText())
	}
	e.Hint("ask the operator (firstmate, from outside any task's pane) to do it")
	if verb, _ := authority.LookupVerb(req.Verb); verb.Grantable {
		e.Hint("only the operator widens a task's authority, when it spawns the task: fm-spawn %s %s --grant %s@%s", req.Caller.Task, state.SpawnFlags, req.Verb, req.Target)
	}
	return e
}

// audit appends the attempt to the target's trail, or to the calling
// task's when the target has no record (a refused spawn, a stray id); an
// operator's call on no task leaves no trail. A trail that cannot be
// written is warned about: the verb's own outcome stands.
func (a Authority) audit(store state.Store, req authority.Request, err error) {
	trail := req.Target
	if _, statErr := os.Lstat(store.MetaPath(req.Target)); statErr != nil || !state.ValidTaskID(req.Target) {
		if req.Caller.Operator() {
			return
		}
		trail = req.Caller.Task
	}
	line := a.auditLine(req, err)
	if werr := store.AppendAudit(trail, line, int64(a.Tunables.AuditMaxBytes)); werr != nil && a.Warn != nil {
		a.Warn("the audit trail of task %s could not take this attempt: %v", trail, werr)
	}
}

// auditLine is one attempt: when, which request, who (and the process that
// ran the binary), what, and how it ended (the exit code's name and the
// error's code).
func (a Authority) auditLine(req authority.Request, err error) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s req=%s caller=", a.Now().UTC().Format(time.RFC3339Nano), requestID())
	if req.Caller.Operator() {
		b.WriteString("operator")
	} else {
		fmt.Fprintf(&b, "task:%s pane_pid=%d", req.Caller.Task, req.Caller.PanePID)
		if req.Caller.Crew != "" {
			fmt.Fprintf(&b, " crew=%s", req.Caller.Crew)
		}
	}
	fmt.Fprintf(&b, " pid=%d verb=%s target=%s", os.Getppid(), req.Verb, req.Target)
	var refusal *authority.Refusal
	switch {
	case errors.As(err, &refusal):
		b.WriteString(" outcome=refused code=" + string(fault.ENotAuthorized))
	case err != nil:
		fmt.Fprintf(&b, " outcome=%s code=%s", fault.ClassOf(err), fault.CodeOf(err))
	default:
		b.WriteString(" outcome=done")
	}
	return b.String()
}

// requestID names one invocation in the trail, so its line can be told
// from a retry's.
func requestID() string {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		return "none"
	}
	return hex.EncodeToString(b)
}

// readTaskRecord reads and parses task id's record, if it has one.
func readTaskRecord(store state.Store, id string) (state.Record, error) {
	data, err := state.ReadSmallFile(store.MetaPath(id), state.MaxRecordBytes)
	if err != nil {
		return state.Record{}, err
	}
	return state.ParseRecord(data)
}

// taskRecord is readTaskRecord, parsed from read's bytes where the caller
// has read the record already.
func taskRecord(store state.Store, id string, read map[string][]byte) (state.Record, error) {
	if data, ok := read[id]; ok {
		return state.ParseRecord(data)
	}
	return readTaskRecord(store, id)
}

// Visible keeps the ids the caller may list: every one for the operator;
// for a task, itself and the tasks its grants name (authority.Caller.Reaches).
// read holds the records the caller has already read, by id; any other is
// read here.
func (a Authority) Visible(home config.Home, ids []string, read map[string][]byte) ([]string, error) {
	r := a.resolver(home)
	r.Read = read
	caller, err := r.Resolve()
	if err != nil {
		return nil, fault.Failed("%s cannot tell whether it runs inside a task's pane (%v), so it lists nothing; nothing was done", a.Tool, err).Coded(fault.ENotAuthorized)
	}
	if caller.Operator() {
		return ids, nil
	}
	store := state.Store{Dir: home.State}
	var out []string
	for _, id := range ids {
		parent := ""
		if rec, err := taskRecord(store, id, read); err == nil {
			parent = rec.SpawnedBy()
		}
		if caller.Reaches(id, parent) {
			out = append(out, id)
		}
	}
	return out, nil
}
