package cli

import (
	"fmt"
	"io"
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
	CodeStalled     = int(fault.ClassStalled)
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
	{CodeUnconfirmed, fault.ClassUnconfirmed.String(), "it was done but not proven (fm-send: typed and Enter sent, but the agent's record does not show it once, submit=queued, unconfirmed, unrecorded or duplicated, or a key whose call timed out; fm-control interrupt: cancel=unconfirmed, or --drop-queue's queue-not-dropped; fm-control exit: a turn may still run in the harness's daemon); look before retrying"},
	{CodeTimeout, fault.ClassTimeout.String(), "fm-control wait: the timeout passed before the condition held"},
	{CodeStalled, fault.ClassStalled.String(), "fm-control wait: the agent is busy and showed no progress for FM_STALL_AFTER (its own record unwritten, no report from it), so the condition may never hold; look at it (status, read) before interrupting"},
}

// ExitCodes returns the table, in code order.
func ExitCodes() []ExitCode { return append([]ExitCode(nil), exitCodes...) }

// exitCodesHelp is the EXIT CODES section of every --help, from the
// table: each code's name, its meaning behind --help-exits, so a verb's
// help fits a screen. It is appended to a help template, so it must not
// contain "{{".
func exitCodesHelp() string {
	names := make([]string, len(exitCodes))
	for i, c := range exitCodes {
		names[i] = fmt.Sprintf("%d %s", c.Code, c.Name)
	}
	return "\nEXIT CODES (" + HelpExitsFlag + " says what each means):\n   " + strings.Join(names, ", ") + "\n"
}

// HelpExitsFlag prints the exit-code table with each code's meaning.
const HelpExitsFlag = "--help-exits"

// asksHelpExits reports whether a command line (args[0] is the program)
// has --help-exits before any "--".
func asksHelpExits(args []string) bool {
	for _, a := range args[min(1, len(args)):] {
		switch a {
		case "--":
			return false
		case HelpExitsFlag:
			return true
		}
	}
	return false
}

// printExitCodes is --help-exits: the table, laid out in width columns.
func printExitCodes(w io.Writer, width int) error {
	rows := make([][]string, len(exitCodes))
	for i, c := range exitCodes {
		rows[i] = []string{fmt.Sprintf("   %d", c.Code), c.Name, c.Meaning}
	}
	if _, err := io.WriteString(w, "EXIT CODES (the same for every fm-* binary):\n"); err != nil {
		return err
	}
	return WriteTable(w, width, nil, rows)
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
