package zellijfake

import (
	"fmt"
	"strings"
)

// key is one parsed send-keys argument: a bare key and its modifiers, all
// lower-cased, as zellij's KeyWithModifier::from_str reads it
// (zellij-utils/src/data.rs): whitespace-separated words, the last one the
// bare key, the others modifiers.
type key struct {
	bare      string
	modifiers map[string]bool
}

// is reports whether k is exactly the given modifiers plus bare key.
func (k key) is(words ...string) bool {
	bare := words[len(words)-1]
	mods := words[:len(words)-1]
	if k.bare != bare || len(k.modifiers) != len(mods) {
		return false
	}
	for _, m := range mods {
		if !k.modifiers[m] {
			return false
		}
	}
	return true
}

var bareKeys = map[string]bool{
	"pagedown": true, "pageup": true, "left": true, "down": true, "up": true, "right": true,
	"home": true, "end": true, "backspace": true, "delete": true, "insert": true,
	"f1": true, "f2": true, "f3": true, "f4": true, "f5": true, "f6": true,
	"f7": true, "f8": true, "f9": true, "f10": true, "f11": true, "f12": true,
	"tab": true, "esc": true, "enter": true, "capslock": true, "scrolllock": true,
	"numlock": true, "printscreen": true, "pause": true, "menu": true, "space": true,
}

var modifierNames = map[string]bool{"shift": true, "alt": true, "ctrl": true, "super": true}

// parseKey accepts what zellij accepts and nothing else: "Escape" and "C-c"
// are rejected exactly as the real CLI rejects them.
func parseKey(s string) (key, error) {
	words := strings.Fields(s)
	if len(words) == 0 {
		return key{}, fmt.Errorf("empty key")
	}
	bare := words[len(words)-1]
	lower := strings.ToLower(bare)
	switch {
	case bareKeys[lower]:
		bare = lower
	case len([]rune(bare)) == 1:
	default:
		return key{}, fmt.Errorf("unsupported key")
	}
	k := key{bare: bare, modifiers: map[string]bool{}}
	for _, m := range words[:len(words)-1] {
		m = strings.ToLower(m)
		if !modifierNames[m] {
			return key{}, fmt.Errorf("unsupported modifier")
		}
		k.modifiers[m] = true
	}
	return k, nil
}
