package deploy

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestTunnelsDialCaddysTunnelSite: each tunnel (docs/tunnels.md) runs only
// in its own profile, holds the one fixed address Caddy and the bridge
// believe as the tunnel, and dials Caddy's tunnel site, which is never
// published on the host.
func TestTunnelsDialCaddysTunnelSite(t *testing.T) {
	var c struct {
		Services map[string]struct {
			Profiles    []string          `yaml:"profiles"`
			Ports       []string          `yaml:"ports"`
			Networks    any               `yaml:"networks"` // a list, or a map with addresses
			Environment map[string]string `yaml:"environment"`
		} `yaml:"services"`
	}
	if err := yaml.Unmarshal([]byte(read(t, "../compose.yaml")), &c); err != nil {
		t.Fatal(err)
	}
	const addr = "${NOTEBRIDGE_TUNNEL_ADDR:-172.31.253.3}"
	for svc, profile := range map[string]string{"cloudflared": "cloudflare", "tailscale": "tailscale"} {
		s, ok := c.Services[svc]
		if !ok {
			t.Errorf("compose.yaml has no %s service", svc)
			continue
		}
		if got := edgeAddress(s.Networks); !slices.Equal(s.Profiles, []string{profile}) || got != addr || len(s.Ports) != 0 {
			t.Errorf("%s: profiles %q, edge address %q, ports %q; want only %q, %s, none", svc, s.Profiles, got, s.Ports, profile, addr)
		}
	}
	caddy := c.Services["caddy"]
	port := caddy.Environment["NOTEBRIDGE_TUNNEL_PORT"]
	if port == "" || caddy.Environment["NOTEBRIDGE_TUNNEL_ADDR"] != addr {
		t.Errorf("caddy: tunnel port %q, tunnel address %q", port, caddy.Environment["NOTEBRIDGE_TUNNEL_ADDR"])
	}
	for _, p := range caddy.Ports {
		if strings.HasSuffix(p, ":"+port) {
			t.Errorf("caddy publishes its tunnel site: %q", p)
		}
	}
	if tp := c.Services["bridge"].Environment["NOTEBRIDGE_TRUSTED_PROXIES"]; !strings.Contains(tp, addr+"/32") {
		t.Errorf("the bridge does not believe the tunnel's address: %q", tp)
	}
	caddyfile := read(t, "../Caddyfile")
	if !strings.Contains(caddyfile, "http://:{$NOTEBRIDGE_TUNNEL_PORT:"+port+"}") {
		t.Errorf("the Caddyfile has no plain-HTTP tunnel site on port %s", port)
	}
	var serve struct {
		Web map[string]struct {
			Handlers map[string]struct{ Proxy string }
		}
		AllowFunnel map[string]bool
	}
	if err := json.Unmarshal([]byte(read(t, "tunnels/tailscale-serve.json")), &serve); err != nil {
		t.Fatal(err)
	}
	site := "${TS_CERT_DOMAIN}:443"
	if serve.Web[site].Handlers["/"].Proxy != "http://caddy:"+port || !serve.AllowFunnel[site] {
		t.Errorf("tailscale-serve.json: %+v, want Funnel on %s proxying to http://caddy:%s", serve, site, port)
	}
}

// edgeAddress is a service's fixed address on the edge network, if any.
func edgeAddress(networks any) string {
	m, _ := networks.(map[string]any)
	edge, _ := m["edge"].(map[string]any)
	a, _ := edge["ipv4_address"].(string)
	return a
}
