package oauthserver

import (
	"net/http"
	"strings"
	"testing"
)

// TestLookalikeRedirectHostIsRefused is the request of issue 21, defect 1:
// a redirect host with a Cyrillic "а" (U+0430) imitating chatgpt.com.
// Before the fix it answered 201.
func TestLookalikeRedirectHostIsRefused(t *testing.T) {
	a := newASTest(t, "")
	status, out := a.register(`{"redirect_uris":["https://ch\u0430tgpt.com/connector_platform_oauth_redirect"],"client_name":"ChatGPT","token_endpoint_auth_method":"none"}`)
	if status != http.StatusBadRequest || out["error"] != "invalid_redirect_uri" || out["client_id"] != nil {
		t.Fatalf("lookalike redirect host: %d %v", status, out)
	}
	if desc, _ := out["error_description"].(string); !strings.Contains(desc, "redirect_uris[0]") || !strings.Contains(desc, "punycode") {
		t.Fatalf("the error does not name the URI and the remedy: %q", desc)
	}
	if n := a.counts()[0]; n != 0 {
		t.Fatalf("%d clients registered", n)
	}
}

// TestLookalikeRegistrationMatrix: redirect hosts that are not ASCII DNS
// names or IP addresses, and client names that mix scripts or hide
// characters, are refused with 400 and register nothing; the error names
// the offending redirect URI by index and never echoes the document.
func TestLookalikeRegistrationMatrix(t *testing.T) {
	a := newASTest(t, "")
	doc := func(redirects, name string) string {
		return `{"redirect_uris":[` + redirects + `],"client_name":"` + name + `","token_endpoint_auth_method":"none"}`
	}
	good := `"https://chatgpt.com/connector_platform_oauth_redirect"`
	cases := []struct {
		name, doc, err, index string
	}{
		{"Greek omicron in the host", doc(`"https://claude.ai/api/mcp/auth_callback","https://cl\u03bfude.ai/cb"`, "Claude"), "invalid_redirect_uri", "redirect_uris[1]"},
		{"percent-encoded Cyrillic host", doc(`"https://ch%D0%B0tgpt.com/cb"`, "ChatGPT"), "invalid_redirect_uri", "redirect_uris[0]"},
		{"fullwidth host", doc(`"https://\uff43hatgpt.com/cb"`, "ChatGPT"), "invalid_redirect_uri", "redirect_uris[0]"},
		{"IDN in Unicode form", doc(`"https://b\u00fccher.example/cb"`, "Books"), "invalid_redirect_uri", "redirect_uris[0]"},
		{"loopback http with a lookalike name", doc(`"http://l\u043ecalhost:8080/cb"`, "CLI"), "invalid_redirect_uri", "redirect_uris[0]"},
		{"trailing dot", doc(`"https://chatgpt.com./cb"`, "ChatGPT"), "invalid_redirect_uri", "redirect_uris[0]"},
		{"underscore in the host", doc(`"https://chat_gpt.com/cb"`, "ChatGPT"), "invalid_redirect_uri", "redirect_uris[0]"},
		{"IPv6 zone", doc(`"http://[::1%25eth0]:8080/cb"`, "CLI"), "invalid_redirect_uri", "redirect_uris[0]"},
		{"Cyrillic letter in a Latin name", doc(good, "Ch\u0430tGPT"), "invalid_client_metadata", ""},
		{"Greek letter in a Latin name", doc(good, "Cl\u03b1ude"), "invalid_client_metadata", ""},
		{"zero-width space", doc(good, "Chat\u200bGPT"), "invalid_client_metadata", ""},
		{"right-to-left override", doc(good, "\u202eTPGtahC"), "invalid_client_metadata", ""},
		{"bidi isolate", doc(good, "ChatGPT \u2066x\u2069"), "invalid_client_metadata", ""},
		{"Hangul filler", doc(good, "ChatGPT\u3164"), "invalid_client_metadata", ""},
		{"variation selector", doc(good, "ChatGPT\ufe0f"), "invalid_client_metadata", ""},
		{"no-break space", doc(good, "Chat\u00a0GPT"), "invalid_client_metadata", ""},
		{"Cyrillic combining mark on Latin", doc(good, "Claude\u0483"), "invalid_client_metadata", ""},
	}
	for _, c := range cases {
		status, out := a.register(c.doc)
		desc, _ := out["error_description"].(string)
		if status != http.StatusBadRequest || out["error"] != c.err || out["client_id"] != nil {
			t.Errorf("%s: %d %v", c.name, status, out)
		}
		if !strings.Contains(desc, c.index) || strings.Contains(desc, "gpt") || strings.Contains(desc, "GPT") {
			t.Errorf("%s: error description %q", c.name, desc)
		}
	}
	if n := a.counts()[0]; n != 0 {
		t.Fatalf("refused registrations added %d clients", n)
	}
}

// TestConnectorRedirectsAreAccepted: the callback URLs the connectors
// document register as they are.
func TestConnectorRedirectsAreAccepted(t *testing.T) {
	for _, u := range []string{
		"https://claude.ai/api/mcp/auth_callback",
		"https://claude.com/api/mcp/auth_callback",
		"https://chatgpt.com/connector_platform_oauth_redirect",
		"https://chatgpt.com/connector/oauth/Zm9vYmFy-123_x",
		"https://xn--bcher-kva.example/cb",
		"http://127.0.0.1:33418/cb",
		"http://[::1]:33418/cb",
		"http://localhost:6274/oauth/callback",
	} {
		if err := checkRedirectURI(u); err != nil {
			t.Errorf("%s: %v", u, err)
		}
	}
}

func TestCheckClientName(t *testing.T) {
	for _, ok := range []string{"", "ChatGPT", "Claude", "Chromium CI <client> & co", "MCP Inspector (v1.2)", "Café crème",
		"Notes 📝", "Ελληνικά", "Приложение", "日本語のアプリ", "Claude 日本語", "한국어 앱 Korean", "注音 ㄅㄆ", "\u00e9t\u00e9",
		"Ꮳ ᏣᎳᎩ", "Орех и мёд", "Ωμέγα"} {
		if err := CheckClientName(ok); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
	for _, bad := range []string{"Ch\u0430tGPT", "Cl\u03b1ude", "\u0421laude", "Привет world", "Ελλάς Greece", "日本 Привет",
		"a\u200db", "a\u034fb", "\u115fChatGPT", "x\x00", "x\u2028y", "x\ue000", "x\u3000y", strings.Repeat("n", maxClientNameLen+1), "\xff",
		"ＣｈａｔＧＰＴ", "𝖢𝗁𝖺𝗍𝖦𝖯𝖳", "𝐂𝐥𝐚𝐮𝐝𝐞", "Notes™", "e\u0301t\u00e9", // not NFKC
		"ᏟᎻᎪᎢᏀᏢᎢ", "ᏟᎻᎪᎢᏀᏢᎢ 2", "ОрепАІ", "Сһаԁ", "ВОТ", "ΑΡΙ"} { // whole-script lookalikes
		if err := CheckClientName(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestCIMDLookalikes: a client metadata document whose redirect host or
// name is a lookalike, or whose own URL host is not ASCII, registers
// nothing and never redirects.
func TestCIMDLookalikes(t *testing.T) {
	badRedirect, badRedirectURL, _ := docServer(t, func(self string) (int, string) {
		return 200, `{"client_id":"` + self + `","client_name":"Claude","redirect_uris":["https://cl\u0430ude.ai/api/mcp/auth_callback"],"token_endpoint_auth_method":"none"}`
	})
	badName, badNameURL, _ := docServer(t, func(self string) (int, string) {
		return 200, `{"client_id":"` + self + `","client_name":"Cl\u0430ude","redirect_uris":["` + testRedirect + `"],"token_endpoint_auth_method":"none"}`
	})
	for _, c := range []struct {
		name, id string
		a        *asTest
	}{
		{"lookalike redirect in the document", badRedirectURL, newCIMDTest(t, CIMDTesting{AllowLoopback: true, RootCAs: pool(badRedirect)})},
		{"lookalike name in the document", badNameURL, newCIMDTest(t, CIMDTesting{AllowLoopback: true, RootCAs: pool(badName)})},
		{"non-ASCII client_id host", "https://cl\u0430ude.ai/oauth/client.json", newCIMDTest(t, CIMDTesting{AllowLoopback: true})},
	} {
		_, ch := pkce()
		req, _ := http.NewRequest(http.MethodGet, c.a.srv.URL+AuthorizePath+"?"+authParams(c.id, ch).Encode(), nil)
		resp, body := c.a.do(req)
		loc := resp.Header.Get("Location")
		if resp.StatusCode != http.StatusBadRequest || body["error"] != "invalid_client" || loc != "" ||
			len(c.a.consent.asked) != 0 || c.a.counts()[0] != 0 {
			t.Errorf("%s: %d %v %q asked %d clients %d", c.name, resp.StatusCode, body, loc, len(c.a.consent.asked), c.a.counts()[0])
		}
	}
}
