package deliver

import "testing"

// A composer redraws text its own way: wrapped rows, a ⏎ for a newline,
// the routing marker's invisible separator dropped. The digest sees through
// that, and through nothing else.
func TestComposerDigestMatchesTextAsAComposerDrawsIt(t *testing.T) {
	sent := Mark("please run\nthe tests")
	for _, drawn := range []string{
		"[fm-from-firstmate]please run⏎the tests",
		"[fm-from-firstmate]please run\n  the tests",
		"[fm-from-firstmate]please\nrun the tests ",
	} {
		if ComposerDigest(drawn) != ComposerDigest(sent) {
			t.Errorf("%q does not match the text sent", drawn)
		}
	}
	for _, other := range []string{"please run the test", "[fm-from-firstmate]please run the tests!", "please run the tests"} {
		if ComposerDigest(other) == ComposerDigest(sent) {
			t.Errorf("%q matches the text sent", other)
		}
	}
	if ComposerDigest(" \n⏎\u2063") != "" {
		t.Error("text of nothing but blanks has a digest")
	}
}
