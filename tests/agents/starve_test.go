package agents

import (
	"strings"
	"syscall"
	"time"
)

// starvedFor is how long the agent is held stopped once its composer
// draws the paste: past fm-send's settle and its Enter, as a loaded
// machine held gemini (the oldest channel's three-lines, under the whole
// tier's load), so the Enter waits in the terminal for a process whose
// paste window has not closed.
const starvedFor = 400 * time.Millisecond

// starvedInPasteWindow sends text while the agent is starved right after
// its paste is drawn: the agent's processes (all but the pane shell's
// child, which stopped would hand the terminal to the shell's job control)
// are stopped as soon as the screen shows the text, for starvedFor, and
// continued, so the Enter reaches an agent that wakes with its paste still
// fresh. fm-send's claim is judged by the record as any send's (one copy,
// or exit 3 said honestly). The notes give fm-send's Enters: gemini takes
// the first as a newline, proved so on the screen, and gets one more;
// codex, copilot and kilo, which may get a second Enter anyway, took 2 in
// the run that added this; cline and qwen 1. An agent that is the pane
// shell's own child with none of its own (claude, opencode, pi) is not
// stopped, and the scenario is a plain send: the note says so.
func (l *lab) starvedInPasteWindow(s *scen, text string) {
	first, _, _ := strings.Cut(text, "\n")
	done := make(chan result, 1)
	go func() { done <- l.fm("fm-send", l.addr, text) }()
	stopped := l.stopOnceDrawn(first, 10*time.Second)
	if len(stopped) > 0 {
		time.Sleep(starvedFor)
		for _, pid := range stopped {
			_ = syscall.Kill(pid, syscall.SIGCONT)
		}
	}
	r := <-done
	l.capture(s.name + "-sent")
	if len(stopped) == 0 {
		s.note("nothing below the pane shell's child to stop: a plain send; fm-send enters=%s", field(r.stdout, "enters"))
	} else {
		s.note("stopped %d processes as the paste was drawn; fm-send enters=%s", len(stopped), field(r.stdout, "enters"))
	}
	s.judgeDelivery(r, text, recordLag)
}

// stopOnceDrawn polls the pane until it shows want, then stops the
// agent's processes below the pane shell's child, and returns them.
func (l *lab) stopOnceDrawn(want string, limit time.Duration) []int {
	_, shell := l.pane()
	deadline := time.Now().Add(limit)
	for !strings.Contains(l.screen(false), want) {
		if time.Now().After(deadline) {
			return nil
		}
		time.Sleep(time.Millisecond)
	}
	table := processTable()
	var stopped []int
	for _, pid := range l.descendants() {
		if table[pid].ppid != shell && syscall.Kill(pid, syscall.SIGSTOP) == nil {
			stopped = append(stopped, pid)
		}
	}
	return stopped
}
