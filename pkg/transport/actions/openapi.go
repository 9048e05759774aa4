package actions

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strings"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/core/registry"
)

// MaxOperations is the most operations a GPT accepts in one schema.
const MaxOperations = 30

// CheckOrigin accepts exactly one strict production origin: https, a DNS
// host name (no IP literal, no localhost), port 443 or none, and no path,
// query, fragment or user info.
func CheckOrigin(origin string) (string, error) {
	u, err := url.Parse(origin)
	switch {
	case err != nil:
		return "", errors.New("origin is not a URL")
	case u.Scheme != "https":
		return "", errors.New("origin must use https")
	case u.User != nil:
		return "", errors.New("origin must not carry user info")
	case u.Path != "" || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" || strings.HasSuffix(origin, "?") || strings.HasSuffix(origin, "#"):
		return "", errors.New("origin must have no path, query or fragment")
	case u.Port() != "" && u.Port() != "443":
		return "", errors.New("origin must use port 443")
	}
	host := strings.ToLower(u.Hostname())
	switch {
	case net.ParseIP(host) != nil:
		return "", errors.New("origin must be a host name, not an IP address")
	case host == "localhost" || strings.HasSuffix(host, ".localhost"):
		return "", errors.New("origin must not be localhost")
	case !hostPattern.MatchString(host):
		return "", errors.New("origin must be a fully qualified DNS name")
	}
	return "https://" + host, nil
}

// OriginFromDomain returns the Actions origin, https://<domain>, for the
// public host name the service is reached at (NOTEBRIDGE_DOMAIN). GPT
// Actions are called from OpenAI's servers, so an unset domain, a local one
// (localhost, *.localhost, a loopback address) or one that gives no valid
// origin is a PUBLIC_DOMAIN_REQUIRED error.
func OriginFromDomain(domain string) (string, *domainerr.Error) {
	d := strings.TrimSuffix(strings.ToLower(strings.TrimSpace(domain)), ".")
	if d == "" {
		return "", domainerr.New(domainerr.PublicDomainRequired,
			"GPT Actions need a public domain; set NOTEBRIDGE_DOMAIN to the public DNS name of this service")
	}
	if isLocalHost(d) {
		return "", domainerr.New(domainerr.PublicDomainRequired,
			"GPT Actions need a public domain, and NOTEBRIDGE_DOMAIN is the local name %.100q; set it to a public DNS name that points at this host", d)
	}
	origin, err := CheckOrigin("https://" + d)
	if err != nil {
		return "", domainerr.New(domainerr.PublicDomainRequired,
			"GPT Actions need a public domain, and NOTEBRIDGE_DOMAIN %.100q gives no valid origin (%v); set it to a public DNS name", d, err)
	}
	return origin, nil
}

// isLocalHost reports whether host (optionally with a port) names this
// machine: localhost, a *.localhost name, or a loopback or unspecified IP.
func isLocalHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && (ip.IsLoopback() || ip.IsUnspecified())
}

var hostPattern = regexp.MustCompile(`^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]([a-z0-9-]{0,61}[a-z0-9])?$`)

// Document builds the OpenAPI 3.1 document for the operations of reg
// exposed to Actions. The output is deterministic: the same registry,
// origin and version give the same bytes.
func Document(reg *registry.Registry, origin, version string) ([]byte, error) {
	origin, err := CheckOrigin(origin)
	if err != nil {
		return nil, err
	}
	ops := reg.Exposed(registry.Actions)
	if len(ops) > MaxOperations {
		return nil, fmt.Errorf("%d operations are exposed to Actions; GPT Actions accept at most %d", len(ops), MaxOperations)
	}
	schemas := map[string]any{"Error": errorSchema(), "Omitted": omittedSchema()}
	paths := map[string]any{}
	for _, op := range ops {
		in, err := componentize(op.InputSchema, op.Name+"_in_", schemas)
		if err != nil {
			return nil, fmt.Errorf("operation %s: %w", op.Name, err)
		}
		out, err := componentize(op.OutputSchema, op.Name+"_out_", schemas)
		if err != nil {
			return nil, fmt.Errorf("operation %s: %w", op.Name, err)
		}
		if op.Effect != registry.EffectRead {
			out = map[string]any{"oneOf": []any{out, ref("Omitted")}}
		}
		paths[RoutePrefix+op.Name] = map[string]any{"post": map[string]any{
			"operationId":              op.Name,
			"summary":                  op.Title,
			"description":              op.Description,
			"x-openai-isConsequential": op.Effect != registry.EffectRead,
			"requestBody": map[string]any{
				"required": true,
				"content":  map[string]any{"application/json": map[string]any{"schema": in}},
			},
			"responses": map[string]any{
				"200": map[string]any{
					"description": "The result.",
					"content":     map[string]any{"application/json": map[string]any{"schema": out}},
				},
				"4XX": errorResponse("A structured error the caller can act on (see the code)."),
				"5XX": errorResponse("A structured error; retry when retryable is true."),
			},
		}}
	}
	doc := map[string]any{
		"openapi": "3.1.0",
		"info": map[string]any{
			"title":       "notebridge",
			"version":     version,
			"description": "Safe access to the user's Joplin notes: notes, notebooks, tags, resources, search and trash. Creates never duplicate; deletes of notes and notebooks go to the trash.",
		},
		"servers":  []any{map[string]any{"url": origin}},
		"security": []any{map[string]any{"bearerAuth": []any{}}},
		"paths":    paths,
		"components": map[string]any{
			"securitySchemes": map[string]any{"bearerAuth": map[string]any{"type": "http", "scheme": "bearer"}},
			"schemas":         schemas,
		},
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

func errorResponse(desc string) map[string]any {
	return map[string]any{
		"description": desc,
		"content":     map[string]any{"application/json": map[string]any{"schema": ref("Error")}},
	}
}

func ref(name string) map[string]any { return map[string]any{"$ref": "#/components/schemas/" + name} }

// componentize moves a schema's $defs into components under prefix and
// rewrites its local references, since "#/$defs/…" would otherwise resolve
// against the document root.
func componentize(raw json.RawMessage, prefix string, schemas map[string]any) (any, error) {
	var s map[string]any
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, err
	}
	if defs, ok := s["$defs"].(map[string]any); ok {
		delete(s, "$defs")
		for name, d := range defs {
			schemas[prefix+name] = rewriteRefs(d, prefix)
		}
	}
	return rewriteRefs(s, prefix), nil
}

func rewriteRefs(v any, prefix string) any {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			if s, ok := x.(string); k == "$ref" && ok && strings.HasPrefix(s, "#/$defs/") {
				t[k] = "#/components/schemas/" + prefix + strings.TrimPrefix(s, "#/$defs/")
				continue
			}
			t[k] = rewriteRefs(x, prefix)
		}
	case []any:
		for i := range t {
			t[i] = rewriteRefs(t[i], prefix)
		}
	}
	return v
}

func errorSchema() map[string]any {
	return map[string]any{
		"type": "object", "additionalProperties": false, "required": []any{"error"},
		"properties": map[string]any{"error": map[string]any{
			"type": "object", "additionalProperties": false, "required": []any{"code", "message", "retryable"},
			"properties": map[string]any{
				"code":      map[string]any{"type": "string", "maxLength": 64, "description": "Stable error code."},
				"message":   map[string]any{"type": "string", "maxLength": 2000},
				"retryable": map[string]any{"type": "boolean", "description": "Whether the same call may succeed later."},
				"details":   map[string]any{"type": "object", "description": "Code-specific details, e.g. matches and update_tool for *_ALREADY_EXISTS."},
			},
		}},
	}
}

func omittedSchema() map[string]any {
	return map[string]any{
		"type": "object", "additionalProperties": false, "required": []any{"omitted", "reason"},
		"description": "The write succeeded, but its result was too large to return.",
		"properties": map[string]any{
			"omitted": map[string]any{"type": "boolean", "const": true},
			"reason":  map[string]any{"type": "string", "maxLength": 300},
			"id":      map[string]any{"type": "string", "maxLength": 32},
		},
	}
}
