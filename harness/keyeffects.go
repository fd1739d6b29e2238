package harness

// Effect is what one named key, pressed on an empty composer, does to a
// harness in one state, as observed on the real CLI (or stated by its
// documentation, where the source says so). Unknown claims nothing.
type Effect string

const (
	EffectUnknown     Effect = "unknown"      // not observed here; nothing is claimed
	EffectNone        Effect = "none"         // observed: nothing happens (a quick second press may differ)
	EffectQuits       Effect = "quits"        // the agent exits at once
	EffectArmsExit    Effect = "arms-exit"    // "press again to exit": a second press quits
	EffectCancelsTurn Effect = "cancels-turn" // the running turn ends; the agent stays
	EffectArmsCancel  Effect = "arms-cancel"  // the first press arms the cancel; a second performs it
	EffectOpensMenu   Effect = "opens-menu"   // a menu replaces the composer (codex: cancel, background, exit)
	EffectArmsRewind  Effect = "arms-rewind"  // nothing visible; a second press opens claude's Rewind dialog
	EffectArmsEdit    Effect = "arms-edit"    // a second press edits the previous message (codex)
	EffectClearsLine  Effect = "clears-line"  // deletes the cursor's line of the composer
	EffectSubmits     Effect = "submits"      // submits the composer's text as a message
	EffectQueues      Effect = "queues"       // submits the composer's text to a queue the turn's end flushes
)

// KeyEffect is what one key does to a harness at an idle composer and
// during a turn.
type KeyEffect struct {
	Key    Key    `json:"key"`
	Idle   Effect `json:"idle"`
	Busy   Effect `json:"busy"`
	Source string `json:"source"`
}

// EndsAgent reports whether the key quits the agent in either state. Both
// count: fm-send cannot know the state the key will land in, since a turn
// may start or end between any read and the key.
func (e KeyEffect) EndsAgent() bool { return e.Idle == EffectQuits || e.Busy == EffectQuits }

// CancelsTurn reports whether the key, pressed during a turn, cancels it
// (or arms the cancel a second press performs): a harness may then put the
// cancelled prompt back into its composer.
func (e KeyEffect) CancelsTurn() bool {
	return e.Busy == EffectCancelsTurn || e.Busy == EffectArmsCancel
}

const (
	srcClaudeCodex = "tests/captures/notes-claude-codex.md"
	srcOthers      = "tests/captures/notes-opencode-pi-gemini.md"
	srcKilo        = "tests/captures/notes-kilo.md"
	srcQwen        = "tests/captures/notes-qwen.md"
	srcCopilot     = "tests/captures/notes-copilot.md"
	srcCline       = "tests/captures/notes-cline.md"
	// srcInterrupt: the harness's interrupt key cancels a turn; the
	// control table's own fact (docs/harnesses.md), not observed here.
	srcInterrupt = "docs/harnesses.md (the harness's interrupt key)"
)

// keyEffects are the observed effects, per harness; a key or harness
// absent here is unknown in both states. The five real CLIs were driven on
// private tmux servers (tests/agents); the others keep only what their
// interrupt key is documented to do, and what their docs say C-c does.
var keyEffects = map[string][]KeyEffect{
	"claude": {
		{KeyEscape, EffectArmsRewind, EffectCancelsTurn, srcClaudeCodex},
		{KeyEnter, EffectSubmits, EffectQueues, srcClaudeCodex},
		{KeyCtrlC, EffectArmsExit, EffectCancelsTurn, srcClaudeCodex},
		{KeyCtrlU, EffectClearsLine, EffectUnknown, srcClaudeCodex},
	},
	"codex": {
		{KeyEscape, EffectArmsEdit, EffectCancelsTurn, srcClaudeCodex},
		{KeyEnter, EffectSubmits, EffectQueues, srcClaudeCodex},
		{KeyCtrlC, EffectQuits, EffectOpensMenu, srcClaudeCodex},
		{KeyCtrlU, EffectClearsLine, EffectUnknown, srcClaudeCodex},
	},
	"opencode": {
		{KeyEscape, EffectNone, EffectArmsCancel, srcOthers},
		{KeyEnter, EffectSubmits, EffectQueues, srcOthers},
		{KeyCtrlC, EffectQuits, EffectQuits, srcOthers},
		{KeyCtrlU, EffectClearsLine, EffectUnknown, srcOthers},
	},
	"kilo": {
		{KeyEscape, EffectNone, EffectArmsCancel, srcKilo},
		{KeyEnter, EffectSubmits, EffectQueues, srcKilo},
		// Unlike opencode, one C-c only arms the exit ("ctrl+c again to
		// exit"), idle or busy.
		{KeyCtrlC, EffectArmsExit, EffectArmsExit, srcKilo},
		{KeyCtrlU, EffectClearsLine, EffectUnknown, srcKilo},
	},
	"pi": {
		{KeyEscape, EffectNone, EffectCancelsTurn, srcOthers},
		{KeyEnter, EffectSubmits, EffectQueues, srcOthers},
		// Two presses within ~0.1 s do exit pi; one does nothing.
		{KeyCtrlC, EffectNone, EffectNone, srcOthers},
	},
	"gemini": {
		{KeyEscape, EffectNone, EffectCancelsTurn, srcOthers},
		{KeyEnter, EffectSubmits, EffectQueues, srcOthers},
		{KeyCtrlC, EffectArmsExit, EffectCancelsTurn, srcOthers},
	},
	"qwen": {
		{KeyEscape, EffectArmsRewind, EffectCancelsTurn, srcQwen},
		{KeyCtrlC, EffectArmsExit, EffectUnknown, srcQwen},
		{KeyEnter, EffectSubmits, EffectQueues, srcQwen},
	},
	"copilot": {
		{KeyCtrlC, EffectArmsExit, EffectCancelsTurn, srcCopilot},
		{KeyEscape, EffectUnknown, EffectArmsCancel, srcCopilot},
		{KeyEnter, EffectSubmits, EffectQueues, srcCopilot},
	},
	"cline": {
		{KeyEscape, EffectNone, EffectCancelsTurn, srcCline},
		{KeyEnter, EffectSubmits, EffectQueues, srcCline},
		{KeyCtrlU, EffectClearsLine, EffectUnknown, srcCline},
	},
	"pi-signed": {{KeyEscape, EffectUnknown, EffectCancelsTurn, srcInterrupt}},
	"grok":      {{KeyCtrlC, EffectUnknown, EffectCancelsTurn, srcInterrupt}},
	"kimi":      {{KeyEscape, EffectUnknown, EffectCancelsTurn, srcInterrupt}},
	"cursor":    {{KeyEscape, EffectUnknown, EffectCancelsTurn, srcInterrupt}},
	"agy": {
		{KeyEscape, EffectUnknown, EffectCancelsTurn, srcInterrupt},
		// Its reference maps Ctrl+C to cli.exit ("Terminates the CLI
		// session, prompts for confirmation if agent is working"); one
		// firstmate note disagrees, so idle is taken at its docs' word.
		{KeyCtrlC, EffectQuits, EffectUnknown, "docs/harnesses.md#agy"},
	},
	"muse": {{KeyEscape, EffectUnknown, EffectCancelsTurn, srcInterrupt}},
}

// KeyEffects returns what each named key does to h, in NamedKeys order,
// unknown where nothing was observed.
func (h Harness) KeyEffects() []KeyEffect {
	out := make([]KeyEffect, len(NamedKeys))
	for i, k := range NamedKeys {
		out[i] = h.KeyEffect(k)
	}
	return out
}

// KeyEffect returns what key k does to h.
func (h Harness) KeyEffect(k Key) KeyEffect {
	for _, e := range keyEffects[h.Name] {
		if e.Key == k {
			return e
		}
	}
	return KeyEffect{Key: k, Idle: EffectUnknown, Busy: EffectUnknown}
}
