package authority

import (
	"fmt"
	"path/filepath"
	"strconv"

	"fmctl/harness"
	"fmctl/state"
)

// ProcessTable reads one process's parent; backends/proc.FS reads /proc.
type ProcessTable interface {
	ParentPID(pid int) (int, error)
}

// maxAncestry bounds the walk up the caller's parents: real chains are a
// handful deep (agent, its shell tool, fm-control); a longer one is cut off
// rather than followed.
const maxAncestry = 64

// maxNesting bounds how many secondmate homes deep a caller is looked for:
// a secondmate's crew may run secondmates of their own, but not without end.
const maxNesting = 4

// Resolver finds who calls, by process ancestry: the caller is task T when
// its process descends from T's recorded pane pid (the pane's first
// process, its shell: tmux_pane_pid on tmux, pane_pid where another backend
// reports it, state.PanePIDOf). Every process in the pane, the
// agent and any shell or hook it starts, descends from it, and no process
// can change its own ancestry but by leaving it (a double fork re-parents
// to init), which a confused agent does not do. An environment variable
// would not do: the agent's own environment is the agent's to copy, unset or
// forge, so FM_TASK=other or an unset one would pass for anyone.
//
// It costs one small read per ancestor in /proc and one unparsed read per
// record in the home (a secondmate's records too), and no multiplexer call:
// the binaries run in loops (BenchmarkResolveInAHomeOf500Tasks). A hook's
// call reads one record (ResolveAs).
type Resolver struct {
	Store state.Store
	// Procs is nil where there is no process table to read (no /proc):
	// every caller is then the operator, as docs/security.md says.
	Procs ProcessTable
	// Self is the process whose ancestry is walked (os.Getpid()).
	Self int
	// Read holds records of Store the caller has already read, by task id
	// (list reads each record once, for this scan and its own load); any
	// other record is read here.
	Read map[string][]byte
}

// Resolve returns the caller. A process table that cannot read the caller
// itself is an error: the caller is then not known to be the operator.
func (r Resolver) Resolve() (Caller, error) { return r.resolve("") }

// ResolveAs is Resolve for a caller that claims to be task id, on a path
// every turn of an agent takes (agent-event, from its hooks): when the
// caller descends from the pane id's own record names, it is that task,
// found from that one record, so the size of the fleet does not weigh on
// each of its agents' turns. Any other caller is resolved as Resolve does.
// The two answer alike unless another task's recorded pane sits between
// the caller and id's own pane, which no multiplexer makes: a pane's
// first process is a child of its server, never of another pane.
func (r Resolver) ResolveAs(id string) (Caller, error) { return r.resolve(id) }

func (r Resolver) resolve(claimed string) (Caller, error) {
	if c, ok := testCaller(r.Store); ok {
		return c, nil
	}
	if r.Procs == nil {
		return Caller{}, nil
	}
	depth, err := r.ancestry()
	if err != nil {
		return Caller{}, err
	}
	if c, ok := r.own(claimed, depth); ok {
		return c, nil
	}
	return r.nearest(depth), nil
}

// own is task id as the caller, when the pane its record names is among
// the caller's ancestors (depth).
func (r Resolver) own(id string, depth map[int]int) (Caller, bool) {
	if id == "" {
		return Caller{}, false
	}
	data, err := r.Store.PeekRecord(id, nil)
	if err != nil {
		return Caller{}, false
	}
	pid, _ := strconv.Atoi(state.PanePIDOf(data))
	if _, ancestor := depth[pid]; !ancestor || pid <= 1 {
		return Caller{}, false
	}
	rec, err := state.ParseRecord(data)
	if err != nil {
		return Caller{}, false
	}
	c := Caller{Task: id, PanePID: pid}
	// A malformed grants line grants nothing.
	c.Grants, _ = ParseGrants(rec.Grants())
	return c, true
}

// nearest is the caller whose ancestry is depth: the task whose recorded
// pane is its nearest ancestor, or the operator.
func (r Resolver) nearest(depth map[int]int) Caller {
	m := match{depth: maxAncestry + 1}
	r.scan(r.Store, depth, nil, 0, map[string]bool{}, &m)
	if m.owner.id == "" {
		return Caller{}
	}
	c := Caller{Task: m.owner.id, PanePID: m.pid, Crew: m.crew}
	// A malformed grants line grants nothing.
	c.Grants, _ = ParseGrants(m.owner.grants)
	return c
}

// ancestry maps each ancestor's pid (the caller included) to its distance
// from the caller.
func (r Resolver) ancestry() (map[int]int, error) {
	depth := map[int]int{}
	pid := r.Self
	for d := 0; d < maxAncestry && pid > 1; d++ {
		if _, seen := depth[pid]; seen {
			break
		}
		depth[pid] = d
		parent, err := r.Procs.ParentPID(pid)
		if err != nil {
			if d == 0 {
				return nil, fmt.Errorf("read the calling process %d's parent: %w", pid, err)
			}
			break // an ancestor exited while we looked: the chain ends here
		}
		pid = parent
	}
	return depth, nil
}

// match is the nearest recorded pane among the caller's ancestors.
type match struct {
	owner      owner
	crew       string
	pid, depth int
}

// owner is a task of the caller's own home, to whom a match is attributed.
type owner struct{ id, grants string }

// scan looks for the caller's nearest ancestor among the panes recorded in
// store. In the caller's home (top is nil) a match is the recorded task's;
// within a secondmate's own home it is that secondmate's (top's), whose
// crew acts for it as far as this home is concerned.
func (r Resolver) scan(store state.Store, depth map[int]int, top *owner, nesting int, seen map[string]bool, m *match) {
	if seen[store.Dir] {
		return
	}
	seen[store.Dir] = true
	var buf []byte
	for _, id := range store.TaskIDs() {
		// Every record is peeked at for its pane pid and kind; only one
		// that matches or is a secondmate's is parsed (and so validated).
		data, read := r.Read[id]
		if !read || store.Dir != r.Store.Dir {
			var err error
			if data, err = store.PeekRecord(id, buf); err != nil {
				continue // an unreadable record names no pane to match
			}
			buf = data
		}
		pid, _ := strconv.Atoi(state.PanePIDOf(data))
		d, ancestor := depth[pid]
		matched := pid > 1 && ancestor && d < m.depth
		secondmate := nesting < maxNesting && state.LastValue(data, state.KeyKind) == string(harness.KindSecondmate)
		if !matched && !secondmate {
			continue
		}
		rec, err := state.ParseRecord(data)
		if err != nil {
			continue
		}
		who := owner{id: id, grants: rec.Grants()}
		crew := ""
		if top != nil {
			who, crew = *top, id
		}
		if matched {
			*m = match{owner: who, crew: crew, pid: pid, depth: d}
		}
		if secondmate {
			if sub, ok := secondmateState(rec.Worktree()); ok {
				r.scan(sub, depth, &who, nesting+1, seen, m)
			}
		}
	}
}

// secondmateState is the state directory of a secondmate's own home (its
// worktree), unless it is missing or a symlink, which is not followed.
func secondmateState(home string) (state.Store, bool) {
	if home == "" || !filepath.IsAbs(home) {
		return state.Store{}, false
	}
	dir := filepath.Join(home, "state")
	if err := state.NoSymlinkUnder(home, dir); err != nil {
		return state.Store{}, false
	}
	return state.Store{Dir: dir}, true
}
