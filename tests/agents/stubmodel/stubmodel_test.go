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
		{"anthropic merged turns, older block", `{"messages":[{"role":"user","content":[{"type":"text","text":"hang fmhang"},{"type":"text","text":"[Request interrupted by user]"},{"type":"text","text":"q1 plain"}]}]}`, false},
		{"anthropic merged turns, newest block", `{"messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b fmhang"}]}]}`, true},
		{"gemini older part", `{"contents":[{"role":"user","parts":[{"text":"fmhang"},{"text":"ok"}]}]}`, false},
		{"not json", `fmhang`, true},
	}
	for _, c := range cases {
		got := strings.Contains(string(newestUserMessage([]byte(c.body))), HangWord)
		if got != c.hang {
			t.Errorf("%s: hang=%v, want %v", c.name, got, c.hang)
		}
	}
}
