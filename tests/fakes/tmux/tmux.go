package tmuxfake

import (
	"fmctl/tests/fakeframe"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
)

// Main runs one fake tmux invocation and returns its exit status.
func Main() int {
	args := os.Args[1:]
	// Global options: the server selection flags are accepted and ignored,
	// since the fake has one world per $FAKE_TMUX_DIR, and so is -u (the
	// fake always prints UTF-8). calls.log holds what the server is asked
	// to do, past them.
	socket := "default"
	for len(args) > 0 && (args[0] == "-L" || args[0] == "-S" || args[0] == "-f" || args[0] == "-u") {
		if args[0] == "-u" {
			args = args[1:]
			continue
		}
		if len(args) < 2 {
			return fail("option %s requires an argument", args[0])
		}
		if args[0] == "-L" {
			socket = args[1]
		}
		args = args[2:]
	}
	// A test that writes a socket name into $FAKE_TMUX_DIR/socket makes the
	// fake answer only on that -L name, as a server on one socket does.
	if want, err := os.ReadFile(path("socket")); err == nil && strings.TrimSpace(string(want)) != socket {
		return fail("error connecting to /tmp/tmux-fake/%s (No such file or directory)", socket)
	}
	appendLine("calls.log", strings.Join(args, " "))
	if len(args) == 0 {
		return fail("fake tmux needs a command")
	}
	// FAKE_TMUX_HANG=<command> makes any invocation holding that command
	// never answer, as a wedged tmux server does; the caller's timeout has
	// to end it. It hangs before taking the world lock, as a real client
	// stuck on its socket holds nothing.
	if hang := os.Getenv("FAKE_TMUX_HANG"); hang != "" {
		for _, cmd := range splitCommands(args) {
			if len(cmd) > 0 && cmd[0] == hang {
				appendLine("hung.log", strings.Join(args, " "))
				time.Sleep(24 * time.Hour)
			}
		}
	}
	var out strings.Builder
	err := withWorld(func(w *World) error {
		for _, cmd := range splitCommands(args) {
			if len(cmd) == 0 {
				continue
			}
			if flag("fail-" + cmd[0]) {
				return fmt.Errorf("fake failure of %s", cmd[0])
			}
			if err := run(w, cmd, &out); err != nil {
				return err
			}
		}
		return nil
	})
	os.Stdout.WriteString(out.String())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

func fail(format string, args ...any) int {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
	return 1
}

// splitCommands applies tmux's argv rule: a word ending in ';' ends a
// command (the ';' is dropped), and a word ending in "\;" keeps one ';'.
func splitCommands(args []string) [][]string {
	var cmds [][]string
	var cur []string
	for _, a := range args {
		if strings.HasSuffix(a, ";") {
			a = a[:len(a)-1]
			if strings.HasSuffix(a, `\`) {
				cur = append(cur, a[:len(a)-1]+";")
				continue
			}
			if a != "" {
				cur = append(cur, a)
			}
			cmds = append(cmds, cur)
			cur = nil
			continue
		}
		cur = append(cur, a)
	}
	return append(cmds, cur)
}

// flagSpec lists, per command, its boolean flags and the flags that take a
// value. Anything else is rejected as tmux would.
type flagSpec struct {
	bools  string
	values string
}

var commands = map[string]flagSpec{
	"list-windows":    {bools: "a", values: "tFf"},
	"list-panes":      {bools: "as", values: "tFf"},
	"rename-window":   {bools: "", values: "t"},
	"rename-session":  {bools: "", values: "t"},
	"move-window":     {bools: "abdkr", values: "st"},
	"send-keys":       {bools: "lHKMRX", values: "tN"},
	"display-message": {bools: "aIpv", values: "tcd"},
	"capture-pane":    {bools: "aepPqCJN", values: "tbSE"},
	"load-buffer":     {bools: "w", values: "bt"},
	"paste-buffer":    {bools: "dprS", values: "bst"},
	"new-window":      {bools: "abdkPS", values: "tncFe"},
	"new-session":     {bools: "AdDEPX", values: "stncFexy"},
	"set-option":      {bools: "aFgopqsuUw", values: "t"},
	"kill-window":     {bools: "a", values: "t"},
	"has-session":     {bools: "", values: "t"},
	"kill-server":     {},
}

type parsed struct {
	flags map[byte]string
	args  []string
}

// aliases are the short names tmux takes for a command.
var aliases = map[string]string{"display": "display-message"}

func parse(cmd []string) (parsed, error) {
	if full, ok := aliases[cmd[0]]; ok {
		cmd[0] = full
	}
	spec, ok := commands[cmd[0]]
	if !ok {
		return parsed{}, fmt.Errorf("unknown command: %s", cmd[0])
	}
	p := parsed{flags: map[byte]string{}}
	rest := cmd[1:]
	for len(rest) > 0 {
		a := rest[0]
		if a == "--" {
			rest = rest[1:]
			break
		}
		if len(a) < 2 || a[0] != '-' {
			break
		}
		rest = rest[1:]
		for i := 1; i < len(a); i++ {
			c := a[i]
			switch {
			case strings.IndexByte(spec.bools, c) >= 0:
				p.flags[c] = "1"
			case strings.IndexByte(spec.values, c) >= 0:
				v := a[i+1:]
				if v == "" {
					if len(rest) == 0 {
						return parsed{}, fmt.Errorf("command %s: -%c expects an argument", cmd[0], c)
					}
					v, rest = rest[0], rest[1:]
				}
				p.flags[c] = v
				i = len(a)
			default:
				return parsed{}, fmt.Errorf("command %s: unknown flag -%c", cmd[0], c)
			}
		}
	}
	p.args = rest
	return p, nil
}

func run(w *World, cmd []string, out *strings.Builder) error {
	p, err := parse(cmd)
	if err != nil {
		return err
	}
	if !w.Running && cmd[0] != "new-session" {
		return fmt.Errorf("no server running on /tmp/tmux-fake/default")
	}
	switch cmd[0] {
	case "list-windows":
		s, err := findSession(w, p.flags['t'])
		if err != nil {
			return err
		}
		for _, pane := range s.Panes {
			out.WriteString(format(p.flags['F'], s, pane) + "\n")
		}
	case "list-panes":
		if p.flags['a'] == "" {
			return fmt.Errorf("fake list-panes supports -a only")
		}
		for _, s := range w.Sessions {
			for _, pane := range s.Panes {
				out.WriteString(format(p.flags['F'], s, pane) + "\n")
			}
		}
	case "rename-window":
		_, pane, err := findPane(w, p.flags['t'])
		if err != nil {
			return err
		}
		if len(p.args) != 1 {
			return fmt.Errorf("fake rename-window needs one new name")
		}
		pane.Window = p.args[0]
	case "rename-session":
		s, err := findSession(w, p.flags['t'])
		if err != nil {
			return err
		}
		if len(p.args) != 1 || w.session(p.args[0]) != nil {
			return fmt.Errorf("duplicate session: %s", strings.Join(p.args, " "))
		}
		s.Name = p.args[0]
	case "move-window":
		return moveWindow(w, p)
	case "send-keys":
		s, pane, err := findPane(w, p.flags['t'])
		if err != nil {
			return err
		}
		if p.flags['l'] != "" {
			text := strings.Join(p.args, " ")
			logInput(pane, s, "literal", fmt.Sprintf("%q", text))
			pane.Composer += text
			return nil
		}
		for _, k := range p.args {
			if err := pressKey(s, pane, k); err != nil {
				return err
			}
		}
	case "display-message":
		s, pane, err := findPane(w, p.flags['t'])
		if err != nil && strings.HasPrefix(p.flags['t'], "%") {
			// tmux 3.3a does not fail for an absent pane id: it expands
			// the format against no pane at all, exit 0.
			s, pane = &Session{}, &Pane{}
		} else if err != nil {
			return err
		}
		out.WriteString(format(strings.Join(p.args, " "), s, pane) + "\n")
	case "capture-pane":
		_, pane, err := findPane(w, p.flags['t'])
		if err != nil {
			return err
		}
		rows := paneRows(pane)
		top, bottom := rowRange(p.flags['S'], p.flags['E'], len(rows))
		out.WriteString(strings.Join(rows[top:bottom+1], "\n") + "\n")
	case "load-buffer":
		if len(p.args) != 1 || p.args[0] != "-" {
			return fmt.Errorf("fake load-buffer reads only from stdin (-)")
		}
		data, _ := io.ReadAll(os.Stdin)
		w.Buffers[p.flags['b']] = string(data)
	case "paste-buffer":
		s, pane, err := findPane(w, p.flags['t'])
		if err != nil {
			return err
		}
		data, ok := w.Buffers[p.flags['b']]
		if !ok {
			return fmt.Errorf("no buffer %s", p.flags['b'])
		}
		if p.flags['d'] != "" {
			delete(w.Buffers, p.flags['b'])
		}
		kind := "paste"
		if p.flags['p'] == "" {
			kind = "paste-unbracketed"
		}
		logInput(pane, s, kind, fmt.Sprintf("%q", data))
		pane.Composer += data
	case "new-window":
		t := p.flags['t']
		if !strings.HasPrefix(t, "=") || !strings.HasSuffix(t, ":") {
			return fmt.Errorf("fake new-window wants -t =session: (an exact session target)")
		}
		s, err := findSession(w, strings.TrimSuffix(t, ":"))
		if err != nil {
			return err
		}
		pane := w.addPane(s, p.flags['n'], p.flags['c'])
		if p.flags['P'] != "" {
			out.WriteString(format(p.flags['F'], s, pane) + "\n")
		}
	case "new-session":
		name := p.flags['s']
		if w.session(name) != nil {
			return fmt.Errorf("duplicate session: %s", name)
		}
		w.Running = true
		s := &Session{Name: name}
		w.Sessions = append(w.Sessions, s)
		pane := w.addPane(s, p.flags['n'], p.flags['c'])
		if p.flags['P'] != "" {
			out.WriteString(format(p.flags['F'], s, pane) + "\n")
		}
	case "set-option":
		if _, _, err := findPane(w, p.flags['t']); err != nil {
			return err
		}
	case "kill-window":
		s, pane, err := findPane(w, p.flags['t'])
		if err != nil {
			return err
		}
		for i, x := range s.Panes {
			if x == pane {
				s.Panes = append(s.Panes[:i], s.Panes[i+1:]...)
				break
			}
		}
	case "has-session":
		if _, err := findSession(w, p.flags['t']); err != nil {
			return err
		}
	case "kill-server":
		// The next server starts empty, numbers its panes and windows from
		// %0 and @0 again, and is another pid started at another time.
		*w = World{Buffers: map[string]string{}}
		pid, start, _ := strings.Cut(serverID(), ":")
		if pid == "" {
			return nil
		}
		n, _ := strconv.Atoi(pid)
		t, _ := strconv.Atoi(start)
		return os.WriteFile(path("server"), []byte(fmt.Sprintf("%d:%d\n", n+1, t+1)), 0o644)
	}
	return nil
}

// paneRows is what the pane shows: the test's own screen when it wrote
// one to $FAKE_TMUX_DIR/pane, else the emulated one. The fake's pane is as
// tall as its rows (it has no history), and none of them wraps.
func paneRows(p *Pane) []string {
	if custom, err := os.ReadFile(path("pane")); err == nil {
		return strings.Split(strings.TrimSuffix(string(custom), "\n"), "\n")
	}
	rows, _ := screen(p)
	return rows
}

// rowRange is the rows capture-pane's -S and -E name, as tmux 3.3a reads
// them against a pane without history: 0 is the top row, a negative row
// (in the history) is the top, "-" is the top for -S and the last row for
// -E, a row past the last is the last, a value that is no number (or
// none) is the default, the whole pane, and an end above the start swaps
// the two.
func rowRange(start, end string, height int) (top, bottom int) {
	row := func(v string, dflt int) int {
		if v == "-" {
			return dflt
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			return dflt
		}
		return min(max(n, 0), height-1)
	}
	top, bottom = row(start, 0), row(end, height-1)
	if bottom < top {
		top, bottom = bottom, top
	}
	return top, bottom
}

// cursorX is the cursor's column: the end of the typed text, before any
// placeholder an empty composer shows.
func cursorX(p *Pane) int {
	prefix, _, _, _ := fakeframe.Frame(p.Command, false)
	return len([]rune(prefix + strings.ReplaceAll(p.Composer, "\n", "⏎")))
}

func pressKey(s *Session, pane *Pane, k string) error {
	switch k {
	case "Enter":
		logInput(pane, s, "key", k)
		submit(pane)
	case "Escape", "C-c":
		logInput(pane, s, "key", k)
		interrupt(pane)
	case "C-u":
		logInput(pane, s, "key", k)
		if !(isShell(pane.Command) && flag("shell-ignores-clear")) {
			pane.Composer = ""
		}
		// Text that reaches a shell right after its line was cleared
		// (type-ahead a person or a dying agent left in flight).
		if late, err := os.ReadFile(path("shell-typeahead")); err == nil && isShell(pane.Command) {
			pane.Composer += strings.TrimRight(string(late), "\n")
		}
	case "C-e", "End":
		// The cursor is always at the end of the fake's composer.
		logInput(pane, s, "key", k)
	default:
		return fmt.Errorf("fake tmux does not model key %s", k)
	}
	return nil
}

func findSession(w *World, t string) (*Session, error) {
	name := strings.TrimPrefix(t, "=")
	if s := w.session(name); s != nil {
		return s, nil
	}
	return nil, fmt.Errorf("can't find session: %s", name)
}

// findPane resolves a pane id or an exact =session:=window target.
func findPane(w *World, t string) (*Session, *Pane, error) {
	if strings.HasPrefix(t, "%") {
		if s, p := w.paneByID(t); p != nil {
			return s, p, nil
		}
		return nil, nil, fmt.Errorf("can't find pane: %s", t)
	}
	if strings.HasPrefix(t, "@") {
		for _, s := range w.Sessions {
			for _, p := range s.Panes {
				if p.WindowID == t {
					return s, p, nil
				}
			}
		}
		return nil, nil, fmt.Errorf("can't find window: %s", t)
	}
	sess, win, ok := strings.Cut(t, ":")
	if !ok {
		return nil, nil, fmt.Errorf("fake tmux wants a pane id or session:window target, got %q", t)
	}
	s, err := findSession(w, sess)
	if err != nil {
		return nil, nil, err
	}
	win = strings.TrimPrefix(win, "=")
	for _, p := range s.Panes {
		if p.Window == win {
			return s, p, nil
		}
	}
	return nil, nil, fmt.Errorf("can't find window: %s", win)
}

// serverID is the server's #{pid}:#{start_time} when a test wrote one into
// $FAKE_TMUX_DIR/server, else ":" (a fake server has no process of its own
// that fmctl could find alive, so by default it names none).
func serverID() string {
	if b, err := os.ReadFile(path("server")); err == nil {
		return strings.TrimSpace(string(b))
	}
	return ":"
}

func format(f string, s *Session, p *Pane) string {
	_, cursor := screen(p)
	pid, start, _ := strings.Cut(serverID(), ":")
	r := strings.NewReplacer(
		"#{pid}", pid,
		"#{start_time}", start,
		"#{window_name}", p.Window,
		"#{window_id}", p.WindowID,
		"#{pane_id}", p.ID,
		"#D", p.ID,
		"#{pane_active}", "1", // one pane per window
		"#{pane_tty}", "",
		"#{pane_pid}", "",
		"#{pane_current_command}", p.Command,
		"#{pane_current_path}", p.Cwd,
		"#{pane_dead}", "0",
		"#{session_name}", s.Name,
		"#{cursor_y}", fmt.Sprint(cursor),
		"#{pane_height}", fmt.Sprint(len(paneRows(p))),
		"#{cursor_x}", fmt.Sprint(cursorX(p)),
	)
	return r.Replace(f)
}

// moveWindow moves a window (by id, pane id or session:window) to the end of
// another session, keeping its name and ids, as `move-window -s X -t =s:` does.
func moveWindow(w *World, p parsed) error {
	from, pane, err := findPane(w, p.flags['s'])
	if err != nil {
		return err
	}
	to, err := findSession(w, strings.TrimSuffix(p.flags['t'], ":"))
	if err != nil {
		return err
	}
	for i, x := range from.Panes {
		if x == pane {
			from.Panes = append(from.Panes[:i], from.Panes[i+1:]...)
			break
		}
	}
	to.Panes = append(to.Panes, pane)
	return nil
}
