// Package stubmodel is a loopback stand-in for the model APIs the real agent
// CLIs call. The CLIs stay real; only the far end of their HTTP calls is
// ours. It speaks each CLI's own wire dialect, streamed as the real APIs
// stream: Anthropic Messages (claude, and opencode and pi as the tier
// configures them), OpenAI Responses (codex), OpenAI chat completions
// (cline) and Gemini's generateContent (gemini-cli).
//
// A word in the newest user prompt picks the turn (scenario.go): a plain
// reply by default; a long streamed answer; tool calls the CLI must run; a
// rate limit, an overload or a 5xx before a later attempt succeeds; a stream
// cut mid-answer; the API unreachable for a while; or a request held open
// until the client goes away. Only the newest prompt counts because every
// CLI resends the whole conversation.
package stubmodel

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Request is one call the stub received.
type Request struct {
	Method, Path string
	Query        string
	Header       http.Header
	Body         []byte
	Dialect      string    // anthropic, responses, chat, gemini; "" for other calls
	Prompt       string    // the newest user prompt the dialect read
	Scenario     Kind      // what the prompt asked for
	Outcome      string    // how it was answered: reply, tool-call, 429, reset, held, ...
	Held         bool      // held open as a busy turn (hang)
	Side         bool      // a side request offering no tools (a title), not the turn
	At           time.Time // when it arrived
	// Done is when its answer ended: for a turn held open or streamed
	// (outcome held or gone), the moment the client closed the connection,
	// which is when the agent aborted its turn on the tier's clock.
	Done time.Time
}

// Server is a running stub.
type Server struct {
	URL  string // http://127.0.0.1:port, no trailing slash
	addr string
	srv  *http.Server

	mu        sync.Mutex
	ln        net.Listener
	reqs      []Request
	open      int            // POSTs still being answered
	attempts  map[string]int // failing scenarios: attempts per prompt
	downUntil time.Time
	nextID    int

	stop chan struct{}
}

// dialect is one API's request and reply shapes.
type dialect interface {
	parse(body []byte) (Turn, error)
	fail(w http.ResponseWriter, k Kind)
	reply(w http.ResponseWriter, t Turn, id string) out
}

// Start listens on a loopback port.
func Start() (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Server{URL: "http://" + ln.Addr().String(), addr: ln.Addr().String(), ln: ln,
		attempts: map[string]int{}, stop: make(chan struct{})}
	s.srv = &http.Server{Handler: http.HandlerFunc(s.serve), ReadHeaderTimeout: 10 * time.Second}
	go s.srv.Serve(ln)
	return s, nil
}

// route names the dialect of a model call by its path; ok=false for the
// other calls a CLI makes (listings, token counts, health checks).
func route(method, path string) (d dialect, name string, ok bool) {
	if method != http.MethodPost {
		return nil, "", false
	}
	switch {
	case strings.HasSuffix(path, "/messages"):
		return anthropic{}, "anthropic", true
	case strings.HasSuffix(path, "/chat/completions"):
		return chat{}, "chat", true
	case strings.HasSuffix(path, "/responses"):
		return responses{}, "responses", true
	case strings.HasSuffix(path, ":streamGenerateContent"):
		return gemini{stream: true}, "gemini", true
	case strings.HasSuffix(path, ":generateContent"):
		return gemini{}, "gemini", true
	}
	return nil, "", false
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	req := Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Header: r.Header.Clone(), Body: body, At: time.Now()}
	idx := s.record(req)
	if s.isDown() {
		// A connection kept alive from before the API went away.
		s.setOutcome(idx, "reset")
		reset(w)
		return
	}
	d, name, ok := route(r.Method, r.URL.Path)
	if !ok {
		s.setOutcome(idx, "other")
		answerOther(w, r)
		return
	}
	turn, err := d.parse(body)
	if err != nil {
		s.setOutcome(idx, "unreadable")
		writeJSON(w, http.StatusBadRequest, map[string]any{"type": "error", "error": map[string]any{
			"type": "invalid_request_error", "message": fmt.Sprintf("fmctl stub model: unreadable request: %v", err)}})
		return
	}
	sc := ParseScenario(turn.Prompt)
	// A call offering no tools is the CLI's own side request about the
	// prompt (claude asks for a session title with it), never the turn: it
	// gets a plain reply, or a title request held on fmhang would keep the
	// stub busy long after the turn was interrupted.
	side := len(turn.Tools) == 0
	if side {
		sc = Scenario{Kind: Reply}
	}
	s.mu.Lock()
	s.reqs[idx].Dialect, s.reqs[idx].Prompt, s.reqs[idx].Scenario, s.reqs[idx].Side = name, turn.Prompt, sc.Kind, side
	s.open++
	s.nextID++
	id := fmt.Sprintf("fmstub%06d", s.nextID)
	attempt := 0
	if sc.Kind >= RateLimit && sc.Kind <= Down {
		key := fmt.Sprintf("%s\x00%s\x00%d", name, turn.Prompt, turn.ToolResults)
		s.attempts[key]++
		attempt = s.attempts[key]
	}
	s.mu.Unlock()
	defer func() { s.mu.Lock(); s.open--; s.mu.Unlock() }()
	s.setOutcome(idx, s.answer(w, r.Context(), d, turn, sc, attempt, id, idx))
}

// answer serves one model call as its scenario says and returns how.
func (s *Server) answer(w http.ResponseWriter, ctx context.Context, d dialect, turn Turn, sc Scenario, attempt int, id string, idx int) string {
	switch sc.Kind {
	case Hang:
		s.mu.Lock()
		s.reqs[idx].Held = true
		s.mu.Unlock()
		select {
		case <-ctx.Done():
		case <-s.stop:
		}
		return "held"
	case RateLimit, Overload, ServerError:
		if attempt <= sc.Failures {
			d.fail(w, sc.Kind)
			return sc.Kind.String()
		}
	case Down:
		if attempt == 1 {
			s.goDown(sc.Duration)
			reset(w)
			return "down"
		}
	case Cut:
		if attempt <= sc.Failures {
			o := d.reply(w, turn, id)
			if o.begin() == nil && o.text("This answer is cut ") == nil {
				o.text("short by the fmctl stub model")
			}
			reset(w)
			return "cut"
		}
	}
	o := d.reply(w, turn, id)
	if err := o.begin(); err != nil {
		return "gone"
	}
	if sc.Kind == ToolCalls {
		if call, ok := nextCall(turn, sc); ok {
			if o.text("Running a tool for fmctl's test. ") != nil || o.call(call) != nil || o.end() != nil {
				return "gone"
			}
			return "tool-call"
		}
	}
	if sc.Kind == Long && turn.Stream {
		if !s.streamFor(ctx, o, sc.Duration) {
			return "gone"
		}
	}
	for _, chunk := range []string{"fmctl ", "stub ", "model: ", "done."} {
		if o.text(chunk) != nil {
			return "gone"
		}
	}
	if o.end() != nil {
		return "gone"
	}
	return "reply"
}

// streamFor streams a line every 200 ms for d, or until the client goes
// away; false if it went away.
func (s *Server) streamFor(ctx context.Context, o out, d time.Duration) bool {
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(d)
	for n := 1; ; n++ {
		select {
		case <-ctx.Done():
			return false
		case <-s.stop:
			return false
		case <-deadline:
			return true
		case <-tick.C:
			if o.text(fmt.Sprintf("Streaming line %d of a long answer.\n", n)) != nil {
				return false
			}
		}
	}
}

// answerOther answers what is not a model call: token counts get a count,
// listings an empty list, so nothing is offered and nothing retries.
func answerOther(w http.ResponseWriter, r *http.Request) {
	switch {
	case strings.HasSuffix(r.URL.Path, "/count_tokens"):
		writeJSON(w, http.StatusOK, map[string]any{"input_tokens": 10})
	case strings.HasSuffix(r.URL.Path, ":countTokens"):
		writeJSON(w, http.StatusOK, map[string]any{"totalTokens": 10})
	default:
		writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": []any{}, "models": []any{}})
	}
}

// reset ends the connection under w with a TCP reset, as a dropped
// connection does.
func reset(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	if tcp, ok := conn.(*net.TCPConn); ok {
		tcp.SetLinger(0)
	}
	conn.Close()
}

// goDown closes the listener for d, so connections are refused, then
// listens again on the same address.
func (s *Server) goDown(d time.Duration) {
	s.mu.Lock()
	s.downUntil = time.Now().Add(d)
	ln := s.ln
	s.ln = nil
	s.mu.Unlock()
	if ln != nil {
		ln.Close()
	}
	s.srv.SetKeepAlivesEnabled(false)
	go func() {
		select {
		case <-time.After(d):
		case <-s.stop:
			return
		}
		for i := 0; i < 50; i++ {
			ln, err := net.Listen("tcp", s.addr)
			if err == nil {
				s.mu.Lock()
				s.ln = ln
				s.mu.Unlock()
				s.srv.SetKeepAlivesEnabled(true)
				go s.srv.Serve(ln)
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
}

func (s *Server) isDown() bool { return time.Now().Before(s.DownUntil()) }

// DownUntil is when the API a DownWord turn made unreachable comes back:
// in the past (or zero) while it is up.
func (s *Server) DownUntil() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.downUntil
}

func (s *Server) record(r Request) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqs = append(s.reqs, r)
	return len(s.reqs) - 1
}

func (s *Server) setOutcome(idx int, outcome string) {
	s.mu.Lock()
	s.reqs[idx].Outcome, s.reqs[idx].Done = outcome, time.Now()
	s.mu.Unlock()
}

// Requests returns every call received so far, oldest first.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// Held reports how many model calls are still being answered: a held
// request or a long stream is a turn still running at the model.
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
	err := s.srv.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		return s.srv.Close()
	}
	return err
}

// toolID is a stable id for the i-th item of reply id.
func toolID(id string, i int) string { return fmt.Sprintf("%s_%d", id, i) }

// CallsFor returns the model calls whose newest prompt contains word (a
// scenario's unique nonce), oldest first; side requests are not calls of
// the turn.
func (s *Server) CallsFor(word string) []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Request
	for _, r := range s.reqs {
		if r.Dialect != "" && !r.Side && strings.Contains(r.Prompt, word) {
			out = append(out, r)
		}
	}
	return out
}
