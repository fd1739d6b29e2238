package stubmodel

import (
	"strings"
	"testing"
)

func TestNewestUserMessageDecidesTheHang(t *testing.T) {
	cases := []struct {
		name, body string
		hang       bool
	}{
		{"anthropic newest", `{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"x"},{"role":"user","content":[{"type":"text","text":"go fmhang"}]}]}`, true},
		{"anthropic older only", `{"messages":[{"role":"user","content":"go fmhang"},{"role":"assistant","content":"x"},{"role":"user","content":"next"}]}`, false},
		{"responses newest", `{"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"fmhang now"}]}]}`, true},
		{"responses older only", `{"input":[{"role":"user","content":"fmhang"},{"role":"user","content":"plain"}]}`, false},
		{"gemini newest", `{"contents":[{"role":"model","parts":[]},{"role":"user","parts":[{"text":"wait fmhang"}]}]}`, true},
		{"gemini older only", `{"contents":[{"role":"user","parts":[{"text":"fmhang"}]},{"role":"user","parts":[{"text":"ok"}]}]}`, false},
		{"not json", `fmhang`, true},
	}
	for _, c := range cases {
		got := strings.Contains(string(newestUserMessage([]byte(c.body))), HangWord)
		if got != c.hang {
			t.Errorf("%s: hang=%v, want %v", c.name, got, c.hang)
		}
	}
}
