package agents

import (
	"encoding/json"
	"regexp"
	"strings"
)

// sentText is one fm-send of a text the lab made, with the message id it
// printed (exit 0 on stdout, an unconfirmed send on stderr).
type sentText struct {
	text   string
	id     string
	result result
}

var messageIDPattern = regexp.MustCompile(`(?:message[=":]+|--message-id )(m[0-9]{8}T[0-9]{6}-[0-9a-f]{8})`)

func messageIDOf(out string) string {
	if m := messageIDPattern.FindStringSubmatch(out); m != nil {
		return m[1]
	}
	return ""
}

// recordEntry is one object of fm-control read --record --json.
type recordEntry struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
	End     string `json:"end"`
	Text    string `json:"text"`
}

// judgeRecordView judges `fm-control read <id> --record --json` against
// the lab's own sends: each message fm-send confirmed is listed exactly
// once with the id fm-send printed and its text, no id stands on two
// entries or on another text, and the message whose text starts with
// replyPrompt is followed by the model's reply and a completed turn end
// before the next message.
func (s *scen) judgeRecordView(replyPrompt string) {
	l := s.l
	l.fm("fm-control", "read", l.addr, "--record") // the text form, for the log
	r := l.fm("fm-control", "read", l.addr, "--record", "--json")
	if r.code != 0 {
		s.broken("read --record exit %d: %s", r.code, oneLine(r.stderr))
	}
	var entries []recordEntry
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var e recordEntry
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			s.broken("read --record printed a line that is no JSON entry: %q", line)
		}
		entries = append(entries, e)
	}
	byID := map[string][]recordEntry{}
	for _, e := range entries {
		if e.Message != "" {
			byID[e.Message] = append(byID[e.Message], e)
		}
	}
	confirmed := 0
	for _, m := range l.sent {
		got := byID[m.id]
		switch {
		case m.id == "":
			continue
		case len(got) > 1:
			s.mark(False, "message %s is on %d entries", m.id, len(got))
		case len(got) == 1 && strings.TrimRight(got[0].Text, " \t\r\n") != strings.TrimRight(m.text, " \t\r\n"):
			s.mark(False, "message %s stands on %q, but fm-send sent %q", m.id, clip(got[0].Text), clip(m.text))
		case m.result.code == 0 && len(got) == 0:
			s.mark(False, "fm-send confirmed message %s (%q), but read --record does not list it", m.id, clip(m.text))
		case m.result.code == 0:
			confirmed++
		}
		delete(byID, m.id)
	}
	for id := range byID {
		s.mark(False, "read --record names message %s, which no send of this lab printed", id)
	}
	reply, end := false, ""
	for i, e := range entries {
		if e.Kind != "user" || !strings.HasPrefix(e.Text, replyPrompt) {
			continue
		}
		for _, f := range entries[i+1:] {
			if f.Kind == "user" {
				break
			}
			reply = reply || f.Kind == "reply"
			if f.Kind == "turn-end" && end == "" {
				end = f.End
			}
		}
	}
	if !reply || end != "completed" {
		s.broken("after %q read --record shows reply=%v and turn end %q, want a reply and a completed end", replyPrompt, reply, end)
	}
	if s.verdict == "" {
		s.mark(Backed, "read --record lists the %d confirmed messages once each with fm-send's ids, and the model's reply and completed turn end", confirmed)
	}
	s.note("%d entries; kinds %s", len(entries), kindCounts(entries))
}

func kindCounts(es []recordEntry) string {
	n := map[string]int{}
	for _, e := range es {
		n[e.Kind]++
	}
	b, _ := json.Marshal(n)
	return string(b)
}
