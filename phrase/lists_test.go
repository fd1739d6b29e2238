package phrase

import "testing"

func TestOrList(t *testing.T) {
	cases := []struct {
		in   []string
		want string
	}{
		{nil, ""},
		{[]string{"a"}, "a"},
		{[]string{"a", "b"}, "a or b"},
		{[]string{"ship", "scout", "secondmate"}, "ship, scout or secondmate"},
	}
	for _, c := range cases {
		if got := OrList(c.in); got != c.want {
			t.Errorf("OrList(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
