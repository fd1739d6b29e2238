// Command stubmodel runs the test tier's loopback model stub by hand, for
// probing a real agent CLI: it prints its URL, then one line per request.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"time"

	"fmctl/tests/agents/stubmodel"
)

func main() {
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
			fmt.Printf("%s %s %s held=%v bytes=%d\n", r.At.Format("15:04:05.000"), r.Method, r.Path, r.Held, len(r.Body))
		}
		seen = len(reqs)
	}
}
