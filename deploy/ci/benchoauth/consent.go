package main

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"
)

// form is a loaded consent form: its cookie and CSRF token.
type form struct{ cookie, csrf string }

var csrfRe = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// loadForm GETs the consent page from addr.
func (s *server) loadForm(addr, q string) (form, error) {
	a := s.send(http.MethodGet, "/oauth/authorize?"+q, addr, "", nil)
	m := csrfRe.FindStringSubmatch(a.body)
	if a.err != nil || a.status != http.StatusOK || m == nil {
		return form{}, fmt.Errorf("consent page from %s: %d %v", addr, a.status, a.err)
	}
	for _, c := range a.header.Values("Set-Cookie") {
		if name, _, ok := strings.Cut(c, ";"); ok && strings.HasPrefix(name, "__Host-") {
			return form{cookie: name, csrf: m[1]}, nil
		}
	}
	return form{}, fmt.Errorf("consent page from %s: no cookie", addr)
}

// postAll posts a wrong passphrase with forms[i] from addrs[i], all at
// once, and tallies the answers: "401 wrong" is a passphrase check that
// ran.
func (s *server) postAll(q string, addrs []string, forms []form) (map[string]int, time.Duration) {
	var mu sync.Mutex
	tally := map[string]int{}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range forms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := url.Values{"csrf": {forms[i].csrf}, "passphrase": {"not-the-passphrase"}, "decision": {"approve"}}.Encode()
			<-start
			a := s.send(http.MethodPost, "/oauth/authorize?"+q, addrs[i], body, map[string]string{
				"Content-Type": "application/x-www-form-urlencoded", "Cookie": forms[i].cookie, "Origin": origin})
			mu.Lock()
			defer mu.Unlock()
			tally[kind(a)]++
		}()
	}
	t0 := time.Now()
	close(start)
	wg.Wait()
	return tally, time.Since(t0)
}

// kind names an answer for the tally.
func kind(a answer) string {
	switch {
	case a.err != nil:
		return "transport error"
	case a.status == http.StatusUnauthorized && strings.Contains(a.body, "Wrong passphrase"):
		return "401 wrong (checked)"
	case a.status == http.StatusTooManyRequests && strings.Contains(a.body, "being checked"):
		return "429 busy"
	case a.status == http.StatusTooManyRequests && strings.Contains(a.body, "wrong passphrases"):
		return "429 locked"
	case a.status == http.StatusTooManyRequests:
		return "429 rate"
	case a.status == http.StatusForbidden:
		return "403 form"
	}
	return fmt.Sprintf("%d other", a.status)
}

func runConsent(dir, bin string, n, formsPerAddr int) error {
	// The first start generates the owner passphrase and hashes it (an
	// argon2id pass the idle figure must not hold): start twice.
	s, err := startServer(bin, dir, "http://127.0.0.1:1")
	if err != nil {
		return err
	}
	s.stop()
	if s, err = startServer(bin, dir, "http://127.0.0.1:1"); err != nil {
		return err
	}
	defer s.stop()
	client, _, err := s.register("", "none")
	if err != nil {
		return err
	}
	q := authorizeQuery(client)
	if _, err := s.loadForm("192.0.2.1", q); err != nil { // warm-up
		return err
	}
	idle, _, err := mem(s.cmd.Process.Pid)
	if err != nil {
		return err
	}

	addrs := make([]string, n)
	forms := make([]form, n)
	for i := range addrs {
		addrs[i] = fmt.Sprintf("100.64.%d.%d", i/200, i%200+1)
		if forms[i], err = s.loadForm(addrs[i], q); err != nil {
			return err
		}
	}
	tally, took := s.postAll(q, addrs, forms)
	_, peak, err := mem(s.cmd.Process.Pid)
	if err != nil {
		return err
	}
	fmt.Printf("consent: %d addresses posting at once: idle %.1f MiB, peak %.1f MiB, peak above idle %.1f MiB, %.2f s; %s\n",
		n, mib(idle), mib(peak), mib(peak-idle), took.Seconds(), tallyString(tally))

	const one = "198.51.100.99"
	var own []form
	for range formsPerAddr {
		f, err := s.loadForm(one, q)
		if err != nil {
			return err
		}
		own = append(own, f)
	}
	var repeated []form
	for i := range 30 {
		repeated = append(repeated, own[i%len(own)])
	}
	tally, took = s.postAll(q, repeatAddr(one, len(repeated)), repeated)
	fmt.Printf("lockout: one address, %d forms, %d posts at once: %d passphrase checks ran, %.2f s; %s\n",
		len(own), len(repeated), tally["401 wrong (checked)"], took.Seconds(), tallyString(tally))
	return nil
}

func repeatAddr(addr string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = addr
	}
	return out
}

func mib(kib int64) float64 { return float64(kib) / 1024 }

func tallyString(t map[string]int) string {
	var parts []string
	for k, v := range t {
		parts = append(parts, fmt.Sprintf("%s: %d", k, v))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}
