package seed

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/BurntSushi/toml"
)

func TestCodexSeed(t *testing.T) {
	home, wt := t.TempDir(), "/tmp/some/w_t"
	p, err := Prepare(context.Background(), "codex", Run{Home: home, Worktree: wt, Version: "0.171.0", ModelURL: "http://127.0.0.1:9"})
	if err != nil {
		t.Fatal(err)
	}
	if p.Cleanup == nil || !slices.ContainsFunc(p.Env, func(e string) bool { return len(e) > 15 && e[:15] == "OPENAI_API_KEY=" }) {
		t.Errorf("env %q / cleanup: want OPENAI_API_KEY and a daemon cleanup", p.Env)
	}
	var cfg struct {
		CheckForUpdateOnStartup bool   `toml:"check_for_update_on_startup"`
		ModelProvider           string `toml:"model_provider"`
		ModelProviders          map[string]struct {
			BaseURL            string `toml:"base_url"`
			EnvKey             string `toml:"env_key"`
			SupportsWebsockets bool   `toml:"supports_websockets"`
		} `toml:"model_providers"`
		Projects map[string]struct {
			TrustLevel string `toml:"trust_level"`
		} `toml:"projects"`
	}
	if _, err := toml.DecodeFile(filepath.Join(home, ".codex", "config.toml"), &cfg); err != nil {
		t.Fatal(err)
	}
	prov := cfg.ModelProviders[cfg.ModelProvider]
	if cfg.CheckForUpdateOnStartup || prov.BaseURL != "http://127.0.0.1:9/v1" || prov.EnvKey != "OPENAI_API_KEY" || prov.SupportsWebsockets {
		t.Errorf("config.toml does not point codex at the stub: %+v", cfg)
	}
	if cfg.Projects[wt].TrustLevel != "trusted" {
		t.Errorf("config.toml does not trust %s: %+v", wt, cfg.Projects)
	}
}

// Cleanup stops the app-servers of its own HOME, even one that ignores
// SIGTERM as codex's does while a turn is held, and nothing else.
func TestCodexCleanupStopsOnlyItsHome(t *testing.T) {
	home, other := t.TempDir(), t.TempDir()
	start := func(h string) *exec.Cmd {
		// argv holds "app-server" as codex's daemons do. It blocks in the
		// shell's own read rather than looping over sleep: each forked
		// sleep is, until its exec, a second process with this argv and
		// HOME, which a scan under load counted as a second daemon.
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("sh", "-c", `trap "" TERM; read -r line`, "app-server")
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + h}
		cmd.Stdin = r
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		r.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		t.Cleanup(func() { cmd.Process.Kill(); <-done; w.Close() })
		return cmd
	}
	mine, theirs := start(home), start(other)
	p, err := Prepare(context.Background(), "codex", Run{Home: home, Worktree: "/w", ModelURL: "http://127.0.0.1:9"})
	if err != nil {
		t.Fatal(err)
	}
	if got := codexDaemons(home); !slices.Equal(got, []int{mine.Process.Pid}) {
		t.Fatalf("daemons of %s = %v, want [%d]", home, got, mine.Process.Pid)
	}
	p.Cleanup()
	if got := codexDaemons(home); len(got) != 0 {
		t.Errorf("after Cleanup, still running: %v", got)
	}
	if got := codexDaemons(other); !slices.Equal(got, []int{theirs.Process.Pid}) {
		t.Errorf("Cleanup touched another HOME's process: %v", got)
	}
}
