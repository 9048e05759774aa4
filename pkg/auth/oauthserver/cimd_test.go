package oauthserver

import (
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// docServer serves a client metadata document at /client.json over TLS;
// doc receives the document's own URL. hits counts requests.
func docServer(t *testing.T, doc func(self string) (int, string)) (*httptest.Server, string, *atomic.Int32) {
	t.Helper()
	var hits atomic.Int32
	var self string
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		status, body := doc(self)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	self = srv.URL + "/client.json"
	return srv, self, &hits
}

func pool(srv *httptest.Server) *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(srv.Certificate())
	return p
}

func newCIMDTest(t *testing.T, testing CIMDTesting) *asTest {
	t.Helper()
	return newASTestWith(t, "", Config{RegisterRate: "1000-M", TokenRate: "1000-M", AuthorizeRate: "1000-M", CIMDTesting: testing})
}

func goodDoc(self string) (int, string) {
	return 200, `{"client_id":"` + self + `","client_name":"Doc client","redirect_uris":["` + testRedirect + `"],"token_endpoint_auth_method":"none"}`
}

// TestCIMDHappyPath: a client_id that is a document URL registers by its
// document and completes the flow.
func TestCIMDHappyPath(t *testing.T) {
	srv, self, hits := docServer(t, goodDoc)
	a := newCIMDTest(t, CIMDTesting{AllowLoopback: true, RootCAs: pool(srv)})
	v, c := pkce()
	code := a.code(self, c)
	if a.consent.asked[0].ClientName != "Doc client" || a.consent.asked[0].ClientID != self {
		t.Fatalf("consent asked %+v", a.consent.asked)
	}
	if st, out := a.token(exchange(self, code, v)); st != 200 {
		t.Fatalf("token: %d %v", st, out)
	}
	a.code(self, c)
	if n := hits.Load(); n != 1 {
		t.Fatalf("the document was fetched %d times, want once (cached)", n)
	}
}

// TestCIMDRefusals: documents at non-public addresses are never fetched;
// bad, oversized, slow, redirecting or self-contradicting documents are
// refused; nothing is registered and nothing redirects.
func TestCIMDRefusals(t *testing.T) {
	good, goodURL, goodHits := docServer(t, goodDoc)
	strict := newCIMDTest(t, CIMDTesting{RootCAs: pool(good)})
	check := func(a *asTest, name, clientID string) {
		t.Helper()
		_, c := pkce()
		q := authParams(clientID, c)
		req, _ := http.NewRequest(http.MethodGet, a.srv.URL+AuthorizePath+"?"+q.Encode(), nil)
		resp, body := a.do(req)
		if resp.StatusCode != 400 && resp.StatusCode != 401 || resp.Header.Get("Location") != "" || body["error"] != "invalid_client" {
			t.Errorf("%s: %d %q %v", name, resp.StatusCode, resp.Header.Get("Location"), body)
		}
		if n := a.counts()[0]; n != 0 {
			t.Errorf("%s registered %d clients", name, n)
		}
	}
	check(strict, "loopback without the test setting", goodURL)
	check(strict, "localhost name", strings.Replace(goodURL, "127.0.0.1", "localhost", 1))
	check(strict, "private address", "https://10.1.2.3/client.json")
	check(strict, "link-local metadata service", "https://169.254.169.254/latest/meta-data")
	check(strict, "IPv6 loopback", "https://[::1]/client.json")
	check(strict, "IPv4-mapped loopback", "https://[::ffff:127.0.0.1]/client.json")
	check(strict, "NAT64 metadata service", "https://[64:ff9b::a9fe:a9fe]/client.json")
	check(strict, "local-use NAT64 loopback", "https://[64:ff9b:1::7f00:1]/client.json")
	check(strict, "6to4 loopback", "https://[2002:7f00:1::]/client.json")
	check(strict, "IPv4-compatible loopback", "https://[::127.0.0.1]/client.json")
	check(strict, "site-local", "https://[fec0::1]/client.json")
	check(strict, "benchmarking", "https://198.18.0.1/client.json")
	check(strict, "no path", "https://client.example")
	check(strict, "dot segments", "https://client.example/a/../client.json")
	check(strict, "query", "https://client.example/client.json?x=1")
	if n := goodHits.Load(); n != 0 {
		t.Fatalf("a non-public address was fetched %d times", n)
	}

	block := make(chan struct{})
	docs := map[string]func(string) (int, string){
		"client_id mismatch": func(string) (int, string) {
			return 200, `{"client_id":"https://other.example/c.json","redirect_uris":["` + testRedirect + `"],"token_endpoint_auth_method":"none"}`
		},
		"client secret": func(self string) (int, string) {
			return 200, `{"client_id":"` + self + `","redirect_uris":["` + testRedirect + `"],"token_endpoint_auth_method":"client_secret_post"}`
		},
		"oversized": func(self string) (int, string) {
			return 200, `{"client_id":"` + self + `","redirect_uris":["` + testRedirect + `"],"client_name":"` + strings.Repeat("a", MaxRegistrationBytes) + `"}`
		},
		"malformed": func(string) (int, string) { return 200, `{"client_id":` },
		"http redirect": func(self string) (int, string) {
			return 200, `{"client_id":"` + self + `","redirect_uris":["http://client.example/cb"]}`
		},
		"not found":    func(string) (int, string) { return 404, `{}` },
		"server error": func(string) (int, string) { return 500, `{}` },
	}
	for name, doc := range docs {
		srv, self, _ := docServer(t, doc)
		check(newCIMDTest(t, CIMDTesting{AllowLoopback: true, RootCAs: pool(srv)}), name, self)
	}
	redirecting := httptest.NewTLSServer(http.RedirectHandler("https://10.0.0.1/client.json", http.StatusFound))
	t.Cleanup(redirecting.Close)
	check(newCIMDTest(t, CIMDTesting{AllowLoopback: true, RootCAs: pool(redirecting)}), "redirect", redirecting.URL+"/client.json")
	slow := httptest.NewTLSServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-block }))
	t.Cleanup(slow.Close)
	t.Cleanup(func() { close(block) }) // runs first: the handler returns before Close waits for it
	check(newCIMDTest(t, CIMDTesting{AllowLoopback: true, RootCAs: pool(slow), Timeout: 200 * time.Millisecond}), "slow", slow.URL+"/client.json")
	_, untrustedURL, _ := docServer(t, goodDoc)
	check(newCIMDTest(t, CIMDTesting{AllowLoopback: true}), "untrusted certificate", untrustedURL)
}

func TestPublicAddr(t *testing.T) {
	for addr, want := range map[string]bool{
		"8.8.8.8": true, "2606:4700::1111": true,
		"127.0.0.1": false, "::1": false, "10.0.0.1": false, "172.16.5.4": false, "192.168.1.1": false,
		"169.254.169.254": false, "fe80::1": false, "fc00::1": false, "100.64.0.1": false, "0.0.0.0": false,
		"0.1.2.3": false, "224.0.0.1": false, "::": false, "::ffff:127.0.0.1": false, "::ffff:10.0.0.1": false,
	} {
		if got := publicAddr(netip.MustParseAddr(addr), false); got != want {
			t.Errorf("%s: %v, want %v", addr, got, want)
		}
	}
	if !publicAddr(netip.MustParseAddr("127.0.0.1"), true) || publicAddr(netip.MustParseAddr("10.0.0.1"), true) {
		t.Fatal("the test setting allows loopback only")
	}
}
