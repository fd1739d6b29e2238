// Command fakeagent is a tiny stand-in for an interactive coding agent
// (claude, codex, opencode, grok, muse, ...) that fmctl's tests run inside a
// real tmux pane. Tests build it under the name of a real harness, because the
// process name is what fmctl's classifier sees:
//
//	go build -o "$dir/claude" ./tests/fakeagent
//
// It puts its terminal into raw mode, enables bracketed paste, and records
// exactly what it received so a test can assert on the bytes.
//
// Environment:
//
//	FAKEAGENT_LOG=<path>            every raw byte read from stdin, appended as read
//	FAKEAGENT_EVENTS=<path>         one event per line (see below), appended
//	FAKEAGENT_IGNORE_EXIT=1         "/exit" and "/quit" are submitted like any text
//	FAKEAGENT_CLEAR_DELAY=<dur>     after Enter, keep the old composer text visible
//	                                for <dur> (Go duration) before clearing it
//	FAKEAGENT_RECORD_DELAY=<dur>    write a prompt into the CLI's record only <dur> after Enter
//	FAKEAGENT_ALT_WINDOW=<dur>      a lone ESC waits <dur> (not 30 ms) for more
//	                                input, and an ESC followed by a printable
//	                                byte is Alt+<byte> (event "alt <c>"), not the
//	                                Escape key and text: as gemini reads them
//	FAKEAGENT_INTERRUPT_EXITS=1     Escape or Ctrl+C makes the agent exit
//	FAKEAGENT_MUSE_LOG=<path>       emulate muse's JSON-lines session log
//	FAKEAGENT_TURNS=<dir>           a turn-hangs file there keeps each turn
//	                                running in the record across interrupts
//	                                (fakeframe.HangTurn)
//	FAKEAGENT_BANNER=<text>         a line drawn under the header, Go escapes
//	                                (\x1b, \a) decoded: raw terminal sequences
//	                                an agent might print (OSC 52, OSC 8)
//
// Telemetry: the hooks fm-spawn wires for codex (-c hooks.<Event>=... on the
// command line) and claude (.claude/settings.local.json in the working
// directory) run as the real CLIs run them: SessionStart at start,
// UserPromptSubmit then Stop on each submit, SessionEnd on an /exit or /quit.
//
// Events (FAKEAGENT_EVENTS):
//
//	start <name> pid=<pid>
//	submit <%q of the submitted text>
//	paste <%q of the pasted text, CR and CRLF turned into LF>
//	interrupt escape
//	interrupt ctrl-c
//	clear
//	exit
package main

import (
	"bytes"
	"fmctl/tests/fakeframe"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"
	"unsafe"
)

// escTimeout is how long a lone ESC waits for the rest of an escape sequence
// before it counts as the Escape key.
const escTimeout = 30 * time.Millisecond

var (
	pasteStart = []byte("\x1b[200~")
	pasteEnd   = []byte("\x1b[201~")
)

// agent holds the composer, the transcript and the input parser state. It is
// driven from a single goroutine; feed and the timer callbacks are not safe
// for concurrent use.
type agent struct {
	name   string
	events *os.File // nil: no event log
	muse   *os.File // nil: not emulating muse
	hooks  hooks    // the telemetry wiring a real harness would run

	ignoreExit      bool
	interruptExits  bool
	turns           string // FAKEAGENT_TURNS
	clearDelay      time.Duration
	recordDelay     time.Duration // FAKEAGENT_RECORD_DELAY
	altKeys         bool          // ESC + printable byte is Alt+<byte>
	banner          string        // drawn raw under the header, when set
	quit            func()        // called when the agent decides to exit
	startClearTimer func(time.Duration)

	composer   []rune
	transcript []string
	// pastes are the long pastes in the composer, which claude draws
	// collapsed as "[Pasted text #N +M lines]" (M: the lines past the
	// first), never as their text.
	pastes []string

	pending  []byte // unparsed input: an incomplete escape sequence or rune
	inPaste  bool
	pasteBuf []byte
}

func (a *agent) event(format string, args ...any) {
	if a.events == nil {
		return
	}
	// One Write per line on an O_APPEND file: no buffering, no interleaving.
	a.events.Write([]byte(fmt.Sprintf(format, args...) + "\n"))
}

// museRecord appends one JSON line to the emulated muse session log.
func (a *agent) museRecord(line string) {
	if a.muse == nil {
		return
	}
	a.muse.Write([]byte(line + "\n"))
}

// feed appends input bytes and parses as much as is complete. It reports
// whether a lone ESC is left pending, so the caller can arm the ESC timer.
func (a *agent) feed(p []byte) (lonelyEsc bool) {
	a.pending = append(a.pending, p...)
	a.parse()
	return !a.inPaste && len(a.pending) == 1 && a.pending[0] == 0x1b
}

// escapeTimeout is called when a lone ESC was not followed by more input in
// time: it is the Escape key.
func (a *agent) escapeTimeout() {
	if !a.inPaste && len(a.pending) == 1 && a.pending[0] == 0x1b {
		a.pending = a.pending[:0]
		a.interrupt("escape")
	}
}

func (a *agent) parse() {
	for {
		if a.inPaste {
			i := bytes.Index(a.pending, pasteEnd)
			if i < 0 {
				// Keep a tail that may be the start of a split end marker.
				keep := len(pasteEnd) - 1
				if len(a.pending) > keep {
					n := len(a.pending) - keep
					a.pasteBuf = append(a.pasteBuf, a.pending[:n]...)
					a.pending = append(a.pending[:0], a.pending[n:]...)
				}
				return
			}
			a.pasteBuf = append(a.pasteBuf, a.pending[:i]...)
			a.pending = a.pending[i+len(pasteEnd):]
			a.inPaste = false
			a.finishPaste()
			continue
		}
		if len(a.pending) == 0 {
			return
		}
		b := a.pending[0]
		switch {
		case b == 0x1b:
			if !a.parseEscape() {
				return // incomplete: wait for more bytes
			}
		case b == 0x0d:
			a.pending = a.pending[1:]
			a.submit()
		case b == 0x0a: // Ctrl+J: a literal newline in the composer
			a.pending = a.pending[1:]
			a.composer = append(a.composer, '\n')
		case b == 0x7f || b == 0x08:
			a.pending = a.pending[1:]
			if n := len(a.composer); n > 0 {
				a.composer = a.composer[:n-1]
			}
		case b == 0x15:
			a.pending = a.pending[1:]
			a.composer, a.pastes = a.composer[:0], nil
			a.event("clear")
		case b == 0x03:
			a.pending = a.pending[1:]
			a.interrupt("ctrl-c")
		case b == 0x09:
			a.pending = a.pending[1:]
			a.composer = append(a.composer, '\t')
		case b < 0x20:
			a.pending = a.pending[1:] // other control bytes are ignored
		default:
			if !utf8.FullRune(a.pending) {
				return // wait for the rest of the rune
			}
			r, size := utf8.DecodeRune(a.pending)
			a.pending = a.pending[size:]
			if r != utf8.RuneError || size > 1 {
				a.composer = append(a.composer, r)
			}
		}
	}
}

// parseEscape handles input starting with ESC. It returns false if more bytes
// are needed to decide.
func (a *agent) parseEscape() bool {
	p := a.pending
	if len(p) < 2 {
		return false
	}
	switch p[1] {
	case '[': // CSI: parameter/intermediate bytes 0x20-0x3F, final 0x40-0x7E
		for i := 2; i < len(p); i++ {
			c := p[i]
			if c >= 0x40 && c <= 0x7e {
				seq := p[:i+1]
				a.pending = p[i+1:]
				if bytes.Equal(seq, pasteStart) {
					a.inPaste = true
					a.pasteBuf = a.pasteBuf[:0]
				}
				return true // other CSI sequences are ignored
			}
			if c < 0x20 || c > 0x3f {
				// Not a well-formed CSI: drop the ESC [ and go on.
				a.pending = p[2:]
				return true
			}
		}
		return false
	case 'O': // SS3 (e.g. F1-F4, application cursor keys)
		if len(p) < 3 {
			return false
		}
		a.pending = p[3:]
		return true
	default:
		if a.altKeys && p[1] >= 0x20 && p[1] < 0x7f {
			a.pending = p[2:]
			a.event("alt %c", p[1])
			return true
		}
		// ESC followed by something that does not continue an escape
		// sequence (another ESC, a letter, ...): the ESC is the Escape key
		// and the next byte is parsed on its own.
		a.pending = p[1:]
		a.interrupt("escape")
		return true
	}
}

func (a *agent) finishPaste() {
	s := string(a.pasteBuf)
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	a.pasteBuf = a.pasteBuf[:0]
	a.event("paste %q", s)
	if _, collapsed := fakeframe.CollapsedPaste(a.name, len(a.pastes), s); collapsed {
		a.pastes = append(a.pastes, s)
	}
	for _, r := range s {
		if r == utf8.RuneError {
			continue
		}
		a.composer = append(a.composer, r)
	}
}

func (a *agent) interrupt(kind string) {
	a.event("interrupt %s", kind)
	if dir, err := os.Getwd(); err == nil && a.turns != "" {
		fakeframe.InterruptTurn(a.turns, a.name, os.Getenv("HOME"), dir)
	}
	if kind == "escape" {
		a.museRecord(`{"type":"run_finished","run_id":"run-1","terminal":"cancelled"}`)
	}
	if a.interruptExits {
		a.quit()
	}
}

func (a *agent) submit() {
	text := string(a.composer)
	a.event("submit %q", text)
	a.transcript = append(a.transcript, a.shown())
	if !a.ignoreExit {
		if t := strings.TrimSpace(text); t == "/exit" || t == "/quit" {
			// Only an exit the agent chose reports its end: a hung-up or
			// killed agent says nothing, and a test tearing down its
			// server must not find a late write in the home it removes.
			a.hooks.run("SessionEnd")
			a.quit()
			return
		}
	}
	// The fake's turn ends as soon as it starts, recorded as the CLI it
	// is built as records a prompt.
	if dir, err := os.Getwd(); err == nil {
		record := func() {
			fakeframe.RecordPrompt(a.name, os.Getenv("HOME"), dir, text)
			if a.turns != "" && !strings.HasPrefix(strings.TrimSpace(text), "/") {
				fakeframe.HangTurn(a.turns, a.name, os.Getenv("HOME"), dir)
			}
		}
		if a.recordDelay > 0 {
			// A record written late, as a queued message's is when the
			// turn before it ends.
			time.AfterFunc(a.recordDelay, record)
		} else {
			record()
		}
	}
	a.hooks.run("UserPromptSubmit")
	a.hooks.run("Stop")
	if a.clearDelay > 0 && a.startClearTimer != nil {
		// The old text stays in the composer until the timer fires.
		a.startClearTimer(a.clearDelay)
		return
	}
	a.composer, a.pastes = a.composer[:0], nil
}

// clearTimeout is the end of FAKEAGENT_CLEAR_DELAY: the composer is cleared.
func (a *agent) clearTimeout() {
	a.composer, a.pastes = a.composer[:0], nil
}

// screen renders the whole screen: header, transcript, then the composer in
// the frame the harness draws (tests/fakeframe), with the cursor left at the
// end of the composer's text. rows limits the height (0: no limit); the
// oldest transcript lines are dropped first.
func (a *agent) screen(rows int) string {
	composer := oneLine(a.shown())
	prefix, placeholder, above, below := fakeframe.Frame(a.name, composer == "")
	lines := []string{a.name + " fake agent"}
	if a.banner != "" {
		lines = append(lines, a.banner)
	}
	tr := make([]string, 0, len(a.transcript))
	for _, t := range a.transcript {
		tr = append(tr, "you: "+oneLine(t))
	}
	if rows > 0 {
		if room := rows - 2 - len(above) - len(below); len(tr) > room {
			if room < 0 {
				room = 0
			}
			tr = tr[len(tr)-room:]
		}
	}
	lines = append(lines, tr...)
	lines = append(lines, above...)
	row := len(lines) + 1
	lines = append(lines, prefix+composer+placeholder)
	lines = append(lines, below...)
	col := utf8.RuneCountInString(prefix+composer) + 1
	return "\x1b[H\x1b[2J" + strings.Join(lines, "\r\n") + fmt.Sprintf("\x1b[%d;%dH", row, col)
}

// shown is the composer as drawn: each long paste collapsed to claude's
// placeholder (the transcript keeps it so too, and so never draws a
// megabyte).
func (a *agent) shown() string {
	composer := string(a.composer)
	for i, p := range a.pastes {
		shown, _ := fakeframe.CollapsedPaste(a.name, i, p)
		composer = strings.Replace(composer, p, shown, 1)
	}
	return composer
}

func oneLine(s string) string { return strings.ReplaceAll(s, "\n", "⏎") }

// --- terminal ---------------------------------------------------------------

func getTermios(fd int) (*syscall.Termios, error) {
	var t syscall.Termios
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), syscall.TCGETS, uintptr(unsafe.Pointer(&t))); e != 0 {
		return nil, e
	}
	return &t, nil
}

func setTermios(fd int, t *syscall.Termios) error {
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), syscall.TCSETS, uintptr(unsafe.Pointer(t))); e != 0 {
		return e
	}
	return nil
}

// makeRaw puts fd into raw mode (like cfmakeraw) and returns the old state.
func makeRaw(fd int) (*syscall.Termios, error) {
	old, err := getTermios(fd)
	if err != nil {
		return nil, err
	}
	raw := *old
	raw.Iflag &^= syscall.IGNBRK | syscall.BRKINT | syscall.PARMRK | syscall.ISTRIP |
		syscall.INLCR | syscall.IGNCR | syscall.ICRNL | syscall.IXON | syscall.IXOFF
	raw.Oflag &^= syscall.OPOST
	raw.Lflag &^= syscall.ECHO | syscall.ECHONL | syscall.ICANON | syscall.ISIG | syscall.IEXTEN
	raw.Cflag &^= syscall.CSIZE | syscall.PARENB
	raw.Cflag |= syscall.CS8
	raw.Cc[syscall.VMIN] = 1
	raw.Cc[syscall.VTIME] = 0
	if err := setTermios(fd, &raw); err != nil {
		return nil, err
	}
	return old, nil
}

func termRows(fd int) int {
	var ws struct{ Row, Col, X, Y uint16 }
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), syscall.TIOCGWINSZ, uintptr(unsafe.Pointer(&ws))); e != 0 {
		return 0
	}
	return int(ws.Row)
}

// --- main -------------------------------------------------------------------

func openAppend(env string) *os.File {
	path := os.Getenv(env)
	if path == "" {
		return nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		fmt.Fprintf(os.Stderr, "fakeagent: %s: %v\n", env, err)
		os.Exit(2)
	}
	return f
}

func main() {
	name := filepath.Base(os.Args[0])
	inFd, outFd := int(os.Stdin.Fd()), int(os.Stdout.Fd())

	byteLog := openAppend("FAKEAGENT_LOG")
	a := &agent{
		name:           name,
		events:         openAppend("FAKEAGENT_EVENTS"),
		muse:           openAppend("FAKEAGENT_MUSE_LOG"),
		ignoreExit:     os.Getenv("FAKEAGENT_IGNORE_EXIT") == "1",
		interruptExits: os.Getenv("FAKEAGENT_INTERRUPT_EXITS") == "1",
		turns:          os.Getenv("FAKEAGENT_TURNS"),
	}
	if s := os.Getenv("FAKEAGENT_BANNER"); s != "" {
		b, err := strconv.Unquote(`"` + s + `"`)
		if err != nil {
			fmt.Fprintf(os.Stderr, "fakeagent: FAKEAGENT_BANNER: %v\n", err)
			os.Exit(2)
		}
		a.banner = b
	}
	a.clearDelay, _ = envDuration("FAKEAGENT_CLEAR_DELAY")
	a.recordDelay, _ = envDuration("FAKEAGENT_RECORD_DELAY")
	escWait := escTimeout
	if d, ok := envDuration("FAKEAGENT_ALT_WINDOW"); ok {
		escWait, a.altKeys = d, true
	}

	// Signals first, so a SIGHUP/SIGTERM that races start-up still restores.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGHUP, syscall.SIGTERM, syscall.SIGINT, syscall.SIGWINCH)

	oldState, rawErr := makeRaw(inFd)
	if rawErr != nil {
		fmt.Fprintf(os.Stderr, "fakeagent: stdin is not a terminal (%v); running without raw mode\n", rawErr)
	}

	exiting := false
	a.quit = func() {
		if exiting {
			return
		}
		exiting = true
		a.event("exit")
		// The cursor sits on the composer row, above the frame's footer:
		// erase from there down, so the shell's prompt is not drawn over
		// leftover footer text.
		os.Stdout.Write([]byte("\x1b[?2004l\x1b[J\r\n"))
		if oldState != nil {
			setTermios(inFd, oldState)
		}
		os.Exit(0)
	}

	clearTimer := time.NewTimer(time.Hour)
	clearTimer.Stop()
	a.startClearTimer = func(d time.Duration) { clearTimer.Reset(d) }
	escTimer := time.NewTimer(time.Hour)
	escTimer.Stop()

	redraw := func() { os.Stdout.Write([]byte(a.screen(termRows(outFd)))) }

	// Its start is reported before the composer is drawn, so whoever saw
	// the composer finds the report already written.
	a.hooks = loadHooks(os.Args[1:])
	a.hooks.run("SessionStart")
	os.Stdout.Write([]byte("\x1b[?2004h"))
	redraw()
	a.museRecord(`{"type":"run_started","run_id":"run-1"}`)
	a.event("start %s pid=%d", name, os.Getpid())

	// The reader logs each read before anything else sees it, so the byte log
	// is exactly what arrived, in order, even if the agent then exits.
	input := make(chan []byte)
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := os.Stdin.Read(buf)
			if n > 0 {
				if byteLog != nil {
					byteLog.Write(buf[:n])
				}
				input <- append([]byte(nil), buf[:n]...)
			}
			if err != nil {
				close(input)
				return
			}
		}
	}()

	for {
		select {
		case p, ok := <-input:
			if !ok {
				a.quit() // stdin closed
			}
			escTimer.Stop()
			if a.feed(p) {
				escTimer.Reset(escWait)
			}
			redraw()
		case <-escTimer.C:
			a.escapeTimeout()
			redraw()
		case <-clearTimer.C:
			a.clearTimeout()
			redraw()
		case s := <-sigs:
			if s == syscall.SIGWINCH {
				redraw()
				continue
			}
			a.quit()
		}
	}
}

// envDuration reads a Go duration switch; a malformed one ends the fake
// at once (exit 2), as a test's typo must not pass unnoticed.
func envDuration(name string) (time.Duration, bool) {
	s := os.Getenv(name)
	if s == "" {
		return 0, false
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		fmt.Fprintf(os.Stderr, "fakeagent: %s: %v\n", name, err)
		os.Exit(2)
	}
	return d, true
}
