package consent

import (
	"strings"
	"testing"
)

func TestDescribeRedirect(t *testing.T) {
	cases := []struct{ uri, site, host string }{
		{"https://chatgpt.com/connector_platform_oauth_redirect", "chatgpt.com", "chatgpt.com"},
		{"https://claude.ai/api/mcp/auth_callback", "claude.ai", "claude.ai"},
		{"https://connector.chatgpt.com/cb", "chatgpt.com", "connector.chatgpt.com"},
		{"https://chatgpt.com.evil.co.uk/cb", "evil.co.uk", "chatgpt.com.evil.co.uk"},
		{"https://login.CLAUDE.AI:8443/cb", "claude.ai", "login.claude.ai:8443"},
		{"https://someone.github.io/cb", "someone.github.io", "someone.github.io"}, // a private suffix
		{"https://co.uk/cb", "co.uk", "co.uk"},                                     // itself a public suffix
		{"http://127.0.0.1:33418/cb", "127.0.0.1", "127.0.0.1:33418"},
		{"http://[::1]:8080/cb", "::1", "[::1]:8080"},
		{"http://localhost:6274/oauth/callback", "localhost", "localhost:6274"},
		{"https://xn--bcher-kva.example/cb", "xn--bcher-kva.example", "xn--bcher-kva.example"},
		{"::not a url", "an unknown address", "an unknown address"},
	}
	for _, c := range cases {
		if site, host := describeRedirect(c.uri); site != c.site || host != c.host {
			t.Errorf("%s: site %q host %q, want %q %q", c.uri, site, host, c.site, c.host)
		}
	}
}

// TestLegacyLookalikesAreShownEscaped: a client stored before the
// registration rules (a Cyrillic host, a mixed-script name) is shown in
// punycode or escaped, never as the Latin name it imitates.
func TestLegacyLookalikesAreShownEscaped(t *testing.T) {
	site, host := describeRedirect("https://ch\u0430tgpt.com/connector_platform_oauth_redirect")
	if !strings.HasPrefix(site, "xn--") || site != host || strings.Contains(site, "chatgpt") {
		t.Errorf("Cyrillic host shown as site %q host %q", site, host)
	}
	if _, host := describeRedirect("https://a\u200b.example/cb"); strings.ContainsRune(host, '\u200b') {
		t.Errorf("invisible character in the host: %q", host)
	}
	for name, want := range map[string]string{
		"ChatGPT":            "ChatGPT",
		"Ch\u0430tGPT":       `"Ch\u0430tGPT"`,
		"Chat\u200bGPT":      `"Chat\u200bGPT"`,
		"\u202eTPGtahC":      `"\u202eTPGtahC"`,
		"日本語のアプリ":            "日本語のアプリ",
		"<b>Client</b> & co": "<b>Client</b> & co", // escaped by the template
	} {
		if got := displayName(name); got != want {
			t.Errorf("displayName(%q) = %q, want %q", name, got, want)
		}
	}
}
