package harness

// Key is a named key a lifecycle verb or `fm-send --key` may deliver. The set
// is closed: a backend adapter maps each one to its own CLI spelling.
type Key string

const (
	KeyEscape Key = "Escape"
	KeyEnter  Key = "Enter"
	KeyCtrlC  Key = "C-c"
	KeyCtrlU  Key = "C-u"
	// KeyEnd moves the cursor to the end of the composer's row before a
	// clear. It is fmctl's own key (a harness's verified clear sequence),
	// not one fm-send --key offers.
	KeyEnd Key = "End"
)

// NamedKeys lists every key the toolkit knows, in display order.
var NamedKeys = []Key{KeyEscape, KeyEnter, KeyCtrlC, KeyCtrlU}

// KeyNames returns the names of NamedKeys, in display order.
func KeyNames() []string {
	out := make([]string, len(NamedKeys))
	for i, k := range NamedKeys {
		out[i] = string(k)
	}
	return out
}

// keyAliases are the spellings a caller may type for a named key. They are
// folded to one canonical name before the backend ability is checked.
var keyAliases = map[string]Key{
	"Escape": KeyEscape, "escape": KeyEscape, "Esc": KeyEscape, "esc": KeyEscape,
	"Enter": KeyEnter, "enter": KeyEnter,
	"C-c": KeyCtrlC, "c-c": KeyCtrlC, "ctrl+c": KeyCtrlC, "Ctrl+C": KeyCtrlC,
	"C-u": KeyCtrlU, "c-u": KeyCtrlU, "ctrl+u": KeyCtrlU, "Ctrl+U": KeyCtrlU,
}

// ParseKey folds a typed key spelling to its canonical name.
func ParseKey(s string) (Key, bool) {
	k, ok := keyAliases[s]
	return k, ok
}
