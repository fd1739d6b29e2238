package harness

import (
	"strings"
	"time"
)

// Layout names how a harness draws its composer, so one reader can find the
// composer rows of every harness from data. Each was read off real captures
// (tests/captures/<harness>-<version>/).
type Layout string

const (
	// LayoutPromptAfterRule: the composer's first row starts with Prompt
	// right under a full-width ──── rule, and its rows end at the next
	// rule (claude).
	LayoutPromptAfterRule Layout = "prompt-after-rule"
	// LayoutBetweenRules: the composer is every row between the last two
	// ──── rules; an empty composer has none with text (pi).
	LayoutBetweenRules Layout = "between-rules"
	// LayoutLastPrompt: the composer is the last row starting with Prompt
	// (below the last rule, where the harness draws one) and the rows
	// under it indented by ContIndent (codex, gemini).
	LayoutLastPrompt Layout = "last-prompt"
	// LayoutBarBlock: the composer is the run of ┃ rows right above the
	// ╹▀▀▀ rule, whose last row is the model line (opencode).
	LayoutBarBlock Layout = "bar-block"
)

// Dialog is a blocking dialog, named, recognised when every one of its marks
// is on screen. Text typed while one is up goes to the dialog, not the
// composer (gemini stores it as the API key), so nothing may be typed.
type Dialog struct {
	Name  string   `json:"name"`
	Marks []string `json:"marks"`
	// Waits is what the agent waits for while the dialog is up, the
	// waiting_for of its activity (WaitPermission, ...); "" for an overlay
	// the user opened (help, rewind), which covers the composer but asks
	// nothing.
	Waits string `json:"waits,omitempty"`
	// Answer names the keys that answer the dialog, for the hint of a
	// refusal to type into it.
	Answer string `json:"answer,omitempty"`
	// Cancel is the keys an interrupt sends at this dialog, in place of
	// the harness's interrupt keys, where those do not reject it: kilo's
	// first Escape at its permission dialog opens a reject stage and its
	// second goes back to the choices, so three rounds of Escape, Escape
	// left the tool call waiting; Escape then Enter rejects it and ends
	// the turn. Empty: the interrupt keys.
	Cancel []Key `json:"cancel,omitempty"`
}

// DialogCancel is the keys an interrupt sends at the dialog the screen
// shows (Dialog.Cancel), or nil where the interrupt keys do.
func (sig ScreenSig) DialogCancel(name string) []Key {
	if d, ok := sig.Dialog(name); ok {
		return d.Cancel
	}
	return nil
}

// CancelsDialogs says whether any of the harness's dialogs needs its own
// cancel keys, so an interrupt must read the screen before it presses.
func (sig ScreenSig) CancelsDialogs() bool {
	for _, d := range sig.Dialogs {
		if len(d.Cancel) > 0 {
			return true
		}
	}
	return false
}

// What an agent at a dialog waits for (Dialog.Waits).
const (
	WaitPermission = "permission" // a tool call to approve or deny
	WaitQuestion   = "question"   // the agent asks the user to choose
	WaitTrust      = "trust"      // trust this folder
	WaitAPIKey     = "api-key"    // an API key to accept or enter
	WaitSignIn     = "sign-in"    // an authentication choice
	WaitSetup      = "setup"      // first-run setup (claude's theme)
)

// Dialog returns the signature of the dialog named name.
func (sig ScreenSig) Dialog(name string) (Dialog, bool) {
	for _, d := range sig.Dialogs {
		if d.Name == name {
			return d, true
		}
	}
	return Dialog{}, false
}

// WaitingAt is the dialog st shows that the agent waits at for an answer
// (a permission prompt), as opposed to an overlay it merely draws.
func (sig ScreenSig) WaitingAt(st ScreenState) (Dialog, bool) {
	d, ok := sig.Dialog(st.Dialog)
	return d, ok && d.Waits != ""
}

// ClearSeq is a harness's verified way to empty a composer that holds text.
// It is pressed only when the composer provably holds text: several of these
// keys are dangerous on an empty composer (claude's second Escape opens
// Rewind, codex's C-c quits, pi's quick double C-c exits).
type ClearSeq struct {
	Lead    []Key         `json:"lead,omitempty"`     // pressed once first (End moves the cursor to the text's end)
	Repeat  Key           `json:"repeat,omitempty"`   // then pressed PerLine times per held row, plus Extra
	PerLine int           `json:"per_line,omitempty"` // C-u at column 0 deletes the newline, so 2 per row
	Extra   int           `json:"extra,omitempty"`
	Keys    []Key         `json:"keys,omitempty"`  // a fixed sequence instead of Lead/Repeat
	Gap     time.Duration `json:"-"`               // between presses, where the harness needs separate input events
	Slash   []Key         `json:"slash,omitempty"` // for a held "/..." (opencode's popup eats C-u; Escape closes it and clears)
}

// Presses returns the keys that clear a composer holding rows rows of held.
func (c ClearSeq) Presses(held []string) []Key {
	if len(held) > 0 && strings.HasPrefix(held[0], "/") && len(c.Slash) > 0 {
		return append([]Key(nil), c.Slash...)
	}
	if len(c.Keys) > 0 {
		return append([]Key(nil), c.Keys...)
	}
	out := append([]Key(nil), c.Lead...)
	for i := 0; i < c.PerLine*len(held)+c.Extra; i++ {
		out = append(out, c.Repeat)
	}
	return out
}

// ScreenSig is what one harness release's screen says, as data: where its
// composer is, what an empty one shows, and what busy, a blocking dialog and
// a not-yet-ready start look like. Matching is on plain text (capture-pane
// -p), so a dim placeholder is listed by its words.
type ScreenSig struct {
	Release    string   `json:"release"` // the CLI version the captures came from
	Layout     Layout   `json:"layout"`
	Prompt     []string `json:"prompt,omitempty"`      // composer first-row prefixes
	ContIndent string   `json:"cont_indent,omitempty"` // continuation rows of a held multi-line text
	// Placeholders are drawn (dim) in an EMPTY composer; a composer showing
	// only one of them is empty, not holding text.
	Placeholders []string `json:"placeholders,omitempty"`
	Busy         []string `json:"busy"` // any one on screen: a turn is running
	// DropsInput: any one on screen, and text submitted now is thrown
	// away (pi empties its composer on Enter during its retry back-off
	// and never records the text), so nothing is typed then.
	DropsInput []string `json:"drops_input,omitempty"`
	Dialogs    []Dialog `json:"dialogs,omitempty"`  // checked before the composer
	Starting   []string `json:"starting,omitempty"` // any one on screen: drawn but not ready yet
	// TurnSeen: the composer is drawn before the harness can take a prompt
	// (codex's app-server comes up ~3 s later), so ready also needs one of
	// these, proof that the launch prompt's turn was taken.
	TurnSeen []string `json:"turn_seen,omitempty"`
	// IdleExit: the exit command is refused while a turn runs (gemini:
	// "Slash commands cannot be queued", and the text stays), so exit
	// cancels the turn and waits for idle before typing it.
	IdleExit bool `json:"idle_exit,omitempty"`
	// Collapsed: a long paste is drawn as this placeholder instead of its
	// text, so the placeholder is the paste's echo.
	Collapsed []string `json:"collapsed,omitempty"`
	Clear     ClearSeq `json:"clear"`
	// Restores: cancelling a turn puts a prompt back into the composer as
	// real text (claude: the cancelled prompt, when the composer was
	// empty; pi: a queued steer), so interrupt clears it.
	Restores bool `json:"restores_prompt"`
	// RestoresQueueOnly: what it puts back is only a text queued behind
	// the turn (pi's steer), so with no queue drawn before the keys there
	// is nothing to wait for.
	RestoresQueueOnly bool `json:"restores_queue_only,omitempty"`
	// RestoreOrMark: the harness either puts the cancelled prompt back or
	// marks the cancel in its record, never both (claude:
	// tests/captures/notes-claude-codex.md), so a cancel its record marks
	// ends the wait for a restore. qwen marks a cancel and still puts its
	// queue back.
	RestoreOrMark bool `json:"restore_or_mark,omitempty"`
	// DrawWait, where longer than fmctl's own budget, is how long the
	// harness may take to draw typed text in its composer: text never
	// seen drawn gets no Enter.
	DrawWait time.Duration `json:"draw_wait_ms,omitempty"`
	// PasteSettle separates a bracketed paste from its Enter: an Enter
	// arriving in the paste's burst becomes a newline (gemini) or is lost
	// (claude).
	PasteSettle time.Duration `json:"paste_settle_ms"`
	// TypedSettle separates typed keys from their Enter, for a harness that
	// reads a fast typed burst as a paste too (gemini); claude submits an
	// Enter right after typed text (15 of 15), so it has none.
	TypedSettle time.Duration `json:"typed_settle_ms,omitempty"`
	// OneEnter: never press Enter twice for one text. gemini takes an Enter
	// and runs its hooks (fmctl's telemetry among them) before it redraws
	// the composer, over 400 ms on a loaded machine, and an Enter pressed
	// again in that time submitted the text twice ("X\n\nX" in its log,
	// twice in the real-agent tier); after its typed settle no Enter of its
	// was seen lost. Its submit waits longer instead, then is unconfirmed.
	OneEnter bool `json:"one_enter,omitempty"`
	// EnterBecomesNewline: an Enter inside the window the harness keeps
	// open after a paste (gemini: 40 ms, closed by a timer whose state
	// update the key handler sees only after a redraw) is taken as a
	// newline, and a starved process keeps that window open past any
	// settle. NewlineTaken reads it off the screen, which proves the
	// Enter submitted nothing: a OneEnter harness may then get one Enter
	// more (tests/captures/gemini-0.61.0/enter-taken-as-newline).
	EnterBecomesNewline bool `json:"enter_becomes_newline,omitempty"`
	// QueueHead heads the list of texts the harness took while a turn
	// runs, drawn above its composer (gemini "Queued (press ↑ to edit):"):
	// a text listed there was taken but not submitted, and gemini submits
	// every queued text as one message, joined by blank lines, when the
	// turn ends.
	QueueHead string `json:"queue_head,omitempty"`
	// QueueFolded marks the row under QueueHead that stands for the
	// queued texts it does not draw (gemini lists three, then "... (+N
	// more)"): a text the composer let go of while the list is folded went
	// into the queue, out of sight.
	QueueFolded string `json:"queue_folded,omitempty"`
	// QueueIndent is how deep the texts under QueueHead are indented
	// (gemini four spaces, the default; qwen two, under its busy line;
	// cline four inside its box's border).
	QueueIndent string `json:"queue_indent,omitempty"`
	// QueueRelease is the key that, pressed on an empty composer while no
	// turn runs, submits the first text the queue still holds (cline:
	// "Enter with empty input to steer first"). A harness whose queue can
	// be left holding a text after its turn ended (cline did, once in
	// three tier runs) has one: fm-send presses it before it types into
	// such an agent, so no message overtakes one queued before it.
	QueueRelease Key `json:"queue_release,omitempty"`
	// QueueSkipsFirstTurn: a text queued behind the agent's first turn
	// (its launch prompt's) is never submitted when that turn ends. cline
	// 3.0.65 drains its queue after a turn the TUI submitted (its
	// runTurn), not after the launch prompt's (its startSession runs that
	// turn and drains nothing). fm-send refuses to queue behind that turn;
	// --when-ready waits for it to end.
	QueueSkipsFirstTurn bool `json:"queue_skips_first_turn,omitempty"`
	// QueueRows start the row each text the harness took while a turn
	// runs is drawn on, with no head above them (claude "  ❯ " indented
	// above its composer, pi " Steering: "): such a text was taken but
	// not submitted, and reaches the record only when the queue flushes.
	QueueRows []string `json:"queue_rows,omitempty"`
	Source    string   `json:"source"`

	// CollapsedLines: the Collapsed placeholder counts the paste's lines
	// past its first (claude: 30 lines drew "[Pasted text #1 +29 lines]"),
	// so the counts drawn tell a whole paste from a part of one.
	CollapsedLines bool `json:"collapsed_counts_lines,omitempty"`
}

// Settle is how long to wait between drawn text and its Enter: the paste
// settle after a bracketed paste, the typed settle after typed keys.
func (sig ScreenSig) Settle(pasted bool) time.Duration {
	if pasted {
		return sig.PasteSettle
	}
	return sig.TypedSettle
}

// ComposerState is what the screen says about the composer.
type ComposerState string

const (
	ComposerAbsent  ComposerState = "absent"  // not drawn (starting, or covered by a dialog)
	ComposerEmpty   ComposerState = "empty"   // drawn, holding nothing (a placeholder at most)
	ComposerHolding ComposerState = "holding" // drawn, holding text
)

// ScreenState is one reading of a harness's screen by its signatures.
type ScreenState struct {
	Composer ComposerState `json:"composer"`
	Held     []string      `json:"held,omitempty"`   // the held rows, prompt and frame stripped
	Busy     bool          `json:"busy"`             // a turn is running
	Dropping bool          `json:"dropping"`         // a DropsInput mark is on screen
	Dialog   string        `json:"dialog,omitempty"` // a blocking dialog's name
	Starting bool          `json:"starting"`         // a not-ready marker is on screen
	TurnSeen bool          `json:"turn_seen"`        // a TurnSeen mark is on screen
}

// Ready reports whether the harness can take a prompt: its composer drawn,
// with no dialog over it and no not-ready marker.
func (s ScreenState) Ready() bool {
	return s.Composer != ComposerAbsent && s.Dialog == "" && !s.Starting
}

// Launched reports whether a fresh launch is ready: Ready, and where the
// harness draws its composer before it can take a prompt, its launch
// prompt's turn seen (busy, or a TurnSeen mark).
func (s ScreenState) Launched(sig ScreenSig) bool {
	return s.Ready() && (len(sig.TurnSeen) == 0 || s.TurnSeen || s.Busy)
}

// Queued reports whether the screen lists text whose end is tail as taken
// into the harness's queue: under its QueueHead (the rows below the head,
// up to the first row that is not indented: the busy line, the composer's
// frame), or on a row one of its QueueRows starts, with the rows that
// continue it (indented as deep as the prefix).
func (sig ScreenSig) Queued(lines []string, tail string) bool {
	if tail == "" {
		return false
	}
	for i, l := range lines {
		for _, prefix := range sig.QueueRows {
			rest, ok := strings.CutPrefix(l, prefix)
			if !ok {
				continue
			}
			queued := strings.TrimSpace(rest)
			indent := strings.Repeat(" ", len(prefix)-len(strings.TrimLeft(prefix, " "))+1)
			for _, row := range lines[i+1:] {
				if !strings.HasPrefix(row, indent) || strings.TrimSpace(row) == "" {
					break
				}
				queued += strings.TrimSpace(row)
			}
			if strings.Contains(queued, tail) {
				return true
			}
		}
	}
	for _, queued := range sig.headQueues(lines) {
		if strings.Contains(queued, tail) || (sig.QueueFolded != "" && strings.Contains(queued, sig.QueueFolded)) {
			return true
		}
	}
	return false
}

// headQueues are the texts listed under each QueueHead on the screen: the
// rows below it indented by QueueIndent (four spaces when unset), joined,
// blank rows skipped (qwen draws one under its busy line), up to the first
// row that is not (the busy line, the composer's frame).
// A head with no such row lists nothing.
func (sig ScreenSig) headQueues(lines []string) []string {
	if sig.QueueHead == "" {
		return nil
	}
	indent := sig.QueueIndent
	if indent == "" {
		indent = "    "
	}
	// A box's border (cline's "│") opens the indent and closes each row.
	border := strings.TrimSpace(indent)
	var queues []string
	for i, l := range lines {
		if !strings.Contains(l, sig.QueueHead) {
			continue
		}
		var queued strings.Builder
		for _, row := range lines[i+1:] {
			if strings.TrimSpace(row) == "" {
				continue
			}
			text, ok := strings.CutPrefix(row, indent)
			if !ok {
				break
			}
			text = strings.TrimSpace(text)
			if border != "" {
				text = strings.TrimSpace(strings.TrimSuffix(text, border))
			}
			queued.WriteString(text)
		}
		if queued.Len() > 0 {
			queues = append(queues, queued.String())
		}
	}
	return queues
}

// QueuedTexts are the texts listed under the harness's queue head, first
// queued first.
func (sig ScreenSig) QueuedTexts(lines []string) []string { return sig.headQueues(lines) }

// StrandedQueue is the first text an idle agent's queue still holds, where
// its release key would submit it now: the harness has one (QueueRelease),
// and the screen shows no turn running, no dialog and an empty composer
// (a draft there would be what the key submits), with its queue listing a
// text.
func (sig ScreenSig) StrandedQueue(lines []string) (string, bool) {
	if sig.QueueRelease == "" {
		return "", false
	}
	st := sig.ReadScreen(lines)
	if st.Busy || st.Dialog != "" || st.Composer != ComposerEmpty {
		return "", false
	}
	queued := sig.QueuedTexts(lines)
	if len(queued) == 0 {
		return "", false
	}
	return queued[0], true
}

// HasQueue reports whether the harness draws a queue fmctl can read: a
// screen read for one is wasted on a harness with neither mark.
func (sig ScreenSig) HasQueue() bool { return len(sig.QueueRows) > 0 || sig.QueueHead != "" }

// ShowsQueue reports whether any row of the screen is one of the
// harness's queue rows, or a text is listed under its queue head.
func (sig ScreenSig) ShowsQueue(lines []string) bool {
	for _, l := range lines {
		for _, prefix := range sig.QueueRows {
			if strings.HasPrefix(l, prefix) {
				return true
			}
		}
	}
	return len(sig.headQueues(lines)) > 0
}

// NewlineTaken reports whether a screen shows an Enter the harness took as
// a newline (EnterBecomesNewline): the composer holds text, with no dialog,
// and the cursor sits at the continuation indent of the blank row right
// under that text, where the newline put it. An Enter taken as a submit
// leaves no such row: the composer empties, or, while gemini runs its
// hooks before it redraws, still draws the text with the cursor at its
// end. The text sent must not end in a newline of its own (the caller's
// part): its paste alone would leave that row.
func (sig ScreenSig) NewlineTaken(lines []string, cursorY, cursorX int) bool {
	if !sig.EnterBecomesNewline || sig.Layout != LayoutLastPrompt {
		return false
	}
	if st := sig.ReadScreen(lines); st.Composer != ComposerHolding || st.Dialog != "" {
		return false
	}
	rows := trimRows(lines)
	_, end, ok := sig.lastPromptRows(rows)
	return ok && cursorY == end && end < len(rows) && rows[end] == "" && cursorX == len(sig.ContIndent)
}

// HeldText is the held rows joined, for a message naming them.
func (s ScreenState) HeldText() string { return strings.Join(s.Held, "\n") }

// ReadScreen reads a screen (rows of plain text) by the signatures.
func (sig ScreenSig) ReadScreen(lines []string) ScreenState {
	rows := trimRows(lines)
	st := ScreenState{Composer: ComposerAbsent}
	st.Busy = anyOn(rows, sig.Busy)
	st.Dropping = anyOn(rows, sig.DropsInput)
	st.TurnSeen = anyOn(rows, sig.TurnSeen)
	// gemini's "Initializing..." stays in the transcript once init is
	// over; a turn seen after it (busy, a result) proves it is over.
	st.Starting = anyOn(rows, sig.Starting) && !st.TurnSeen && !st.Busy
	for _, d := range sig.Dialogs {
		if allOn(rows, d.Marks) {
			st.Dialog = d.Name
			return st
		}
	}
	held, drawn := sig.composer(rows)
	if !drawn {
		return st
	}
	st.Composer = ComposerEmpty
	if len(held) == 1 && sig.placeholder(held[0]) {
		held = nil
	}
	if len(held) > 0 {
		st.Composer, st.Held = ComposerHolding, held
	}
	return st
}

// trimRows strips each row's trailing blanks, as the signatures read rows.
func trimRows(lines []string) []string {
	rows := make([]string, len(lines))
	for i, l := range lines {
		rows[i] = strings.TrimRight(l, " \t")
	}
	return rows
}

func (sig ScreenSig) placeholder(s string) bool {
	for _, p := range sig.Placeholders {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// anyOn reports whether any mark is on screen. A mark starting with "^"
// must begin a row (after its indent): "● " alone would also match claude's
// footer "● high · /effort".
func anyOn(rows, marks []string) bool {
	for _, m := range marks {
		for _, r := range rows {
			if p, ok := strings.CutPrefix(m, "^"); ok {
				if startsPadded(strings.TrimSpace(r), p) {
					return true
				}
			} else if strings.Contains(r, m) {
				return true
			}
		}
	}
	return false
}

// startsPadded reports whether t+" " begins with p, without building
// t+" " (a list reads 500 screens): a mark ending in a space also matches
// a row that is the mark alone.
func startsPadded(t, p string) bool {
	return strings.HasPrefix(t, p) || (len(p) == len(t)+1 && p[len(t)] == ' ' && strings.HasPrefix(p, t))
}

func allOn(rows, marks []string) bool {
	for _, m := range marks {
		if !anyOn(rows, []string{m}) {
			return false
		}
	}
	return len(marks) > 0
}
