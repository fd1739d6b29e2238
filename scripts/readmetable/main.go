// Command readmetable rewrites the capability table in README.md from the
// harness package, so the README can never drift from the code.
package main

import (
	"fmt"
	"os"

	"fmctl/harness"
)

func main() {
	data, err := os.ReadFile("README.md")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	out, err := harness.ReplaceReadmeTable(string(data))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := os.WriteFile("README.md", []byte(out), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
