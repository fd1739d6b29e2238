package stubmodel

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Turn is what one request asks of the model, read from any dialect.
type Turn struct {
	Prompt      string // the newest user prompt's text
	ToolResults int    // tool results the CLI sent back since that prompt
	Tools       []Tool // the tools the CLI offers
	Stream      bool
	JSONOnly    bool // the CLI asked for a JSON document (gemini's side checks)
}

// addResult counts one tool result sent back since the prompt.
func (t *Turn) addResult() { t.ToolResults++ }

// addText reads one block of user text, in order: a prompt starts the count
// of tool results again. What a CLI adds on its own is not a prompt:
// claude's <system-reminder> blocks (also inside tool results) and its
// "[Request interrupted by user]" marker, codex's <environment_context>
// and <turn_aborted>. claude merges consecutive user turns into one message
// (an interrupted tool's result, the marker, the next prompt), so the
// blocks are read in order rather than a message at a time.
func (t *Turn) addText(text string) {
	s := strings.TrimSpace(text)
	if s == "" || strings.HasPrefix(s, "[Request interrupted") || (strings.HasPrefix(s, "<") && strings.HasSuffix(s, ">")) {
		return
	}
	t.Prompt, t.ToolResults = text, 0
}

// Tool is one tool a CLI offers, as much of it as the stub needs to call it.
type Tool struct {
	Name     string
	Params   map[string]string // parameter name -> JSON type
	Required []string          // the parameters the schema requires
	Custom   bool              // a freeform tool whose input is raw text (codex's exec)
}

// Call is one tool call the stub makes.
type Call struct {
	Name   string
	Args   map[string]any // a function tool's arguments
	Input  string         // a custom tool's raw input
	Custom bool
}

// The tools each CLI calls to run a command and to write a file, by the
// names they offer them under (claude, pi and opencode, gemini, codex,
// cline).
var (
	shellTools = []string{"Bash", "bash", "run_shell_command", "exec_command", "shell", "run_commands"}
	writeTools = []string{"Write", "write", "write_file", "editor"}
)

// ShellCommand is what the tool scenario runs in dir, after sleeping for
// sleep.
func ShellCommand(dir string, sleep time.Duration) string {
	cmd := fmt.Sprintf("printf 'ran by the fmctl stub model\\n' > %s", filepath.Join(dir, ShellFile))
	if sleep > 0 {
		// Not a leading sleep: qwen-code refuses a command that starts with
		// "sleep N" and more ("Run blocking commands in the background").
		cmd = fmt.Sprintf("cd %s && sleep %d && %s", dir, int(sleep.Seconds()), cmd)
	}
	return cmd
}

// WriteContent is what the tool scenario writes to WriteFile.
const WriteContent = "written by the fmctl stub model\n"

// nextCall is the tool call the tool scenario makes at this point of the
// turn, or ok=false when its calls are done (or the CLI offers none) and the
// model should answer in words.
func nextCall(t Turn, sc Scenario) (Call, bool) {
	dir := sc.Dir
	if dir == "" {
		return Call{}, false
	}
	switch t.ToolResults {
	case 0:
		return shellCall(t, ShellCommand(dir, sc.Duration), sc.Escalate)
	case 1:
		path := filepath.Join(dir, WriteFile)
		if c, ok := writeCall(t, path); ok {
			return c, true
		}
		return shellCall(t, fmt.Sprintf("printf %%s %q > %s", WriteContent, path), sc.Escalate)
	}
	return Call{}, false
}

func findTool(t Turn, names []string) (Tool, bool) {
	for _, name := range names {
		for _, tool := range t.Tools {
			if tool.Name == name && !tool.Custom {
				return tool, true
			}
		}
	}
	return Tool{}, false
}

// shellCall runs cmd with the CLI's shell tool; escalate asks codex's
// exec_command to run it outside the sandbox (EscalateWord).
func shellCall(t Turn, cmd string, escalate bool) (Call, bool) {
	if tool, ok := findTool(t, shellTools); ok {
		args := map[string]any{}
		for name, typ := range tool.Params {
			switch {
			case name == "command" && typ == "array":
				args[name] = []string{"bash", "-lc", cmd}
			case name == "command" || name == "cmd":
				args[name] = cmd
			case name == "commands":
				// cline's run_commands takes a list of shell lines.
				args[name] = []string{cmd}
			case name == "description":
				args[name] = "fmctl stub model's command"
			}
		}
		return Call{Name: tool.Name, Args: args}, true
	}
	if t.hasCustom("exec") {
		args := "{cmd: " + jsString(cmd) + "}"
		if escalate {
			args = "{cmd: " + jsString(cmd) + ", sandbox_permissions: \"require_escalated\", justification: \"fmctl stub model's command\"}"
		}
		return Call{Name: "exec", Custom: true, Input: "const r = await tools.exec_command(" + args + ");\ntext(r.output ?? \"\");\n"}, true
	}
	return Call{}, false
}

func writeCall(t Turn, path string) (Call, bool) {
	if tool, ok := findTool(t, writeTools); ok {
		args := map[string]any{}
		for name := range tool.Params {
			switch name {
			case "file_path", "filePath", "path":
				args[name] = path
			case "content", "new_text":
				args[name] = WriteContent
			}
		}
		return Call{Name: tool.Name, Args: args}, true
	}
	if t.hasCustom("exec") {
		patch := "*** Begin Patch\n*** Add File: " + path + "\n+" + WriteContent[:len(WriteContent)-1] + "\n*** End Patch\n"
		return Call{Name: "exec", Custom: true, Input: "await tools.apply_patch(" + jsString(patch) + ");\ntext(\"patched\");\n"}, true
	}
	return Call{}, false
}

func (t Turn) hasCustom(name string) bool {
	return slices.ContainsFunc(t.Tools, func(tool Tool) bool { return tool.Custom && tool.Name == name })
}

// jsString quotes s as a JavaScript string literal (JSON's are valid JS).
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// functionTool reads a function tool's parameter names, types and required
// parameters from its JSON Schema.
func functionTool(name string, schema json.RawMessage) Tool {
	var s struct {
		Properties map[string]struct {
			Type any `json:"type"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	json.Unmarshal(schema, &s)
	params := map[string]string{}
	for name, p := range s.Properties {
		typ, _ := p.Type.(string)
		// Gemini's own schema dialect spells types in capitals.
		params[name] = strings.ToLower(typ)
	}
	return Tool{Name: name, Params: params, Required: s.Required}
}
