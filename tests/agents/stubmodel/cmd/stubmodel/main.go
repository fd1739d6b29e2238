// Command stubmodel runs the test tier's loopback model stub by hand, for
// probing a real agent CLI: it prints its URL, then one line per request.
// With -dump DIR it also writes each model call as DIR/NNN.json in the form
// of the stub's recorded-request fixtures (testdata/).
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"time"

	"fmctl/tests/agents/stubmodel"
)

func main() {
	dump := flag.String("dump", "", "write each model call's path and body to this directory")
	flag.Parse()
	s, err := stubmodel.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "stubmodel:", err)
		os.Exit(1)
	}
	fmt.Println(s.URL)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt)
	seen := 0
	for {
		select {
		case <-sig:
			s.Close()
			return
		case <-time.After(200 * time.Millisecond):
		}
		reqs := s.Requests()
		for _, r := range reqs[seen:] {
			fmt.Printf("%s %s %s %s scenario=%s outcome=%s bytes=%d\n", r.At.Format("15:04:05.000"), r.Method, r.Path, r.Dialect, r.Scenario, r.Outcome, len(r.Body))
		}
		if *dump != "" {
			for i, r := range reqs[seen:] {
				if r.Dialect == "" || !json.Valid(r.Body) {
					continue
				}
				doc, _ := json.MarshalIndent(map[string]any{"path": r.Path, "body": json.RawMessage(r.Body)}, "", " ")
				if err := os.WriteFile(filepath.Join(*dump, fmt.Sprintf("%03d.json", seen+i)), doc, 0o644); err != nil {
					fmt.Fprintln(os.Stderr, "stubmodel:", err)
				}
			}
		}
		seen = len(reqs)
	}
}
