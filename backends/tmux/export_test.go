package tmux

// What the external tests (open_test.go, which goes through mux.Open, the
// package that imports this one) share with the package's own.
var (
	PrivateTmux = privateTmux
	TraceCount  = traceCount
	Must        = must[[]byte]
)

const WireTraceName = wireTraceName
