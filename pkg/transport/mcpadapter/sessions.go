package mcpadapter

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"runtime/debug"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
)

// sessions is the registry of live MCP HTTP sessions. It bounds how many
// live at once, per credential and in total, and ends a session idle for
// longer than its TTL. It is mcp-go's session id manager (through
// ResolveSessionIdManager), so an id it does not know is rejected by mcp-go too; mcp-go's
// own per-session state is reclaimed by the expire hook.
type sessions struct {
	ttl                   time.Duration
	maxPerOwner, maxTotal int
	expire                func(id string) // reclaims mcp-go's state of an expired session

	mu       sync.Mutex
	byID     map[string]*session
	perOwner map[string]int // live sessions and pending reservations
	total    int
	streams  map[string]int // open GET streams per owner
	sweep    *time.Timer    // armed while any session lives
}

// session is one live session, bound to the credential that created it.
type session struct {
	owner      string
	calls      *inflight
	active     int       // requests and streams in progress; guarded by sessions.mu
	lastActive time.Time // when the last of them ended
	streams    map[*int]context.CancelFunc
}

// reservation holds a session slot for an initialize until mcp-go
// generates the id.
type reservation struct {
	owner string
	id    string
}

type reservationKey struct{}

func newSessions(ttl time.Duration, maxPerOwner, maxTotal int) *sessions {
	return &sessions{
		ttl: ttl, maxPerOwner: maxPerOwner, maxTotal: maxTotal,
		byID: map[string]*session{}, perOwner: map[string]int{}, streams: map[string]int{},
	}
}

// reserve takes a session slot for owner, or says which bound is reached.
func (s *sessions) reserve(owner string) (*reservation, *domainerr.Error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.perOwner[owner] >= s.maxPerOwner {
		return nil, limitError("sessions_per_credential", s.maxPerOwner,
			"too many MCP sessions for this credential (limit %d); end unused sessions with DELETE or wait for them to expire", s.maxPerOwner)
	}
	if s.total >= s.maxTotal {
		return nil, limitError("sessions_total", s.maxTotal,
			"too many MCP sessions on this server (limit %d); retry later", s.maxTotal)
	}
	s.perOwner[owner]++
	s.total++
	return &reservation{owner: owner}, nil
}

// release gives back a reservation that never became a session.
func (s *sessions) release(r *reservation) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.id == "" {
		s.uncount(r.owner)
	}
}

func (s *sessions) uncount(owner string) {
	if s.perOwner[owner]--; s.perOwner[owner] <= 0 {
		delete(s.perOwner, owner)
	}
	s.total--
}

// create turns r into a live session and returns its id.
func (s *sessions) create(r *reservation) string {
	id := newSessionID()
	s.mu.Lock()
	defer s.mu.Unlock()
	r.id = id
	s.byID[id] = &session{owner: r.owner, calls: newInflight(), lastActive: time.Now(), streams: map[*int]context.CancelFunc{}}
	if s.sweep == nil {
		s.sweep = time.AfterFunc(s.sweepInterval(), func() { s.sweepExpired(time.Now()) })
	}
	return id
}

// newSessionID returns 128 random bits in hex.
func newSessionID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func (s *sessions) sweepInterval() time.Duration {
	return min(max(s.ttl/4, 100*time.Millisecond), time.Minute)
}

// begin marks a request or stream of session id by owner as in progress
// and returns the session; nil when the id is unknown, expired or another
// credential's. end must follow.
func (s *sessions) begin(id, owner string) *session {
	s.mu.Lock()
	defer s.mu.Unlock()
	sess := s.byID[id]
	if sess == nil || sess.owner != owner {
		return nil
	}
	sess.active++
	return sess
}

func (s *sessions) end(sess *session) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sess.active--
	sess.lastActive = time.Now()
}

// openStream takes a stream slot for owner in sess; cancel is called when
// the session ends. close releases the slot.
func (s *sessions) openStream(sess *session, cancel context.CancelFunc, limit int) (close func(), err *domainerr.Error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.streams[sess.owner] >= limit {
		return nil, limitError("streams_per_credential", limit,
			"too many open MCP streams (GET %s) for this credential (limit %d); close one first", Path, limit)
	}
	s.streams[sess.owner]++
	key := new(int)
	sess.streams[key] = cancel
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		delete(sess.streams, key)
		if s.streams[sess.owner]--; s.streams[sess.owner] <= 0 {
			delete(s.streams, sess.owner)
		}
	}, nil
}

// terminate ends session id, closing its streams, and reports whether it
// was live.
func (s *sessions) terminate(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.remove(id)
}

func (s *sessions) remove(id string) bool {
	sess := s.byID[id]
	if sess == nil {
		return false
	}
	delete(s.byID, id)
	s.uncount(sess.owner)
	for _, cancel := range sess.streams {
		cancel()
	}
	return true
}

// sweepExpired ends the sessions idle for at least the TTL at now,
// reclaims mcp-go's state of each, and re-arms while sessions remain.
func (s *sessions) sweepExpired(now time.Time) {
	var expired []string
	s.mu.Lock()
	for id, sess := range s.byID {
		if sess.active == 0 && now.Sub(sess.lastActive) >= s.ttl {
			s.remove(id)
			expired = append(expired, id)
		}
	}
	if len(s.byID) > 0 {
		s.sweep.Reset(s.sweepInterval())
	} else {
		s.sweep = nil
	}
	s.mu.Unlock()
	for _, id := range expired {
		s.expire(id)
	}
	if len(expired) >= freeAfter {
		// An idle process may not collect for minutes, and its freed
		// heap stays resident until it does: give it back now.
		debug.FreeOSMemory()
	}
}

// freeAfter is how many sessions (about 10 KiB each in mcp-go) one sweep
// must end before it returns their memory to the operating system.
const freeAfter = 100

// live reports the number of live sessions.
func (s *sessions) live() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.byID)
}

// ResolveSessionIdManager gives mcp-go the session id manager for request
// r (nil for mcp-go's own housekeeping).
func (s *sessions) ResolveSessionIdManager(r *http.Request) server.SessionIdManager {
	m := idManager{s: s}
	if r != nil {
		m.res, _ = r.Context().Value(reservationKey{}).(*reservation)
	}
	return m
}

// idManager is mcp-go's view of the registry for one request.
type idManager struct {
	s   *sessions
	res *reservation // set for an initialize the guard admitted
}

// Generate creates the session the guard reserved. mcp-go generates ids
// only for an initialize (the guard answers a GET without a session
// itself); were it to call without a reservation, the id it gets is
// registered nowhere, so no request can use it.
func (m idManager) Generate() string {
	if m.res == nil {
		return newSessionID()
	}
	return m.s.create(m.res)
}

// Validate accepts live sessions; the guard has already checked the
// credential.
func (m idManager) Validate(id string) (isTerminated bool, err error) {
	m.s.mu.Lock()
	defer m.s.mu.Unlock()
	if m.s.byID[id] == nil {
		return false, errSessionNotFound
	}
	return false, nil
}

// Terminate ends a session (DELETE /mcp).
func (m idManager) Terminate(id string) (isNotAllowed bool, err error) {
	m.s.terminate(id)
	return false, nil
}

var errSessionNotFound = domainerr.New(domainerr.NotFound, "session not found")

func limitError(limit string, value int, format string, args ...any) *domainerr.Error {
	return domainerr.Retryable(domainerr.SessionLimit, format, args...).
		WithDetails(map[string]any{"limit": limit, "value": value})
}
