package cli

import (
	"fmt"
	"strings"

	"fmctl/cmd/internal/fault"
	"fmctl/harness"
)

// The exit codes every binary shares. They are the rows of exitCodes, the one
// table --help and the README print.
// A fault's class is its exit code.
const (
	CodeDone        = 0
	CodeFailed      = int(fault.ClassFailed)
	CodeUsage       = int(fault.ClassUsage)
	CodeUnconfirmed = int(fault.ClassUnconfirmed)
	CodeTimeout     = int(fault.ClassTimeout)
)

// ExitCode is one row of the exit-code table.
type ExitCode struct {
	Code    int
	Name    string // one word for scripts and docs
	Meaning string // one line
}

var exitCodes = []ExitCode{
	{CodeDone, "done", "it happened: the verb proved its postcondition (fm-send: the agent's own record holds the message, submit=confirmed proof=record; fm-control interrupt: cancel=confirmed, or cancel=no-turn: no turn ran)"},
	{CodeFailed, fault.ClassFailed.String(), "refused or failed; nothing may be assumed done (the error line says what, and what to do next)"},
	{CodeUsage, fault.ClassUsage.String(), "the command line is wrong (an unknown verb or flag, a value outside a flag's set, a missing argument or required flag, an empty message; a bare fm-spawn, fm-control or fm-teardown prints its help here); nothing was done"},
	{CodeUnconfirmed, fault.ClassUnconfirmed.String(), "it was done but not proven (fm-send: typed and Enter sent, but the agent's record does not show it once, submit=queued, unconfirmed, unrecorded or duplicated, or a key whose call timed out; fm-control interrupt: cancel=unconfirmed; fm-control exit: a turn may still run in the harness's daemon); look before retrying"},
	{CodeTimeout, fault.ClassTimeout.String(), "fm-control wait: the timeout passed before the condition held"},
}

// ExitCodes returns the table, in code order.
func ExitCodes() []ExitCode { return append([]ExitCode(nil), exitCodes...) }

// exitCodesHelp is the EXIT CODES section of every --help, from the table.
// It is appended to a help template, so it must not contain "{{".
func exitCodesHelp() string {
	var b strings.Builder
	b.WriteString("\nEXIT CODES:\n")
	for _, c := range exitCodes {
		fmt.Fprintf(&b, "   %d  %-11s  %s\n", c.Code, c.Name, c.Meaning)
	}
	return b.String()
}

// README markers around the generated exit-code table.
const (
	ReadmeExitBegin = "<!-- exit-codes:begin (generated from cmd/internal/cli/exitcodes.go) -->"
	ReadmeExitEnd   = "<!-- exit-codes:end -->"
)

// ExitCodesMarkdown renders the table for the README.
func ExitCodesMarkdown() string {
	var b strings.Builder
	b.WriteString("| code | name | meaning |\n|---|---|---|\n")
	for _, c := range exitCodes {
		fmt.Fprintf(&b, "| %d | %s | %s |\n", c.Code, c.Name, c.Meaning)
	}
	return b.String()
}

// ReplaceReadmeExitCodes returns readme with the generated table between the
// markers.
func ReplaceReadmeExitCodes(readme string) (string, error) {
	return harness.ReplaceReadmeBlock(readme, ReadmeExitBegin, ReadmeExitEnd, ExitCodesMarkdown())
}
