package main

import (
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/notebridge/notebridge/pkg/auth/oauthserver"
)

// oauthUsage lists the operator's OAuth commands.
const oauthUsage = "usage: notebridge oauth {clients|grants|revoke GRANT_OR_CLIENT|rotate-secret} [--state-dir DIR]"

// runOAuth is the operator's view of the built-in authorization server:
// `notebridge oauth clients`, `grants`, `revoke ID` and `rotate-secret`.
// Safe while serve runs on the same state directory: a revocation or a
// rotation takes effect on the server's next request. It prints no token,
// signature or secret.
func runOAuth(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return usageError(oauthUsage)
	}
	sub, args := args[0], args[1:]
	var id string
	if sub == "revoke" {
		// An ID that begins with "-" (client IDs issued before they were
		// kept from it) is named after "--".
		if len(args) > 1 && args[0] == "--" {
			args = args[1:]
		} else if len(args) == 0 || strings.HasPrefix(args[0], "-") {
			return usageError("notebridge oauth revoke needs a grant or client ID (see notebridge oauth grants and oauth clients; an ID that begins with - goes after --)")
		}
		id, args = args[0], args[1:]
	}
	var c config
	fs := flag.NewFlagSet("oauth "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.StateDir, "state-dir", defaultStateDir(), "state directory of the server (its oauth/ holds clients and grants)")
	if err := parse(fs, args); err != nil {
		return err
	}
	switch sub {
	case "clients", "grants", "revoke", "rotate-secret":
	default:
		return unknownCommand("oauth", sub)
	}
	op, err := oauthserver.OpenOperator(c.StateDir)
	if err != nil {
		return fmt.Errorf("%s: %w", c.StateDir, err)
	}
	switch sub {
	case "clients":
		return listClients(op, stdout)
	case "grants":
		return listGrants(op, stdout)
	case "revoke":
		kind, err := op.Revoke(id)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(stdout, "revoked %s %s; its tokens are refused from the next request on\n", kind, id)
		return err
	default:
		if err := op.RotateSecret(); err != nil {
			return err
		}
		_, err := fmt.Fprintln(stdout, "rotated the token-signing secret; every token issued before is refused, clients must be approved again")
		return err
	}
}

func listClients(op *oauthserver.Operator, stdout io.Writer) error {
	clients, err := op.Clients()
	if err != nil {
		return err
	}
	rows := make([][]any, 0, len(clients))
	for _, cl := range clients {
		rows = append(rows, []any{cl.ID, strconv.Quote(cl.Name), stamp(cl.RegisteredAt), cl.RegisteredVia, cl.AuthMethod,
			cl.Grants, strings.Join(cl.RedirectURIs, " ")})
	}
	return printTable(stdout, "CLIENT\tNAME (CLAIMED)\tREGISTERED\tVIA\tAUTH\tGRANTS\tREDIRECT URIS", rows)
}

func listGrants(op *oauthserver.Operator, stdout io.Writer) error {
	grants, err := op.Grants()
	if err != nil {
		return err
	}
	rows := make([][]any, 0, len(grants))
	for _, g := range grants {
		rows = append(rows, []any{g.ID, g.ClientID, strconv.Quote(g.ClientName), strings.Join(g.Scopes, ","),
			strconv.Quote(g.Notebooks), stamp(g.Created), stamp(g.LastUsed)})
	}
	return printTable(stdout, "GRANT\tCLIENT\tNAME (CLAIMED)\tSCOPES\tNOTEBOOKS\tCREATED\tLAST USED", rows)
}

// printTable writes a header and rows in aligned columns. Names a client
// chose are quoted by the caller: they may hold control characters.
func printTable(w io.Writer, header string, rows [][]any) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, header)
	for _, r := range rows {
		for i, v := range r {
			if i > 0 {
				fmt.Fprint(tw, "\t")
			}
			fmt.Fprint(tw, v)
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

// stamp formats a time for the listings; "-" for never.
func stamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}
