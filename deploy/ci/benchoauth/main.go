// Command benchoauth loads the built-in OAuth authorization server of a
// real `notebridge mcp serve --oauth` process (issue 21) and prints what
// it cost:
//
//   - consent: ADDRS client addresses each load the consent page and then
//     post a wrong owner passphrase, all at once; the server's peak RSS
//     (VmHWM) above its idle RSS, and the answers. Then one address loads
//     FORMS forms and posts each of them twice, all at once (30 posts:
//     the per-address page rate admits half), and the number of
//     passphrase checks that ran (each answered 401 "Wrong passphrase").
//   - secrets: SECRETS wrong client secrets from as many addresses at
//     /oauth/token against a confidential client, at once (repeated with
//     new addresses for -duration), while list_notes is timed over MCP
//     (static bearer, fake Joplin); its latency against idle, and the
//     server's CPU during the bursts.
//     -legacy seeds the client with a bcrypt hash (cost 12) in the state
//     file, as notebridge stored secrets before SHA-256 digests.
//
// Client addresses are X-Forwarded-For entries sent from the loopback
// peer, which the server trusts as its proxy. deploy/ci/bench-oauth.sh
// builds the binaries and runs both scenarios.
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

func main() {
	bin := flag.String("bin", "notebridge", "notebridge binary")
	fake := flag.String("joplinfake", "", "joplinfake binary (secrets scenario)")
	scenario := flag.String("scenario", "consent", "consent or secrets")
	addrs := flag.Int("addrs", 200, "consent: client addresses posting at once")
	forms := flag.Int("forms", 15, "consent: forms one address loads before its 30 posts")
	secrets := flag.Int("secrets", 40, "secrets: wrong client secrets sent at once")
	legacy := flag.Bool("legacy", false, "secrets: a client whose secret is stored as bcrypt (cost 12)")
	duration := flag.Duration("duration", 0, "secrets: repeat the burst (new addresses each round) for this long; 0: once")
	flag.Parse()
	dir, err := os.MkdirTemp("", "benchoauth-")
	if err != nil {
		log.Fatal(err)
	}
	err = writeToken(dir)
	if err == nil {
		switch *scenario {
		case "consent":
			err = runConsent(dir, *bin, *addrs, *forms)
		case "secrets":
			err = runSecrets(dir, *bin, *fake, *secrets, *legacy, *duration)
		default:
			err = fmt.Errorf("unknown scenario %q", *scenario)
		}
	}
	os.RemoveAll(dir)
	if err != nil {
		log.Fatal(err)
	}
}

// server is one `notebridge mcp serve --oauth` process.
type server struct {
	cmd   *exec.Cmd
	base  string
	state string
	http  *http.Client
}

const origin = "https://notes.example.com"

// startServer runs the binary on a loopback port with its state in dir,
// Joplin at joplinURL (its token in dir/joplin-token).
func startServer(bin, dir, joplinURL string) (*server, error) {
	state := filepath.Join(dir, "state")
	cmd := exec.Command(bin, "mcp", "serve", "--listen", "127.0.0.1:0", "--state-dir", state, "--oauth",
		"--joplin-url", joplinURL, "--joplin-wait", "0s", "--joplin-token-file", filepath.Join(dir, "joplin-token"))
	cmd.Env = []string{"HOME=" + dir, "PATH=" + os.Getenv("PATH"), "NOTEBRIDGE_DOMAIN=notes.example.com"}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	addr, err := firstMatch(stderr, regexp.MustCompile(`addr=(127\.0\.0\.1:\d+)`))
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		return nil, fmt.Errorf("mcp serve: %w", err)
	}
	return &server{cmd: cmd, base: "http://" + addr, state: state, http: &http.Client{
		Transport:     &http.Transport{MaxIdleConnsPerHost: 512},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Timeout:       time.Minute,
	}}, nil
}

// firstMatch returns the first submatch of re in r's lines and drains the
// rest in the background.
func firstMatch(r io.Reader, re *regexp.Regexp) (string, error) {
	sc := bufio.NewScanner(r)
	var seen []string
	for sc.Scan() {
		if m := re.FindStringSubmatch(sc.Text()); m != nil {
			go io.Copy(io.Discard, r)
			return m[1], nil
		}
		seen = append(seen, sc.Text())
	}
	return "", fmt.Errorf("exited before printing its address: %s", strings.Join(seen, "\n"))
}

func (s *server) stop() {
	s.cmd.Process.Kill()
	s.cmd.Wait()
}

// answer is one HTTP exchange.
type answer struct {
	status int
	header http.Header
	body   string
	err    error
}

// send does one request from client address addr ("": the peer itself).
func (s *server) send(method, path, addr, body string, h map[string]string) answer {
	req, err := http.NewRequest(method, s.base+path, strings.NewReader(body))
	if err != nil {
		return answer{err: err}
	}
	for k, v := range h {
		req.Header.Set(k, v)
	}
	if addr != "" {
		req.Header.Set("X-Forwarded-For", addr)
	}
	resp, err := s.http.Do(req)
	if err != nil {
		return answer{err: err}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	return answer{status: resp.StatusCode, header: resp.Header, body: string(raw), err: err}
}

var clientIDRe = regexp.MustCompile(`"client_id":"([^"]+)"`)
var secretRe = regexp.MustCompile(`"client_secret":"([^"]+)"`)

// register registers a client from addr and returns its ID and secret.
func (s *server) register(addr, authMethod string) (id, secret string, err error) {
	a := s.send(http.MethodPost, "/oauth/register", addr, `{"redirect_uris":["https://client.example/cb"],"client_name":"bench",`+
		`"token_endpoint_auth_method":"`+authMethod+`"}`, map[string]string{"Content-Type": "application/json"})
	m := clientIDRe.FindStringSubmatch(a.body)
	if a.err != nil || a.status != http.StatusCreated || m == nil {
		return "", "", fmt.Errorf("register: %d %v", a.status, a.err)
	}
	if sm := secretRe.FindStringSubmatch(a.body); sm != nil {
		secret = sm[1]
	}
	return m[1], secret, nil
}

// mem reads a process's VmRSS and VmHWM (peak RSS) in KiB.
func mem(pid int) (rss, hwm int64, err error) {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, 0, err
	}
	for _, line := range strings.Split(string(raw), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		n, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "VmRSS:":
			rss = n
		case "VmHWM:":
			hwm = n
		}
	}
	return rss, hwm, nil
}

// cpu reads a process's user plus system time.
func cpu(pid int) (time.Duration, error) {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(raw[bytes.LastIndexByte(raw, ')')+2:]))
	utime, _ := strconv.ParseInt(f[11], 10, 64) // fields 14 and 15 of stat(5)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * time.Second / 100, nil // USER_HZ is 100 on Linux
}

// writeToken writes a 0600 token file in dir.
func writeToken(dir string) error {
	return os.WriteFile(filepath.Join(dir, "joplin-token"), []byte("joplin-token-bench-0123456789abcdef\n"), 0o600)
}

// authorizeQuery is a valid authorization request for client.
func authorizeQuery(client string) string {
	return url.Values{"response_type": {"code"}, "client_id": {client}, "redirect_uri": {"https://client.example/cb"},
		"code_challenge": {"E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"}, "code_challenge_method": {"S256"},
		"state": {"bench-state-0123456789"}, "scope": {"notes:read"}, "resource": {origin + "/mcp"}}.Encode()
}
