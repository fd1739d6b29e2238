package harness

import "time"

// screens are the screen signatures of each harness release the real-agent
// tier verified, read off the captures committed in tests/captures/ (the
// unit tests read every signature against them). A harness absent here has
// no verified screen: fmctl then proves nothing from its screen.
var screens = map[string]ScreenSig{
	"claude": {
		Release: "2.1.197", Layout: LayoutPromptAfterRule,
		// claude draws a no-break space after its prompt glyph.
		Prompt: []string{"❯\u00a0", "❯ "},
		// Dim, after the cursor cell, while a message is queued.
		Placeholders: []string{"Press up to edit queued messages"},
		// A text taken during a turn is drawn indented above the composer
		// and recorded only when the queue flushes (busy-queued).
		QueueRows: []string{"  ❯ "},
		Busy:      []string{"esc to interrupt"},
		Dialogs: []Dialog{
			{Name: "api-key", Marks: []string{"Do you want to use this API key?"}, Waits: WaitAPIKey, Answer: "Enter picks the highlighted choice"},
			{Name: "trust", Marks: []string{"Yes, I trust this folder"}, Waits: WaitTrust, Answer: "Enter picks the highlighted choice"},
			{Name: "theme", Marks: []string{"Dark mode", "Light mode"}, Waits: WaitSetup, Answer: "Enter picks the highlighted theme"},
			// A tool call to approve ("Do you want to proceed?", "... make
			// this edit to X?", "... create X?"), before the overlays: the
			// command it shows may hold their words.
			{Name: "permission", Marks: []string{"^Do you want to ", "Esc to cancel"}, Waits: WaitPermission, Answer: "Enter approves, Escape denies"},
			{Name: "rewind", Marks: []string{"Rewind", "Enter to continue · Esc to cancel"}},
			{Name: "help", Marks: []string{"Shortcuts", "Esc to cancel"}},
		},
		// End first: C-u deletes back to the line start only from the cursor
		// on the last row; Escape Escape would open Rewind on an empty one.
		Collapsed: []string{"[Pasted text #"},
		Clear:     ClearSeq{Lead: []Key{KeyEnd}, Repeat: KeyCtrlU, PerLine: 2, Extra: 1},
		Restores:  true,
		// A turn that drew nothing is put back; one that streamed, ran
		// a tool or had a draft or queue waiting is marked instead.
		RestoreOrMark: true,
		// After a paste an immediate Enter was lost 7 times in 41 (none
		// with 150 ms between), and through fm-send right after launch
		// 3 of 12 pastes failed without it, 0 of 24 with it; after typed
		// keys (send-keys -l) never, so typed text has no settle.
		PasteSettle: 150 * time.Millisecond,
		Source:      "tests/captures/claude-2.1.197; tests/captures/notes-claude-codex.md",

		CollapsedLines: true, // "[Pasted text #1 +29 lines]" for 30 lines
	},
	"codex": {
		Release: "0.171.0", Layout: LayoutLastPrompt, Prompt: []string{"› "}, ContIndent: "  ",
		Placeholders: []string{"Ask Codex to do anything"},
		Busy:         []string{"esc to interrupt)"},
		Dialogs: []Dialog{
			// An approval ("Would you like to run the following command?",
			// "... make the following edits?"); its first choice is drawn
			// behind "› ", so it is read before the composer.
			{Name: "permission", Marks: []string{"Would you like to ", "Press enter to confirm or esc to cancel"}, Waits: WaitPermission, Answer: "Enter proceeds, Escape denies"},
			{Name: "trust", Marks: []string{"Trust this folder?"}, Waits: WaitTrust, Answer: "Enter picks the highlighted choice"},
			{Name: "sign-in", Marks: []string{"Sign in with ChatGPT"}, Waits: WaitSignIn, Answer: "Enter picks the highlighted choice"},
			{Name: "task-running", Marks: []string{"Task is still running", "enter select · esc back"}},
			{Name: "transcript", Marks: []string{"Browsing transcript"}},
		},
		// The composer is drawn ~3 s before the app-server takes prompts; the
		// launch prompt's turn (working, its result ■, or the "Worked for"
		// footer of a turn that ended between two looks: the tier's stub
		// answers in under a second, and a spawn that saw neither waited
		// out its 60 s and said starting) proves it is up.
		TurnSeen:  []string{"esc to interrupt)", "^■ ", "^Worked for "},
		Collapsed: []string{"[Pasted Content "},
		// C-c quits an empty codex, so never; End then C-u reaches every row.
		Clear:  ClearSeq{Lead: []Key{KeyEnd}, Repeat: KeyCtrlU, PerLine: 2, Extra: 1},
		Source: "tests/captures/codex-0.171.0 (launched-turn-over: the tier, 2026-12-07); tests/captures/notes-claude-codex.md",
	},
	"opencode": {
		Release: "1.18.33", Layout: LayoutBarBlock,
		Placeholders: []string{"Ask anything…"},
		Busy:         []string{"esc interrupt", "esc again to interrupt"},
		// --prompt only fills the composer of the home screen; the launch
		// is taken once its turn runs (busy) or has ended (▣).
		TurnSeen: []string{"^▣ "},
		Dialogs: []Dialog{
			// Drawn in place of the composer, over a tool call to approve.
			{Name: "permission", Marks: []string{"Permission required", "Allow once"}, Waits: WaitPermission, Answer: "Enter allows once, Escape rejects"},
			// The home screen's tips include the help text itself
			// ("● Tip Press ctrl+p to see all ..."): only the dialog
			// has its esc/enter title row.
			{Name: "help", Marks: []string{"Press ctrl+p to see all available actions", "esc/enter"}},
		},
		Collapsed: []string{"[Pasted ~"},
		// C-u clears one row or a [Pasted ~N lines] placeholder; Escape
		// closes the slash popup and clears a held "/...".
		Clear:  ClearSeq{Repeat: KeyCtrlU, PerLine: 1, Extra: 1, Slash: []Key{KeyEscape}},
		Source: "tests/captures/opencode-1.18.33; tests/captures/notes-opencode-pi-gemini.md",
	},
	"pi": {
		Release: "0.73.1", Layout: LayoutBetweenRules,
		// "Retrying (1/3) in 1s... (escape to cancel)": its loader while it
		// waits out a failed request (auto_retry_start), when its extension
		// has already reported the attempt's agent_end
		// (tests/captures/pi-0.73.1/retrying-backoff).
		Busy: []string{"Working...", "Retrying ("},
		// Text submitted while it waits out a retry is dropped: the
		// composer empties, and neither the session file nor a later
		// turn ever holds it (1 of 5 such sends arrived,
		// tests/captures/pi-0.73.1/backoff/07-send-during-backoff-sent).
		DropsInput: []string{"Retrying ("},
		// A text taken during a turn is a steer, drawn above the loader
		// until the turn takes it (busy-queued).
		QueueRows: []string{" Steering: "},
		Collapsed: []string{"[paste #"},
		// C-c clears every row; only a quick second C-c exits, and one is sent.
		Clear:    ClearSeq{Keys: []Key{KeyCtrlC}},
		Restores: true,
		// Only a queued steer comes back; with none, pi's cancel leaves
		// the composer as it was (the tier's latency table showed every
		// interrupt waiting out the restore wait for nothing).
		RestoresQueueOnly: true,
		Source:            "tests/captures/pi-0.73.1; tests/captures/notes-opencode-pi-gemini.md",
	},
	"gemini": {
		Release: "0.61.0", Layout: LayoutLastPrompt, Prompt: []string{" > ", " * "}, ContIndent: "   ",
		Placeholders: []string{"Type your message or @path/to/file"},
		Busy:         []string{"esc to cancel"},
		Dialogs: []Dialog{
			{Name: "api-key", Marks: []string{"Enter Gemini API Key"}, Waits: WaitAPIKey, Answer: "Escape leaves it (text typed there is stored as the key)"},
			{Name: "auth", Marks: []string{"How would you like to authenticate"}, Waits: WaitSignIn, Answer: "Enter picks the highlighted choice"},
			// A tool call to approve ("Allow execution of [Shell]?", "Apply
			// this change?"), each with the same numbered choices.
			{Name: "permission", Marks: []string{"1. Allow once", "No, suggest changes (esc)"}, Waits: WaitPermission, Answer: "Enter allows once, Escape denies"},
			// Escape twice on an empty composer opens /rewind's picker.
			{Name: "rewind", Marks: []string{"Use Enter to select a message, Esc to close"}},
		},
		// Prompts typed while it initialises are held or dropped.
		Starting: []string{"Initializing..."},
		// With -i the launch prompt waits for init; its turn (busy, an
		// error ✕, an answer ✦, a cancel) proves gemini took it.
		TurnSeen:  []string{"esc to cancel", "^✕ ", "^✦ ", "Request cancelled."},
		Collapsed: []string{"[Pasted Text: "},
		IdleExit:  true,
		Clear:     ClearSeq{Keys: []Key{KeyEscape, KeyEscape}, Gap: 150 * time.Millisecond},
		// An Enter within ~50 ms of a paste becomes a newline, and so does
		// one after typed keys, which gemini reads as a paste when they
		// come in one burst.
		PasteSettle: 150 * time.Millisecond,
		TypedSettle: 150 * time.Millisecond,
		OneEnter:    true,
		// Read in its bundle (InputPrompt's recentUnsafePasteTime, 0.52.0
		// and 0.61.0); the tier's paste-window scenario starves it.
		EnterBecomesNewline: true,
		QueueHead:           "Queued (press ↑ to edit):",
		// Past three queued texts it draws "... (+N more)" in their place
		// (tests/captures/gemini-0.61.0/queue-folded, the tier's outage).
		QueueFolded: "... (+",
		Source:      "tests/captures/gemini-0.61.0; tests/captures/notes-opencode-pi-gemini.md; tests/captures/notes-real-turns.md",
	},
	"qwen": {
		// The composer is framed by two rules, its first row starting with
		// its mode's glyph at column 0 ("> " asking, "* " in yolo); the
		// transcript's prompts are indented, and a status row is under it.
		Release: "0.15.10", Layout: LayoutPromptAfterRule, Prompt: []string{"> ", "* "},
		Placeholders: []string{"Type your message or @path/to/file"},
		Busy:         []string{"esc to cancel"},
		Dialogs: []Dialog{
			// A tool call to approve ("Allow execution of: 'printf'?").
			{Name: "permission", Marks: []string{"1. Yes, allow once", "No, suggest changes (esc)"}, Waits: WaitPermission, Answer: "Enter allows once, Escape denies"},
			// Escape twice on an empty composer opens it.
			{Name: "rewind", Marks: []string{"Rewind Conversation", "Esc to cancel"}},
			// /help's tabbed box, drawn in place of the composer.
			{Name: "help", Marks: []string{"Tab/Shift+Tab to switch tabs", "Esc to cancel"}},
		},
		Starting: []string{"Initializing..."},
		// With -i the launch prompt's turn (busy, an answer ✦, a cancel)
		// proves qwen took it.
		TurnSeen:  []string{"esc to cancel", "^✦ ", "Request cancelled."},
		Collapsed: []string{"[Pasted Content "},
		// A /quit typed while busy is queued, not run.
		IdleExit: true,
		// The first Escape arms ("Press Esc again to clear."), the second
		// empties every row; on an empty composer two open Rewind, so it
		// is pressed only over held text.
		Clear: ClearSeq{Keys: []Key{KeyEscape, KeyEscape}, Gap: 150 * time.Millisecond},
		// Texts queued while busy are listed under the busy line, indented
		// by two spaces, above the composer's rule (busy-queued.txt), and
		// submitted as the next turn when the turn ends; on a cancel they
		// come back into the composer, and only they: the cancelled
		// prompt does not (after-interrupt-restored.txt, notes-qwen.md).
		QueueHead: "· esc to cancel)", QueueIndent: "  ",
		Restores: true, RestoresQueueOnly: true,
		// gemini-cli's input handling, inherited: see gemini.
		PasteSettle: 150 * time.Millisecond,
		TypedSettle: 150 * time.Millisecond,
		OneEnter:    true,
		Source:      "tests/captures/qwen-0.15.10; tests/captures/notes-qwen.md",
	},
	"copilot": {
		// The composer is framed by two rules, its first row starting with
		// "❯ " at column 0 (alone when empty); the transcript's prompts
		// are indented by one space, and a status row is under it.
		Release: "1.0.102", Layout: LayoutPromptAfterRule, Prompt: []string{"❯ "},
		// Before the answer streams its Escape twice would edit the
		// prompt, after it interrupt; one Escape arms either.
		Busy: []string{"esc esc interrupt", "esc esc edit prompt", "esc again to "},
		Dialogs: []Dialog{
			{Name: "trust", Marks: []string{"Confirm folder trust", "Do you trust the files in this folder?"}, Waits: WaitTrust, Answer: "Enter picks the highlighted choice"},
			// A tool call to approve ("Do you want to run this command?");
			// its Escape aborts the whole turn.
			{Name: "permission", Marks: []string{"Do you want to ", "No, and tell Copilot what to do differently"}, Waits: WaitPermission, Answer: "Enter allows once, Escape cancels the turn"},
			// /help's full-screen list, drawn in place of the composer.
			{Name: "help", Marks: []string{"↑/↓ scroll · esc close"}},
		},
		// A long paste is drawn as "[Paste #1 - 30 lines]".
		Collapsed: []string{"[Paste #"},
		// A /exit typed while busy is queued ("Queued (1)"), not run,
		// and a cancel drops it.
		IdleExit: true,
		// Each text taken while busy is drawn under "Queued (N)" on a row
		// " └ " starts, at column 1, where no transcript row starts.
		QueueRows: []string{" └ "},
		// Ctrl+C empties every row (a paste placeholder too) but arms an
		// exit for a few seconds ("ctrl+c again to exit"); C-u leaves a
		// multi-line text's first row, Escape nothing.
		Clear:  ClearSeq{Keys: []Key{KeyCtrlC}},
		Source: "tests/captures/copilot-1.0.102; tests/captures/notes-copilot.md",
	},
	"cline": {
		// The composer is framed by two rules, its row starting with "❯ "
		// at column 0; the transcript's prompts are indented (" ❯ ").
		Release: "3.0.65", Layout: LayoutPromptAfterRule, Prompt: []string{"❯ "},
		// "What can I do for you?" under the logo before the first turn.
		Placeholders: []string{"Ask anything...", "What can I do for you?"},
		// Waiting for the model: "⠦ Thinking... (esc to cancel)"; while
		// text streams or a tool runs only the spinner leads its row. The
		// frames are the dots spinner (⠦ ⠸ ⠙ ⠼ were captured).
		Busy: clineBusy,
		Dialogs: []Dialog{
			// A tool call to approve (--auto-approve false).
			{Name: "permission", Marks: []string{"Cline needs permission", "[y] Approve"}, Waits: WaitPermission, Answer: "y approves, n or Escape denies"},
			// A notice (ClinePass, Cline Desktop) over the first screen,
			// until cli-notices.json says it was shown.
			{Name: "notice", Marks: []string{"Press Enter to open, any other key to close"}, Waits: WaitSetup, Answer: "Escape closes it"},
			// /help draws its list over the transcript beside the composer.
			{Name: "help", Marks: []string{"Show this help", "Esc/Enter to close"}},
			// No provider configured (providers.json missing or not taken).
			{Name: "sign-in", Marks: []string{"Connect a model provider to get started."}, Waits: WaitSignIn, Answer: "arrows and Enter pick a provider"},
		},
		// The launch prompt is drawn in the composer for a few seconds
		// before the runtime takes it; its turn (busy, or an answer "* ")
		// proves it was taken.
		TurnSeen: append([]string{"^* "}, clineBusy...),
		// Its queue is a box: "│ Queued messages:", each text on a row
		// "│    <text>", then "│ Enter with empty input to steer first";
		// that key released a text the queue kept after its turn ended
		// (idle-queue-stranded).
		QueueHead: "Queued messages:", QueueIndent: "│    ", QueueRelease: KeyEnter,
		// Read in its binary (runTurn drains, startSession does not); the
		// tier's send-right-after-spawn saw the text stay queued.
		QueueSkipsFirstTurn: true,
		// End first: C-u deletes back to the line start, then the newline
		// before it, as claude's composer does.
		Clear:       ClearSeq{Lead: []Key{KeyEnd}, Repeat: KeyCtrlU, PerLine: 2, Extra: 1},
		PasteSettle: 150 * time.Millisecond,
		// An Enter pressed again while the first one's turn starts (the
		// composer still drew the text) submitted the prompt a second
		// time, and cline failed the turn ("SessionRuntime state is
		// \"running\"", enter-again-while-busy). One pressed as a turn
		// ended was lost (enter-dropped-at-turn-end): a second one goes
		// only on its log's proof (deliver.Options.NothingTaken).
		OneEnter: true,
		Source:   "tests/captures/cline-3.0.65; tests/captures/notes-cline.md",
	},
}

// kilo 7.7.7 draws opencode's TUI under another name: the same bar-block
// composer, busy row, turn marker, dialogs and collapsed paste. What differs
// is its home-screen placeholder (three dots, not an ellipsis) and its
// clear: a pasted three-row message stays three rows (only five or more, or
// over 800 characters, collapse), and C-u at a row's start deletes the
// newline, so four presses left its first row and seven emptied it.
func init() {
	kilo := screens["opencode"]
	kilo.Release = "7.7.7"
	kilo.Placeholders = []string{"Ask anything..."}
	kilo.Clear.PerLine = 2
	// Its slash popup does not eat C-u: C-u empties a "/..." typed with the
	// popup open, and one the popup's Enter completed, which Escape leaves
	// held (slash-completed*, slash-popup*); and Escape in a turn would
	// arm its interrupt.
	kilo.Clear.Slash = nil
	// Its TUI redraws slowly under load: at load 10 on two cores an
	// 80-byte typed text was not drawn 6 s after it was typed (the tier's
	// tool-calls turn, 2026-12-06), and text never seen drawn gets no Enter.
	kilo.DrawWait = 20 * time.Second
	// Its permission dialog maps Escape to a second stage, "Reject
	// permission / Tell Kilo what to do differently", whose own Escape goes
	// back: so opencode's two interrupt Escapes leave the dialog up, and
	// Escape then Enter rejects (permission-reject-stage, -rejected).
	kilo.Dialogs = []Dialog{
		{Name: "permission", Marks: []string{"Permission required", "Allow once"}, Waits: WaitPermission, Answer: "Enter allows once; Escape, then Enter, rejects", Cancel: []Key{KeyEscape, KeyEnter}},
		// Text typed at this stage is the rejection's message to the model.
		{Name: "permission-reject", Marks: []string{"Reject permission", "Tell Kilo what to do differently"}, Waits: WaitPermission, Answer: "Enter rejects; Escape goes back to the choices", Cancel: []Key{KeyEnter}},
		kilo.Dialogs[1],
	}
	kilo.Source = "tests/captures/kilo-7.7.7; tests/captures/notes-kilo.md"
	screens["kilo"] = kilo
}

// Screen returns the harness's verified screen signatures.
func (h Harness) Screen() (ScreenSig, bool) {
	s, ok := screens[h.Name]
	return s, ok
}

var clineBusy = []string{"(esc to cancel)", "^⠋ ", "^⠙ ", "^⠹ ", "^⠸ ", "^⠼ ", "^⠴ ", "^⠦ ", "^⠧ ", "^⠇ ", "^⠏ "}
