package harness

import (
	"path/filepath"
	"strings"
)

// ProcessClass is what a process name says about a pane.
type ProcessClass int

const (
	ProcessOther ProcessClass = iota // neither a harness nor a shell: unattributed
	ProcessShell                     // an interactive shell: the pane is agent-free
	ProcessAgent                     // a verified harness
)

var shellNames = map[string]bool{
	"zsh": true, "bash": true, "sh": true, "dash": true, "ash": true, "ksh": true,
	"mksh": true, "tcsh": true, "csh": true, "fish": true,
}

// agentExact are process names that are a harness only when they match whole:
// "pi" as a substring would claim "pip" or "pipewire".
// kilo's node launcher (bin/kilo, or its alias kilocode) execs its native
// binary as ".kilo"; "kilo" as a substring would claim "kilobytes".
var agentExact = map[string]bool{
	"pi": true, "pi-signed": true, "pi-launcher": true, "Pi": true, "agy": true, "muse": true,
	"kilo": true, ".kilo": true, "kilocode": true,
	// copilot's node loader runs its native binary as a child whose comm
	// is "MainThread" and whose argv[0] ends in .../copilot.
	"copilot": true,
	// cline's launcher names itself cline, and so does the compiled
	// binary it runs (and that binary's hub daemon); "incline" is not it.
	"cline": true, ".cline": true,
}

// agentSubstrings are harness names that identify their process wherever they
// appear (claude's native binary, codex's node launcher, ...). Linux cuts comm
// to 15 bytes, which none of these reach.
var agentSubstrings = []string{"claude", "codex", "opencode", "grok", "kimi", "cursor-agent"}

// ClassifyProcess classifies one process name (a comm or an argv[0]).
func ClassifyProcess(name string) ProcessClass {
	base := strings.TrimPrefix(filepath.Base(strings.TrimSpace(name)), "-")
	if base == "" || base == "." || base == "/" {
		return ProcessOther
	}
	if shellNames[base] {
		return ProcessShell
	}
	if agentExact[base] || strings.HasPrefix(base, "muse-bin-") {
		return ProcessAgent
	}
	lower := strings.ToLower(base)
	for _, s := range agentSubstrings {
		if strings.Contains(lower, s) {
			return ProcessAgent
		}
	}
	return ProcessOther
}

// interpreters run a harness script as argv[1] (codex and others ship as
// node packages), so their argv[1] names the harness.
var interpreters = map[string]bool{"node": true, "bun": true, "deno": true, "python": true, "python3": true}

// ClassifyArgv classifies a process from its comm and argv together.
func ClassifyArgv(comm string, argv []string) ProcessClass {
	if AgentName(comm, argv) != "" {
		return ProcessAgent
	}
	return ClassifyProcess(comm)
}

// AgentName is the name that made a process classify as an agent: its comm,
// its argv[0], or the script an interpreter runs (codex's node launcher). It
// is "" for a process that is not an agent.
func AgentName(comm string, argv []string) string {
	if ClassifyProcess(comm) == ProcessAgent {
		return comm
	}
	if len(argv) == 0 {
		return ""
	}
	if ClassifyProcess(argv[0]) == ProcessAgent {
		return filepath.Base(argv[0])
	}
	if interpreters[filepath.Base(argv[0])] || interpreters[comm] {
		for _, arg := range argv[1:] {
			if strings.HasPrefix(arg, "-") {
				continue
			}
			if ClassifyProcess(arg) == ProcessAgent || argvScript(arg) {
				return filepath.Base(arg)
			}
			break
		}
	}
	return ""
}

// argvScript reports whether an interpreter's script argument is a harness
// that the table attributes by argv only (its ArgvScript, matched whole).
func argvScript(arg string) bool {
	base := filepath.Base(arg)
	for _, h := range harnesses {
		if h.ArgvScript != "" && base == h.ArgvScript {
			return true
		}
	}
	return false
}

// OwnsProcess reports whether an agent process name (an AgentName, or an
// agent name a multiplexer reports) belongs to this harness: a codex running
// in a claude task's pane is an agent, but not the task's agent. Names that
// only match whole (pi, pi-signed, agy, muse, kilo) must match whole here too, so
// pi never claims pi-signed's process.
func (h Harness) OwnsProcess(name string) bool {
	base := strings.TrimPrefix(filepath.Base(strings.TrimSpace(name)), "-")
	if base == "" {
		return false
	}
	if h.ArgvScript != "" {
		return base == h.ArgvScript
	}
	if ClassifyProcess(base) != ProcessAgent {
		return false
	}
	if base == h.Name || base == h.Launch.Binary {
		return true
	}
	switch h.Name {
	case "pi":
		return base == "pi-launcher" || base == "Pi"
	case "muse":
		return strings.HasPrefix(base, "muse-bin-")
	case "kilo":
		return base == ".kilo" || base == "kilocode"
	case "cline":
		return base == ".cline"
	}
	if agentExact[h.Name] || agentExact[h.Launch.Binary] {
		return false
	}
	lower := strings.ToLower(base)
	return strings.Contains(lower, strings.ToLower(h.Launch.Binary)) || strings.Contains(lower, strings.ToLower(h.Name))
}
