package agents

import (
	"strings"
	"syscall"
	"time"

	"fmctl/harness"
)

// harnessScreen is harness h's verified screen signatures.
func harnessScreen(h string) (harness.ScreenSig, bool) {
	hh, ok := harness.Lookup(h)
	if !ok {
		return harness.ScreenSig{}, false
	}
	return hh.Screen()
}

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
// continued. fm-send's claim is judged by the record as any send's; the
// notes say whether the Enter met the open window (enters=2: the first
// became a newline, proved so on the screen, and one more went).
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
	s.note("stopped %d processes as the paste was drawn; fm-send enters=%s", len(stopped), field(r.stdout, "enters"))
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
