package mcpadapter

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/notebridge/notebridge/pkg/auth/resourceserver"
	"github.com/notebridge/notebridge/pkg/core/executor"
	"github.com/notebridge/notebridge/pkg/core/registry"
	"github.com/notebridge/notebridge/pkg/core/scope"
)

type tokenTable map[string]resourceserver.Claims

func (tt tokenTable) VerifyAccessToken(_ context.Context, tok string) (resourceserver.Claims, error) {
	if p, ok := tt[tok]; ok {
		return p, nil
	}
	return resourceserver.Claims{}, errors.New("unknown")
}

// notesExecutor serves read_thing (a notes read) and write_thing (a notes
// write), and the note reads the note resources need; writes counts the
// write handler's runs.
func notesExecutor(t *testing.T, writes *atomic.Int32) *executor.Executor {
	t.Helper()
	obj := json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`)
	mk := func(name string, eff registry.Effect) registry.Operation {
		return registry.Operation{Name: name, Title: "T", Description: "D.", Toolset: "joplin", Effect: eff,
			InputSchema: obj, OutputSchema: obj, Exposure: []registry.Transport{registry.MCPHTTP},
			Handler: func(context.Context, json.RawMessage) (any, error) {
				if eff != registry.EffectRead {
					writes.Add(1)
				}
				return map[string]any{}, nil
			}}
	}
	reg, err := registry.New(mk("read_thing", registry.EffectRead), mk("write_thing", registry.EffectCreate),
		mk("list_notes", registry.EffectRead), mk("get_note", registry.EffectRead), mk("get_resource_content", registry.EffectRead))
	if err != nil {
		t.Fatal(err)
	}
	ex, err := executor.New(reg, executor.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	return ex
}

const rsResource = "https://notes.example.com/mcp"

func oauthHTTP(t *testing.T, writes *atomic.Int32, tokens tokenTable) testHTTP {
	t.Helper()
	rs, err := resourceserver.New(resourceserver.Config{Resource: rsResource, Issuer: "https://notes.example.com", Verifier: tokens,
		Now: func() time.Time { return time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC) }})
	if err != nil {
		t.Fatal(err)
	}
	return newGuardedHTTP(t, notesExecutor(t, writes), HTTPConfig{OAuth: &OAuthConfig{Resource: rs,
		Routes: map[string]http.Handler{rs.MetadataPath(): rs.MetadataHandler()}}})
}

func grantPrincipal(grant string, s ...scope.Scope) resourceserver.Claims {
	return resourceserver.Claims{GrantID: grant, ClientID: "c", Issuer: "https://notes.example.com", Audience: []string{rsResource},
		Scopes: scope.NewSet(s...), Expires: time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)}
}

// openSession initializes an MCP session with the given Authorization header.
func openSession(t *testing.T, url, auth string) map[string]string {
	t.Helper()
	resp, body := post(t, url+Path, initBody("2025-06-18"), map[string]string{"Authorization": auth})
	if resp.StatusCode != 200 {
		t.Fatalf("initialize: %d %s", resp.StatusCode, body)
	}
	h := map[string]string{"Authorization": auth, "Mcp-Session-Id": resp.Header.Get("Mcp-Session-Id"), "MCP-Protocol-Version": "2025-06-18"}
	post(t, url+Path, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, h)
	return h
}

const callWrite = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"write_thing","arguments":{}}}`

func TestOAuthFrontDoor(t *testing.T) {
	var writes atomic.Int32
	h := oauthHTTP(t, &writes, tokenTable{
		"ro-token": grantPrincipal("g-ro", scope.NotesRead),
		"rw-token": grantPrincipal("g-rw", scope.NotesRead, scope.NotesWrite),
		"foreign-token": func() resourceserver.Claims {
			p := grantPrincipal("g-x", scope.NotesWrite)
			p.Audience = []string{"https://other/mcp"}
			return p
		}(),
	})
	md := `Bearer resource_metadata="https://notes.example.com/.well-known/oauth-protected-resource/mcp", scope="notes:read notes:write okf:read okf:write"`
	resp, body := post(t, h.srv.URL+Path, initBody("2025-06-18"), nil)
	if resp.StatusCode != 401 || resp.Header.Get("WWW-Authenticate") != md || !strings.Contains(body, "UNAUTHENTICATED") {
		t.Fatalf("no token: %d %q %s", resp.StatusCode, resp.Header.Get("WWW-Authenticate"), body)
	}
	for _, tok := range []string{"unknown", "foreign-token"} {
		resp, body = post(t, h.srv.URL+Path, initBody("2025-06-18"), map[string]string{"Authorization": "Bearer " + tok})
		if ch := resp.Header.Get("WWW-Authenticate"); resp.StatusCode != 401 || !strings.Contains(ch, `error="invalid_token"`) || !strings.Contains(ch, "resource_metadata=") || strings.Contains(body+ch, tok) {
			t.Errorf("%s: %d %q %s", tok, resp.StatusCode, ch, body)
		}
	}
	mresp, err := http.Get(h.srv.URL + "/.well-known/oauth-protected-resource/mcp")
	if err != nil {
		t.Fatal(err)
	}
	mresp.Body.Close()
	if mresp.StatusCode != 200 {
		t.Fatalf("metadata without a token: %d", mresp.StatusCode)
	}

	// A read-only token lists and reads, and a write gets 403 with the
	// scope challenge; the handler never runs.
	ro := openSession(t, h.srv.URL, "Bearer ro-token")
	if _, body := post(t, h.srv.URL+Path, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read_thing","arguments":{}}}`, ro); strings.Contains(body, "isError") {
		t.Fatalf("read with notes:read: %s", body)
	}
	resp, body = post(t, h.srv.URL+Path, callWrite, ro)
	want := `Bearer error="insufficient_scope", scope="notes:read notes:write", resource_metadata="https://notes.example.com/.well-known/oauth-protected-resource/mcp", error_description="this operation needs the scope notes:write"`
	if resp.StatusCode != 403 || resp.Header.Get("WWW-Authenticate") != want || !strings.Contains(body, "INSUFFICIENT_SCOPE") || !strings.Contains(body, `"id":7`) {
		t.Fatalf("write with notes:read: %d %q %s", resp.StatusCode, resp.Header.Get("WWW-Authenticate"), body)
	}
	// The sessionless 2026-07-28 path is refused the same way.
	modern := `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"write_thing","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`
	if resp, body := post(t, h.srv.URL+Path, modern, map[string]string{"Authorization": "Bearer ro-token", "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "write_thing"}); resp.StatusCode != 403 {
		t.Fatalf("2026-07-28 write with notes:read: %d %s", resp.StatusCode, body)
	}
	if n := writes.Load(); n != 0 {
		t.Fatalf("the write handler ran %d times for a read-only token", n)
	}

	// A token with notes:write, and the static bearer (full access), write.
	rw := openSession(t, h.srv.URL, "Bearer rw-token")
	if resp, body := post(t, h.srv.URL+Path, callWrite, rw); resp.StatusCode != 200 || strings.Contains(body, "isError") {
		t.Fatalf("write with notes:write: %d %s", resp.StatusCode, body)
	}
	static := openSession(t, h.srv.URL, "Bearer "+testToken)
	if resp, body := post(t, h.srv.URL+Path, callWrite, static); resp.StatusCode != 200 || strings.Contains(body, "isError") {
		t.Fatalf("write with the static token: %d %s", resp.StatusCode, body)
	}
	if n := writes.Load(); n != 2 {
		t.Fatalf("%d writes, want 2", n)
	}
}

// TestOAuthSessionBelongsToTheGrant: a session opened with one access token
// of a grant stays usable with the grant's next (refreshed) token, and is
// not usable with another grant's token.
// TestOAuthResourcesNeedNotesRead: a token without notes:read gets 403 and
// the scope challenge for the note resources; one with it lists them.
func TestOAuthResourcesNeedNotesRead(t *testing.T) {
	var writes atomic.Int32
	h := oauthHTTP(t, &writes, tokenTable{"okf-token": grantPrincipal("g-okf", scope.OKFRead), "ro-token": grantPrincipal("g-ro", scope.NotesRead)})
	list := `{"jsonrpc":"2.0","id":3,"method":"resources/list","params":{}}`
	read := `{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"joplin://note/0123456789abcdef0123456789abcdef"}}`
	okf := openSession(t, h.srv.URL, "Bearer okf-token")
	for _, msg := range []string{list, read} {
		resp, body := post(t, h.srv.URL+Path, msg, okf)
		if ch := resp.Header.Get("WWW-Authenticate"); resp.StatusCode != 403 || !strings.Contains(ch, `error="insufficient_scope"`) ||
			!strings.Contains(ch, "needs the scope notes:read") || !strings.Contains(body, "INSUFFICIENT_SCOPE") {
			t.Errorf("%s: %d %q %s", msg, resp.StatusCode, ch, body)
		}
	}
	if resp, body := post(t, h.srv.URL+Path, list, openSession(t, h.srv.URL, "Bearer ro-token")); resp.StatusCode != 200 || strings.Contains(body, "INSUFFICIENT_SCOPE") {
		t.Fatalf("notes:read: %d %s", resp.StatusCode, body)
	}
}

func TestOAuthSessionBelongsToTheGrant(t *testing.T) {
	var writes atomic.Int32
	h := oauthHTTP(t, &writes, tokenTable{
		"first":  grantPrincipal("grant-a", scope.NotesRead),
		"second": grantPrincipal("grant-a", scope.NotesRead),
		"other":  grantPrincipal("grant-b", scope.NotesRead),
	})
	s := openSession(t, h.srv.URL, "Bearer first")
	list := `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`
	s["Authorization"] = "Bearer second"
	if resp, body := post(t, h.srv.URL+Path, list, s); resp.StatusCode != 200 || !strings.Contains(body, "read_thing") {
		t.Fatalf("refreshed token of the same grant: %d %s", resp.StatusCode, body)
	}
	s["Authorization"] = "Bearer other"
	if resp, _ := post(t, h.srv.URL+Path, list, s); resp.StatusCode != 404 {
		t.Fatalf("another grant's token used the session: %d", resp.StatusCode)
	}
}
