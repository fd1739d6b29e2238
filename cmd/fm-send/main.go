// Command fm-send delivers conversational text (or one named key) to a task's agent.
package main

import (
	"os"

	"fmctl/cmd/internal/send"
)

func main() { os.Exit(send.Main(os.Args)) }
