package deliver

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fmctl/backends"
	"fmctl/harness"
)

func realScreen(t *testing.T, h, name string) (harness.ScreenSig, backends.Screen) {
	t.Helper()
	hh, _ := harness.Lookup(h)
	sig, ok := hh.Screen()
	if !ok {
		t.Fatalf("%s has no screen signatures", h)
	}
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "tests", "captures", h+"-"+sig.Release, name+".txt"))
	if err != nil {
		t.Fatal(err)
	}
	return sig, backends.Screen{Lines: strings.Split(string(data), "\n")}
}

// After Enter, a real composer reads Holding while it still shows the text
// (or its collapsed-paste placeholder), Cleared once empty, and Unknown at a
// dialog or holding other text.
func TestSigClassifyOnRealCaptures(t *testing.T) {
	cases := []struct {
		h, file, tail string
		want          ComposerState
	}{
		{"claude", "composer-text", "ello one", Holding},
		{"claude", "composer-text", "other", Unknown},
		{"claude", "composer-empty-after-400", "ello one", Cleared},
		{"claude", "help", "/help", Unknown},
		{"codex", "help", "/help", Holding},
		{"pi", "paste-collapsed", "9a0b1c2d", Holding},
		{"gemini", "composer-text", "ello one", Holding},
		{"gemini", "paste-collapsed", "9a0b1c2d", Holding},
		{"gemini", "composer-empty", "ello one", Cleared},
	}
	for _, c := range cases {
		sig, s := realScreen(t, c.h, c.file)
		if got := sigClassify(sig, s, c.tail, 0); got != c.want {
			t.Errorf("%s/%s tail %q: %v, want %v", c.h, c.file, c.tail, got, c.want)
		}
	}
}
