package faults

import (
	"bytes"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// seamNames are the variables only a fault build reads (state/inject_on.go,
// authority/seam_on.go).
var seamNames = []string{"FM_TEST_CRASH", "FM_TEST_FAULT", "FM_TEST_CALLER"}

// TestReleaseBuildHasNoFaultSeams builds the binaries as `make build` does
// (its own target, flags and all, into a temporary BINDIR) and proves none
// can be told to fail or kill itself: no binary was built with the fmfault
// tag or holds a seam's variable name. The fault build this package drives
// holds both, which shows the check can see them. Each is static, too: built
// with cgo off and without a dynamic loader to start it.
func TestReleaseBuildHasNoFaultSeams(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cmd := exec.Command("make", "-C", root, "build", "BINDIR="+dir, "GO="+gobin)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make build: %v\n%s", err, out)
	}
	for _, name := range []string{"fm-send", "fm-control", "fm-spawn", "fm-teardown"} {
		path := filepath.Join(dir, name)
		info, err := exec.Command(gobin, "version", "-m", path).Output()
		if err != nil {
			t.Fatalf("go version -m %s: %v", name, err)
		}
		if !strings.Contains(string(info), "-trimpath") {
			t.Errorf("%s: not built by make build's flags (no -trimpath in its build info):\n%s", name, info)
		}
		if strings.Contains(string(info), "fmfault") {
			t.Errorf("%s: make build's binary was built with the fmfault tag:\n%s", name, info)
		}
		if !strings.Contains(string(info), "CGO_ENABLED=0") {
			t.Errorf("%s: make build's binary was built with cgo on:\n%s", name, info)
		}
		if elfInterpreter(t, path) {
			t.Errorf("%s: make build's binary is dynamically linked (it has an ELF interpreter)", name)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, seam := range seamNames {
			if bytes.Contains(data, []byte(seam)) {
				t.Errorf("%s: make build's binary holds %s, a fault seam", name, seam)
			}
		}
	}
	faulty, err := os.ReadFile(filepath.Join(bin, "fm-spawn"))
	if err != nil {
		t.Fatal(err)
	}
	for _, seam := range seamNames {
		if !bytes.Contains(faulty, []byte(seam)) {
			t.Errorf("the fmfault build's fm-spawn lacks %s: the check above could not see a seam", seam)
		}
	}
}

// elfInterpreter says whether the ELF file at path names a dynamic loader
// (PT_INTERP): a static binary has none.
func elfInterpreter(t *testing.T, path string) bool {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatalf("read %s as ELF: %v", path, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return true
		}
	}
	return false
}
