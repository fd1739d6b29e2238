package launch

import "testing"

func TestInputLineJoinsTheRowsTheLaunchLineSpans(t *testing.T) {
	line := "claude 'Read the brief at /h/data/t1/brief.md'"
	cases := []struct {
		rows []string
		got  string
		span int
	}{
		{[]string{"old output", "$ " + line}, "$ " + line, 1},
		// zsh breaks a long input line into rows itself
		{[]string{"old output", "% claude 'Read the bri", "ef at /h/data/t1/brie", "f.md'"}, "% " + line, 3},
		{[]string{"$ claude 'Read the brief"}, "$ claude 'Read the brief", 0},
		{nil, "", 0},
	}
	for _, c := range cases {
		got, span := inputLine(c.rows, line)
		if got != c.got || span != c.span {
			t.Errorf("inputLine(%q) = %q, %d; want %q, %d", c.rows, got, span, c.got, c.span)
		}
	}
}

func TestBeganWithAcceptsOnlyThePromptTheLineBeganWith(t *testing.T) {
	before := []string{"$ echo X", "$ echo Y"}
	if !beganWith(before, "$", 1) {
		t.Error("the prompt of the last row was not accepted")
	}
	if beganWith(before, "$ echo X", 1) {
		t.Error("text from an earlier row, beyond the launch line's span, was taken for the prompt")
	}
	if beganWith([]string{"$"}, "$ echo X", 2) {
		t.Error("text that arrived after the clear was taken for the prompt")
	}
}
