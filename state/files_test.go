package state

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A symlinked component anywhere below the root is refused, so a delete or
// read of wt/.claude/settings.local.json cannot reach through wt/.claude
// into a directory outside the worktree.
func TestNoSymlinkUnderRefusesEveryLinkedComponent(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "settings.local.json"), []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, ".claude")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "real"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "settings.local.json"), filepath.Join(root, "real", "link.json")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{".claude/settings.local.json", ".claude", "real/link.json"} {
		err := NoSymlinkUnder(root, filepath.Join(root, p))
		if err == nil || !strings.Contains(err.Error(), "is a symlink") {
			t.Errorf("NoSymlinkUnder(%s) = %v, want a symlink refusal", p, err)
		}
	}
	for _, p := range []string{"real", "real/absent/deeper", "absent.json"} {
		if err := NoSymlinkUnder(root, filepath.Join(root, p)); err != nil {
			t.Errorf("NoSymlinkUnder(%s) = %v, want nil", p, err)
		}
	}
	if err := NoSymlinkUnder(root, filepath.Join(outside, "x")); err == nil {
		t.Errorf("a path outside the root was accepted")
	}
	if _, err := os.Stat(filepath.Join(outside, "settings.local.json")); err != nil {
		t.Errorf("the link target was touched: %v", err)
	}
}

func TestRegularUnderNeedsARegularFileWithoutLinks(t *testing.T) {
	root := t.TempDir()
	target := filepath.Join(t.TempDir(), "secret.md")
	if err := os.WriteFile(target, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	brief := filepath.Join(root, "t1", "brief.md")
	if err := os.MkdirAll(filepath.Dir(brief), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, brief); err != nil {
		t.Fatal(err)
	}
	if err := RegularUnder(root, brief); err == nil || !strings.Contains(err.Error(), "is a symlink") {
		t.Errorf("RegularUnder(symlinked brief) = %v, want a symlink refusal", err)
	}
	if err := os.Remove(brief); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(brief, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := RegularUnder(root, brief); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("RegularUnder(directory) = %v, want a not-regular refusal", err)
	}
}

// WriteAtomic over a symlink would leave a 0644 copy of a 0600 target in
// the link's place; it refuses, and neither the link nor its target changes.
func TestWriteAtomicRefusesASymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	if err := os.WriteFile(target, []byte("original"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "brief.md")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	err := WriteAtomic(link, []byte("new"))
	if err == nil || !strings.Contains(err.Error(), "is a symlink") {
		t.Fatalf("WriteAtomic(symlink) = %v, want a symlink refusal", err)
	}
	if info, err := os.Lstat(link); err != nil || info.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v %v", info, err)
	}
	if data, _ := os.ReadFile(target); string(data) != "original" {
		t.Errorf("the target now holds %q", data)
	}
}

// WriteReport (an agent's own report, no fsync) replaces the file whole,
// mode 0644, leaves no temp file, and refuses a symlink as WriteAtomic does.
func TestWriteReportReplacesWholeAndRefusesASymlink(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "t1.agent-state")
	for _, body := range []string{"state=busy\n", "state=idle\n"} {
		if err := WriteReport(path, []byte(body)); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(path); string(got) != body {
			t.Fatalf("content %q, want %q", got, body)
		}
	}
	if info, _ := os.Stat(path); info.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", info.Mode().Perm())
	}
	if names := listDir(t, dir); len(names) != 1 {
		t.Errorf("temp files left behind: %v", names)
	}
	link := filepath.Join(dir, "t2.agent-state")
	if err := os.Symlink(path, link); err != nil {
		t.Fatal(err)
	}
	if err := WriteReport(link, []byte("state=busy\n")); err == nil || !strings.Contains(err.Error(), "is a symlink") {
		t.Fatalf("WriteReport(symlink) = %v, want a symlink refusal", err)
	}
	if got, _ := os.ReadFile(path); string(got) != "state=idle\n" {
		t.Errorf("the link's target now holds %q", got)
	}
}
