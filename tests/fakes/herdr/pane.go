package herdrfake

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// herdr 0.7.1's pane and agent subcommands (src/cli/pane.rs, src/cli/agent.rs).
var realPaneSubs = []string{"list", "current", "get", "layout", "process-info", "neighbor", "edges",
	"focus", "resize", "zoom", "read", "rename", "split", "swap", "move", "close", "send-text",
	"send-keys", "report-agent", "report-agent-session", "release-agent", "report-metadata", "run"}
var realAgentSubs = []string{"list", "get", "read", "send", "rename", "focus", "wait", "attach", "start", "explain"}

// field is one member of a tagged result, in output order.
type field struct {
	key   string
	value any
}

// tagged renders a result the way serde renders herdr's internally tagged
// ResponseResult: "type" first, then the variant's fields in order.
func tagged(typ string, fields ...field) json.RawMessage {
	var b strings.Builder
	t, _ := json.Marshal(typ)
	b.WriteString(`{"type":` + string(t))
	for _, fl := range fields {
		k, _ := json.Marshal(fl.key)
		v, _ := json.Marshal(fl.value)
		b.WriteString("," + string(k) + ":" + string(v))
	}
	b.WriteString("}")
	return json.RawMessage(b.String())
}

func (f *fake) printJSON(v any) int {
	b, _ := json.Marshal(v)
	fmt.Fprintln(f.stdout, string(b))
	return 0
}

func (f *fake) paneCmd(args []string) int {
	return f.subcommand("pane", args, realPaneSubs, map[string]func([]string) int{
		"list":         f.paneList,
		"get":          f.paneGet,
		"read":         f.paneRead,
		"send-text":    f.paneSendText,
		"send-keys":    f.paneSendKeys,
		"run":          f.paneRun,
		"close":        f.paneClose,
		"process-info": f.paneProcessInfo,
	})
}

func (f *fake) agentCmd(args []string) int {
	return f.subcommand("agent", args, realAgentSubs, map[string]func([]string) int{
		"get": f.agentGet,
	})
}

// pane looks a pane up after connecting; on failure it has already printed
// herdr's answer and returns the exit code.
func (f *fake) pane(id, requestID string) (paneRef, int) {
	if !f.connect() {
		return paneRef{}, 1
	}
	r, ok := f.sess().findPane(id)
	if !ok {
		return r, f.apiError(requestID, "pane_not_found", "pane "+id+" not found")
	}
	return r, -1
}

func (f *fake) paneGet(args []string) int {
	if len(args) != 1 {
		return f.usage("usage: herdr pane get <pane_id>")
	}
	r, code := f.pane(args[0], "cli:pane:get")
	if code >= 0 {
		return code
	}
	return f.respond("cli:pane:get", tagged("pane_info", field{"pane", f.paneInfo(f.sess(), r)}))
}

func (f *fake) paneRead(args []string) int {
	if len(args) == 0 {
		return f.usage("usage: herdr pane read <pane_id> [--source visible|recent|recent-unwrapped] [--lines N] [--format text|ansi] [--ansi]")
	}
	source, lines := "recent", -1
	for i := 1; i < len(args); i++ {
		switch a := args[i]; a {
		case "--source", "--lines", "--format":
			if i+1 >= len(args) {
				return f.usage("missing value for " + a)
			}
			v := args[i+1]
			i++
			switch a {
			case "--source":
				switch v {
				case "visible", "recent", "detection":
					source = v
				case "recent-unwrapped", "recent_unwrapped":
					source = "recent-unwrapped"
				default:
					return f.ioError(fmt.Sprintf("Custom { kind: Other, error: %q }", "invalid read source: "+v))
				}
			case "--lines":
				n, err := strconv.ParseUint(v, 10, 32)
				if err != nil {
					return f.ioError(fmt.Sprintf("Custom { kind: Other, error: %q }", "invalid value for --lines: "+v))
				}
				lines = int(n)
			case "--format":
				if v != "text" && v != "ansi" {
					return f.ioError(fmt.Sprintf("Custom { kind: Other, error: %q }", "invalid read format: "+v))
				}
			}
		case "--ansi", "--raw":
			// The fake draws no styling, so every format is the same text.
		default:
			return f.usage("unknown option: " + a)
		}
	}
	if !f.connect() {
		return 1
	}
	r, ok := f.sess().findPane(args[0])
	if !ok {
		// pane read prints only the error body, not the whole response.
		b, _ := json.Marshal(errorBody{"pane_not_found", "pane " + args[0] + " not found"})
		fmt.Fprintln(f.stderr, string(b))
		return 1
	}
	rows := r.pane.screen()
	switch source {
	case "visible", "detection":
		rows = tail(rows, viewportRows)
	default:
		n := 80
		if lines >= 0 {
			n = min(lines, 1000)
		}
		// herdr 0.7.1 returns nothing at all for a recent read asking for fewer
		// lines than the viewport has rows (firstmate's verification notes).
		if lines >= 0 && lines < viewportRows {
			rows = nil
		}
		rows = tail(rows, n)
	}
	if len(rows) > 0 {
		fmt.Fprint(f.stdout, strings.Join(rows, "\n")+"\n")
	}
	return 0
}

func tail(rows []string, n int) []string {
	if len(rows) > n {
		return rows[len(rows)-n:]
	}
	return rows
}

func (f *fake) paneSendText(args []string) int {
	if len(args) < 2 {
		return f.usage("usage: herdr pane send-text <pane_id> <text>")
	}
	r, code := f.pane(args[0], "cli:request")
	if code >= 0 {
		return code
	}
	text := strings.Join(args[1:], " ")
	f.log("input.log", fmt.Sprintf("text %q", text))
	f.typeText(r.pane, text)
	f.dirty = true
	return 0
}

func (f *fake) paneSendKeys(args []string) int {
	if len(args) < 2 {
		return f.usage("usage: herdr pane send-keys <pane_id> <key> [key ...]")
	}
	r, code := f.pane(args[0], "cli:request")
	if code >= 0 {
		return code
	}
	// herdr encodes every key before sending any: one bad key sends nothing.
	var keys []keyCombo
	for _, name := range args[1:] {
		k, ok := parseKey(name)
		if !ok {
			return f.apiError("cli:request", "invalid_key", "unsupported key "+name)
		}
		keys = append(keys, k)
	}
	for i, k := range keys {
		f.log("input.log", "key "+args[1+i])
		f.pressKey(r.pane, k)
	}
	f.dirty = true
	return 0
}

// paneRun is herdr's send_input: the text (as a paste when the program asked
// for bracketed paste, which every emulated program does) then Enter.
func (f *fake) paneRun(args []string) int {
	if len(args) < 2 {
		return f.usage("usage: herdr pane run <pane_id> <command>")
	}
	r, code := f.pane(args[0], "cli:request")
	if code >= 0 {
		return code
	}
	text := strings.Join(args[1:], " ")
	f.log("input.log", fmt.Sprintf("text %q", text))
	f.log("input.log", "key enter")
	r.pane.Composer += text
	f.submit(r.pane)
	r.pane.Revision++
	f.dirty = true
	return 0
}

func (f *fake) paneClose(args []string) int {
	if len(args) != 1 {
		return f.usage("usage: herdr pane close <pane_id>")
	}
	r, code := f.pane(args[0], "cli:pane:close")
	if code >= 0 {
		return code
	}
	f.sess().closePane(r)
	f.dirty = true
	return f.respond("cli:pane:close", tagged("ok"))
}

// agentGet resolves its target as herdr does: a pane without an agent and a
// target that names nothing both answer agent_not_found.
func (f *fake) agentGet(args []string) int {
	if len(args) != 1 {
		return f.usage("usage: herdr agent get <target>")
	}
	if !f.connect() {
		return 1
	}
	s := f.sess()
	r, ok := s.findPane(args[0])
	if !ok || !(r.pane.isAgent() || f.registered(r.pane)) {
		return f.apiError("cli:agent:get", "agent_not_found", "agent target "+args[0]+" not found")
	}
	p := f.paneInfo(s, r)
	return f.respond("cli:agent:get", tagged("agent_info", field{"agent", agentInfo{
		TerminalID: p.TerminalID, Agent: p.Agent, AgentStatus: p.AgentStatus, WorkspaceID: p.WorkspaceID,
		TabID: p.TabID, PaneID: p.PaneID, Focused: p.Focused, Cwd: p.Cwd, ForegroundCwd: p.ForegroundCwd,
		Revision: p.Revision}}))
}
