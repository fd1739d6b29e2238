// Package stubmodel is a loopback stand-in for the model APIs the real agent
// CLIs call. The CLIs stay real; only the far end of their HTTP calls is ours,
// so a test decides whether a turn ends at once or stays busy until it is
// interrupted, instead of waiting out each CLI's offline retry schedule.
//
// A request whose newest user message contains HangWord is held open until
// the client goes away (a real busy turn to interrupt); any other POST is
// answered at once with a 400 that the Anthropic, OpenAI and Gemini clients
// all read as a non-retryable error, so the turn ends and the agent is idle
// again. Only the newest user message counts because every CLI resends the
// whole conversation: one hang prompt would otherwise hold every later turn.
package stubmodel

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// HangWord in a prompt keeps its turn busy until the agent cancels it.
const HangWord = "fmhang"

// errorBody carries every field the three API dialects read an error from.
const errorBody = `{"type":"error","error":{"type":"invalid_request_error","code":400,"status":"INVALID_ARGUMENT","message":"fmctl stub model: no model is reachable from the test tier"}}`

// Request is one call the stub received.
type Request struct {
	Method, Path string
	Body         []byte
	Held         bool      // held open as a busy turn
	At           time.Time // when it arrived
}

// Server is a running stub.
type Server struct {
	URL  string // http://127.0.0.1:port, no trailing slash
	srv  *http.Server
	mu   sync.Mutex
	reqs []Request
	open int // held requests still in flight
	stop chan struct{}
}

// Start listens on a loopback port.
func Start() (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Server{URL: "http://" + ln.Addr().String(), stop: make(chan struct{})}
	s.srv = &http.Server{Handler: http.HandlerFunc(s.serve), ReadHeaderTimeout: 10 * time.Second}
	go s.srv.Serve(ln)
	return s, nil
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	hold := r.Method == http.MethodPost && bytes.Contains(newestUserMessage(body), []byte(HangWord))
	s.mu.Lock()
	s.reqs = append(s.reqs, Request{Method: r.Method, Path: r.URL.Path, Body: body, Held: hold, At: time.Now()})
	s.mu.Unlock()
	if r.Method != http.MethodPost {
		// Model listings and health checks: an empty list, so nothing is
		// offered and nothing retries.
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"object":"list","data":[],"models":[]}`)
		return
	}
	if hold {
		s.mu.Lock()
		s.open++
		s.mu.Unlock()
		defer func() { s.mu.Lock(); s.open--; s.mu.Unlock() }()
		select {
		case <-r.Context().Done():
		case <-s.stop:
		}
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	io.WriteString(w, errorBody)
}

// Requests returns every call received so far, oldest first.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// Held reports how many busy turns are still held open.
func (s *Server) Held() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.open
}

// Close releases every held turn and stops the server.
func (s *Server) Close() error {
	close(s.stop)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	return s.srv.Shutdown(ctx)
}

// newestUserMessage finds the last user turn in a request of any of the
// three dialects (Anthropic and OpenAI chat "messages", OpenAI Responses
// "input", Gemini "contents") and returns it as JSON; a body it cannot read
// counts whole.
func newestUserMessage(body []byte) []byte {
	var req map[string]json.RawMessage
	if json.Unmarshal(body, &req) != nil {
		return body
	}
	for _, key := range []string{"messages", "input", "contents"} {
		var turns []json.RawMessage
		if json.Unmarshal(req[key], &turns) != nil || len(turns) == 0 {
			continue
		}
		for i := len(turns) - 1; i >= 0; i-- {
			var turn struct {
				Role    string
				Content json.RawMessage
				Parts   []json.RawMessage
			}
			if json.Unmarshal(turns[i], &turn) != nil || turn.Role != "user" {
				continue
			}
			// claude merges consecutive user turns into one message of
			// several blocks (an interrupted prompt, its marker, the next
			// prompt): only the last block is the newest prompt.
			var blocks []json.RawMessage
			if json.Unmarshal(turn.Content, &blocks) == nil && len(blocks) > 0 {
				return blocks[len(blocks)-1]
			}
			if len(turn.Parts) > 0 {
				return turn.Parts[len(turn.Parts)-1]
			}
			return turns[i]
		}
	}
	return body
}
