package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strings"

	"github.com/notebridge/notebridge/pkg/auth/bearer"
	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/transport/actions"
	"github.com/notebridge/notebridge/pkg/transport/httpfront"
)

// runServe is the service the container runs: MCP Streamable HTTP with
// health routes, and GPT Actions on a separate port when enabled.
func runServe(ctx context.Context, args []string, stderr io.Writer) error {
	c, a, err := setup("serve", args, stderr, true, func(fs *flag.FlagSet, c *config) {
		bindActionsFlags(fs, c)
		bindOAuthFlags(fs, c)
	})
	if err != nil {
		return err
	}
	defer a.close()
	if c.ActionsEnabled != (c.ActionsTokenFile != "") {
		return errors.New("GPT Actions need both --actions-enabled and --actions-token-file; refusing to start with only one")
	}
	mcpL, err := mcpListener(c, a, stderr)
	if err != nil {
		return err
	}
	ls := []listener{mcpL}
	if c.ActionsEnabled {
		al, err := actionsListener(c, a)
		if err != nil {
			mcpL.ln.Close()
			return err
		}
		ls = append(ls, al)
	} else {
		a.log.Info("GPT Actions are disabled (enable with --actions-enabled and --actions-token-file)")
	}
	if ml, ok, err := metricsListener(c, a); err != nil {
		for _, l := range ls {
			l.ln.Close()
		}
		return fmt.Errorf("listen for metrics: %w", err)
	} else if ok {
		ls = append(ls, ml)
	}
	a.reportJoplin(ctx, c.JoplinTokenFile, true)
	a.followSync(c)
	return serveAll(ctx, ls...)
}

func bindActionsFlags(fs *flag.FlagSet, c *config) {
	fs.BoolVar(&c.ActionsEnabled, "actions-enabled", false, "serve GPT Actions (needs --actions-token-file)")
	fs.StringVar(&c.ActionsTokenFile, "actions-token-file", "", "file holding the Actions bearer token (mode 0600, regular file)")
	fs.StringVar(&c.ActionsListen, "actions-listen", "127.0.0.1:8766", "GPT Actions listen address")
	fs.StringVar(&c.Domain, "domain", "", "public DNS name of the service (NOTEBRIDGE_DOMAIN, the name Caddy serves); the OpenAPI document at "+
		actions.DocumentPath+" is for https://DOMAIN. A local name (localhost) serves no document")
	fs.StringVar(&c.ActionsOrigin, "actions-origin", "", "public https origin of the OpenAPI document, overriding https://DOMAIN (also read from "+envOrigin+")")
	fs.StringVar(&c.ActionsRate, "actions-rate", "120-M", "authenticated Actions requests allowed per credential (count-S|M|H)")
	fs.IntVar(&c.ActionsMaxConcurrent, "actions-max-concurrent", 8, "Actions calls executing at once")
	bindNotebookFlags(fs, &c.ActionsNotebooks, &c.ActionsWriteNotebooks, "actions-", "the Actions bearer token")
}

// actionsListener binds GPT Actions on c.ActionsListen after checking that
// its credential is private. mcpListener, which runs first, has checked
// that the three credentials are distinct; the Actions token file keeps
// checking on every request.
func actionsListener(c *config, a *app) (listener, error) {
	token, err := bearer.NewTokenFile(c.ActionsTokenFile)
	if err != nil {
		//lint:ignore ST1005 "Actions" is the surface's name, capitalised wherever it is named.
		return listener{}, fmt.Errorf("Actions %w", err)
	}
	token = token.DistinctFrom(actionsCred, a.log, c.credentials(actionsCred)...)
	doc, docErr, err := actionsDocument(c, a)
	if err != nil {
		return listener{}, err
	}
	notebooks, err := notebookScope("actions-", c.ActionsNotebooks, c.ActionsWriteNotebooks)
	if err != nil {
		return listener{}, err
	}
	h, err := actions.NewHandler(a.exec, actions.Config{
		Token: token, MaxBodyBytes: c.MaxRequestBytes, MaxConcurrent: c.ActionsMaxConcurrent,
		Rate: c.ActionsRate, Document: doc, DocumentError: docErr, TokenNotebooks: notebooks,
	})
	if err != nil {
		return listener{}, err
	}
	ln, err := net.Listen("tcp", c.ActionsListen)
	if err != nil {
		return listener{}, fmt.Errorf("listen for Actions: %w", err)
	}
	a.log.Info("serving GPT Actions", "addr", ln.Addr().String())
	return listener{name: "actions", ln: ln, srv: httpfront.NewServer(c.ActionsListen, h, c.timeouts())}, nil
}

// envOrigin overrides the origin derived from the domain, for serve (like
// --actions-origin) and for the openapi command (like --origin).
const envOrigin = "NOTEBRIDGE_ORIGIN"

// actionsDocument builds the OpenAPI document for the origin given by
// --actions-origin, else NOTEBRIDGE_ORIGIN, else https://<--domain>. An
// explicit origin that is not valid stops the start; a domain that gives
// no public origin (unset, localhost) only means no document: the error
// returned second is what GET /openapi.json answers.
func actionsDocument(c *config, a *app) ([]byte, *domainerr.Error, error) {
	origin, source := c.ActionsOrigin, "--actions-origin"
	if origin == "" {
		origin, source = os.Getenv(envOrigin), envOrigin
	}
	if origin == "" {
		var derr *domainerr.Error
		if origin, derr = actions.OriginFromDomain(c.Domain); derr != nil {
			a.log.Warn("no OpenAPI document is served", "path", actions.DocumentPath, "reason", derr.Message)
			return nil, derr, nil
		}
		source = "--domain"
	}
	doc, err := actions.Document(a.exec.Registry(), origin, version)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", source, err)
	}
	a.log.Info("serving the OpenAPI document", "path", actions.DocumentPath, "origin", origin)
	return doc, nil, nil
}

// runOpenAPI prints the OpenAPI 3.1 document for one production origin:
// --origin (NOTEBRIDGE_ORIGIN), else https://<--domain> (NOTEBRIDGE_DOMAIN).
func runOpenAPI(args []string, stdout, stderr io.Writer) error {
	var origin, domain string
	_, a, err := setup("openapi", args, stderr, false, func(fs *flag.FlagSet, _ *config) {
		fs.StringVar(&origin, "origin", "", "public https origin of the Actions API, e.g. https://notes.example.com")
		fs.StringVar(&domain, "domain", "", "public DNS name of the service; the origin is then https://DOMAIN")
	})
	if err != nil {
		return err
	}
	if strings.TrimSpace(origin) == "" {
		if strings.TrimSpace(domain) == "" {
			return errors.New("--origin is required, e.g. --origin https://notes.example.com (or set NOTEBRIDGE_DOMAIN)")
		}
		var derr *domainerr.Error
		if origin, derr = actions.OriginFromDomain(domain); derr != nil {
			return errors.New(derr.Message)
		}
	}
	doc, err := actions.Document(a.exec.Registry(), origin, version)
	if err != nil {
		return err
	}
	_, err = stdout.Write(doc)
	return err
}
