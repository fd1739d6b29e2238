package fleet

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"fmctl/cmd/internal/cli"
	"fmctl/cmd/internal/edge"
	"fmctl/remote"
	"fmctl/state"
)

// LocalHost names this machine's rows in list --all-hosts.
const LocalHost = "local"

// listConcurrency bounds the hosts asked at once.
const listConcurrency = 8

// HostTasks is one host's part of list --all-hosts.
type HostTasks struct {
	Host      string `json:"host"`
	Reachable bool   `json:"reachable"`
	// Stale: the host did not answer and Tasks are its last answer,
	// from SeenAt; what they say may no longer hold.
	Stale  bool             `json:"stale"`
	SeenAt string           `json:"seen_at,omitempty"`
	Error  string           `json:"error,omitempty"`
	Tasks  []map[string]any `json:"tasks"`
}

// listAnswer is the part of fm-control list --json read here; each task is
// kept whole, whatever its fields.
type listAnswer struct {
	Tasks []map[string]any `json:"tasks"`
}

// ListAllHosts asks this machine (local, which runs list --json here) and
// every host in parallel, each within FM_HOSTS_LIST_TIMEOUT, and prints one
// table. A host that does not answer is listed unreachable, with the tasks
// of its last answer marked stale: never as dead, which nobody saw.
func ListAllHosts(ctx context.Context, d edge.Deps, asJSON bool, local func(context.Context) ([]byte, error)) error {
	client, err := NewClient(d, "fm-control")
	if err != nil {
		return err
	}
	defer client.Close()
	names := client.Hosts.Names()
	out := make([]HostTasks, len(names)+1)
	out[0] = HostTasks{Host: LocalHost, Reachable: true}
	if data, err := local(ctx); err != nil {
		out[0].Reachable, out[0].Error = false, err.Error()
	} else if err := decodeList(data, &out[0]); err != nil {
		out[0].Reachable, out[0].Error = false, err.Error()
	}
	sem := make(chan struct{}, listConcurrency)
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			out[i+1] = client.listHost(ctx, name)
		})
	}
	wg.Wait()
	p := d.Printer(asJSON)
	if asJSON {
		p.Value(struct {
			Outcome string      `json:"outcome"`
			Hosts   []HostTasks `json:"hosts"`
		}{"hosts-list", out})
		return nil
	}
	if p.OutTTY {
		printTable(d.Stdout, out)
		return nil
	}
	printLines(d.Stdout, out)
	return nil
}

func decodeList(data []byte, into *HostTasks) error {
	var ans listAnswer
	if err := json.Unmarshal(data, &ans); err != nil {
		return fmt.Errorf("unreadable list: %w", err)
	}
	into.Tasks = ans.Tasks
	if into.Tasks == nil {
		into.Tasks = []map[string]any{}
	}
	return nil
}

// listHost asks one host, caching a good answer and falling back to the
// cached one when there is none.
func (c *Client) listHost(ctx context.Context, name string) HostTasks {
	ht := HostTasks{Host: name}
	resp, err := c.Call(ctx, name, remote.Request{Argv: []string{"fm-control", "list", "--json"}}, c.Tun.ListTimeout)
	if err == nil && resp.Exit != 0 {
		err = fmt.Errorf("list on %s exited %d: %s", name, resp.Exit, firstLine(resp.Stderr))
	}
	if err == nil {
		err = decodeList([]byte(resp.Stdout), &ht)
	}
	if err == nil {
		ht.Reachable = true
		ht.SeenAt = time.Now().UTC().Format(time.RFC3339)
		c.cacheList(ht)
		return ht
	}
	ht.Error = err.Error()
	if cached, ok := c.cachedList(name); ok {
		ht.Tasks, ht.SeenAt, ht.Stale = cached.Tasks, cached.SeenAt, true
	}
	if ht.Tasks == nil {
		ht.Tasks = []map[string]any{}
	}
	return ht
}

func firstLine(s string) string {
	first, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return sanitize(first)
}

// listCachePath is where a host's last answer is kept: state/hosts/.
func (c *Client) listCachePath(name string) string {
	return filepath.Join(c.Home.State, "hosts", name+".list.json")
}

func (c *Client) cacheList(ht HostTasks) {
	data, err := json.Marshal(ht)
	if err != nil {
		return
	}
	path := c.listCachePath(ht.Host)
	// Best effort: a cache that cannot be written costs only the stale
	// rows of a later unreachable listing.
	if os.MkdirAll(filepath.Dir(path), 0o755) == nil {
		_ = state.WriteAtomic(path, data)
	}
}

func (c *Client) cachedList(name string) (HostTasks, bool) {
	data, err := state.ReadSmallFile(c.listCachePath(name), 16<<20)
	if err != nil {
		return HostTasks{}, false
	}
	var ht HostTasks
	return ht, json.Unmarshal(data, &ht) == nil && ht.Host == name
}

// printLines is list --all-hosts into a pipe: as list's own lines, one a
// task, `<address>: host=<host> key=value ...` (the address is the id here,
// <host>/<id> elsewhere), and a host with no task to list its own line.
// What a host that did not answer last said is marked as the table marks
// it: state=unreachable activity=stale, with when it said it.
func printLines(w io.Writer, hosts []HostTasks) {
	for _, h := range hosts {
		var tail string
		if !h.Reachable {
			if h.Stale {
				tail += " seen_at=" + cli.TextValue(h.SeenAt)
			}
			tail += " error=" + cli.TextValue(sanitize(h.Error))
		}
		if len(h.Tasks) == 0 {
			state := " tasks=0"
			if !h.Reachable {
				state = " state=unreachable"
			}
			fmt.Fprintf(w, "%s: host=%s%s%s\n", h.Host, h.Host, state, tail)
			continue
		}
		for _, t := range sortedTasks(h.Tasks) {
			addr := field(t, "id")
			if h.Host != LocalHost {
				addr = h.Host + "/" + addr
			}
			if e := field(t, "error"); e != "-" {
				fmt.Fprintf(w, "%s: host=%s error=%s\n", addr, h.Host, cli.TextValue(e))
				continue
			}
			st, act := field(t, "state"), field(t, "activity")
			if !h.Reachable {
				st, act = "unreachable", "stale"
			}
			fmt.Fprintf(w, "%s: host=%s", addr, h.Host)
			for _, k := range []string{"harness", "kind", "backend", "endpoint"} {
				fmt.Fprintf(w, " %s=%s", k, cli.TextValue(field(t, k)))
			}
			fmt.Fprintf(w, " state=%s activity=%s journal=%s%s\n", cli.TextValue(st), cli.TextValue(act), cli.TextValue(field(t, "journal")), tail)
		}
	}
}

func sortedTasks(tasks []map[string]any) []map[string]any {
	tasks = append([]map[string]any(nil), tasks...)
	sort.Slice(tasks, func(i, j int) bool { return field(tasks[i], "id") < field(tasks[j], "id") })
	return tasks
}

// printTable prints one row per task: HOST ID HARNESS STATE ACTIVITY, and
// one row for a host with none, or that did not answer.
func printTable(w io.Writer, hosts []HostTasks) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "HOST\tID\tHARNESS\tSTATE\tACTIVITY\tNOTE")
	for _, h := range hosts {
		note := ""
		if !h.Reachable {
			note = "unreachable: " + sanitize(h.Error)
			if h.Stale {
				note = fmt.Sprintf("stale, last seen %s; %s", h.SeenAt, note)
			}
		}
		tasks := sortedTasks(h.Tasks)
		if len(tasks) == 0 {
			st := "-"
			if !h.Reachable {
				st = "unreachable"
			}
			fmt.Fprintf(tw, "%s\t-\t-\t%s\t-\t%s\n", h.Host, st, note)
			continue
		}
		for _, t := range tasks {
			st, act := field(t, "state"), field(t, "activity")
			if !h.Reachable {
				// What the host last said, not what is true now.
				st, act = "unreachable", "stale"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", h.Host, field(t, "id"), field(t, "harness"), st, act, note)
		}
	}
	_ = tw.Flush()
}

func field(t map[string]any, key string) string {
	if s, ok := t[key].(string); ok && s != "" {
		return sanitize(s)
	}
	return "-"
}
