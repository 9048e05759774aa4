package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/notebridge/notebridge/pkg/core/executor"
	"github.com/notebridge/notebridge/pkg/core/notebookscope"
	"github.com/notebridge/notebridge/pkg/joplin"
	"github.com/notebridge/notebridge/pkg/joplin/joplinops"
	"github.com/notebridge/notebridge/pkg/toolsets"
	"github.com/notebridge/notebridge/pkg/transport/httpfront"
	"github.com/notebridge/notebridge/pkg/transport/mcpadapter"
)

// config holds every setting. Each flag --x-y also reads NOTEBRIDGE_X_Y;
// a flag given on the command line wins over the environment.
type config struct {
	JoplinURL       string
	JoplinTokenFile string
	JoplinWait      time.Duration
	JoplinTimeout   time.Duration
	MCPTokenFile    string
	Listen          string
	AllowedOrigins  string
	StateDir        string
	SyncStateDir    string
	SyncStateJoplin string
	Toolsets        string
	Tools           string
	ReadOnly        bool
	LogLevel        string
	MaxRequestBytes int64
	MaxActive       int
	MaxDepth        int
	ValidateOutput  bool
	MaxResource     int64
	MaxWholeBody    int
	MemoryLimit     byteSize
	OKFRoots        string

	// The activity log (pkg/core/activity) and the metrics listener.
	ActivityMaxBytes  byteSize
	ActivityMaxFiles  int
	ActivityRetention time.Duration
	MetricsListen     string

	EmbeddingsURL     string
	EmbeddingsModel   string
	EmbeddingsKeyFile string
	// EmbeddingsQueryPrefix and EmbeddingsDocumentPrefix override the
	// model's known prefixes: "" keeps them, "none" sends no prefix.
	EmbeddingsQueryPrefix    string
	EmbeddingsDocumentPrefix string
	// EmbeddingsBundledURL is the bundled embedder's URL (compose's
	// profile "meaning"), used when its host resolves and no
	// EmbeddingsURL is set.
	EmbeddingsBundledURL string
	// lookupHost resolves the bundled embedder's host (net's resolver
	// unless a test sets it).
	lookupHost func(ctx context.Context, host string) ([]string, error)

	// Notebook scopes (notebookscope settings): stdio's, the static MCP
	// token's and the Actions token's. Unset: every notebook.
	Notebooks             string
	WriteNotebooks        string
	MCPNotebooks          string
	MCPWriteNotebooks     string
	ActionsNotebooks      string
	ActionsWriteNotebooks string

	ActionsEnabled       bool
	ActionsTokenFile     string
	ActionsListen        string
	ActionsOrigin        string
	Domain               string
	ActionsRate          string
	ActionsMaxConcurrent int

	ReadHeaderTimeout time.Duration
	ReadTimeout       time.Duration
	IdleTimeout       time.Duration

	MCPSessionTTL               time.Duration
	MCPMaxSessionsPerCredential int
	MCPMaxSessions              int
	MCPMaxStreamsPerCredential  int
	MCPStreamIdleTimeout        time.Duration

	OAuth               bool
	OwnerPassphraseFile string
	TrustedProxies      string
	InternalHosts       string

	Console            string
	ConsoleIdleTimeout time.Duration
}

func defaultStateDir() string {
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "notebridge")
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".local", "state", "notebridge")
	}
	return filepath.Join(os.TempDir(), "notebridge")
}

// envName maps a flag name to its environment variable.
func envName(flagName string) string {
	return "NOTEBRIDGE_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// bindFlags registers the shared flags on fs. withHTTP adds the listener
// flags, which stdio mode does not have.
func bindFlags(fs *flag.FlagSet, c *config, withHTTP bool) {
	fs.StringVar(&c.JoplinURL, "joplin-url", joplin.DefaultBaseURL, "Joplin Data API origin")
	fs.StringVar(&c.JoplinTokenFile, "joplin-token-file", "", "file holding the Joplin API token")
	fs.DurationVar(&c.JoplinWait, "joplin-wait", joplin.DefaultAvailabilityWait, "how long one call waits for an unreachable Joplin")
	fs.DurationVar(&c.JoplinTimeout, "joplin-timeout", joplin.DefaultRequestTimeout, "timeout of one request to Joplin")
	fs.StringVar(&c.StateDir, "state-dir", defaultStateDir(), "directory for generated tokens, the operator journal and lock files")
	fs.StringVar(&c.SyncStateDir, "sync-state-dir", "", "directory the Joplin container shares its sync state in (status.json; compose: /sync): "+
		"joplin_status reports it, and a sync is requested there after every write")
	fs.StringVar(&c.SyncStateJoplin, "sync-state-joplin", "", "the Joplin URL the sync state belongs to (compose: the bundled Joplin's); "+
		"serving another Joplin, the bridge neither reports that sync nor requests one")
	fs.StringVar(&c.Toolsets, "toolsets", "", "comma-separated toolsets to enable (default: all)")
	fs.StringVar(&c.Tools, "tools", toolsets.ProfileAll, "MCP tools listed: all, or core (search, read, list, create, edit; find_tools and call_tool reach the rest)")
	fs.BoolVar(&c.ValidateOutput, "validate-output", false, "debugging: check every answer against its tool's output schema before sending it (INTERNAL when one does not match); "+
		"the tests prove the outputs, so production skips this cost")
	fs.BoolVar(&c.ReadOnly, "read-only", false, "serve only operations that read; every write is unlisted and refused (READ_ONLY)")
	fs.StringVar(&c.LogLevel, "log-level", "info", "log level: debug, info, warn, error (logs go to stderr)")
	fs.IntVar(&c.MaxActive, "max-active", executor.DefaultLimits.MaxActive, "operations allowed to run at once")
	fs.IntVar(&c.MaxDepth, "max-depth", executor.DefaultLimits.MaxDepth, "maximum JSON nesting of arguments")
	fs.Int64Var(&c.MaxResource, "max-resource-bytes", joplinops.DefaultLimits.MaxResourceBytes, "maximum decoded size of one resource (raise --max-request-bytes to about 4/3 of it plus 1 MiB)")
	fs.IntVar(&c.MaxWholeBody, "max-whole-body-bytes", joplinops.DefaultLimits.MaxWholeBody, "largest note body read whole on request (get_note view full, MCP resources/read); a larger one is RESPONSE_TOO_LARGE, read by section")
	fs.Int64Var(&c.MaxRequestBytes, "max-request-bytes", int64(executor.DefaultLimits.MaxArgBytes), "maximum size of one request")
	c.MemoryLimit = byteSize(executor.DefaultMemoryLimit)
	fs.Var(&c.MemoryLimit, "memory-limit", "soft memory limit of the Go runtime, a `size` such as 64MiB or 1GiB, or off. "+
		"Near it the garbage collector works harder; it never stops the process. The GOMEMLIMIT environment variable, when set, wins")
	fs.StringVar(&c.OKFRoots, "okf-roots", "", "comma-separated absolute directories that OKF bundle_path must lie in; when set, OKF tools are also served over MCP HTTP (never over Actions)")
	bindActivityFlags(fs, c)
	if !withHTTP {
		bindNotebookFlags(fs, &c.Notebooks, &c.WriteNotebooks, "", "the stdio client")
	}
	fs.StringVar(&c.EmbeddingsURL, "embeddings-url", "", "base URL of an OpenAI-compatible embeddings API you run (e.g. http://localhost:11434/v1 for Ollama; /embeddings is appended); "+
		"when set, note text is sent there to search by meaning. Off when empty: nothing leaves the machine")
	fs.StringVar(&c.EmbeddingsModel, "embeddings-model", "", "embedding model name sent to --embeddings-url (e.g. nomic-embed-text)")
	fs.StringVar(&c.EmbeddingsKeyFile, "embeddings-key-file", "", "file (mode 0600) holding the key sent to --embeddings-url as a bearer token; none when empty")
	fs.StringVar(&c.EmbeddingsQueryPrefix, "embeddings-query-prefix", "", "text put before every search query sent to the model (e.g. \"query: \"); empty: the model's known prefix (docs/search-index.md), none: no prefix")
	fs.StringVar(&c.EmbeddingsBundledURL, "embeddings-bundled-url", "", "base URL of the bundled embedder (compose sets http://embedder:8090/v1): used, with its model, when its host resolves (the profile \"meaning\" runs it) and --embeddings-url is empty")
	fs.StringVar(&c.EmbeddingsDocumentPrefix, "embeddings-document-prefix", "", "text put before every note chunk sent to the model (e.g. \"passage: \"); empty: the model's known prefix, none: no prefix. A change re-embeds every note")
	if withHTTP {
		bindNotebookFlags(fs, &c.MCPNotebooks, &c.MCPWriteNotebooks, "mcp-", "the static MCP bearer token")
		fs.StringVar(&c.Listen, "listen", "127.0.0.1:8765", "MCP Streamable HTTP listen address")
		fs.StringVar(&c.MetricsListen, "metrics-listen", "", "address of the internal listener serving /metrics (Prometheus text format); off when empty. Never route it through Caddy")
		fs.StringVar(&c.MCPTokenFile, "mcp-token-file", "", "file holding the MCP bearer token (generated in the state directory when unset)")
		fs.StringVar(&c.AllowedOrigins, "allowed-origins", "", "comma-separated browser origins allowed besides loopback")
		fs.DurationVar(&c.ReadHeaderTimeout, "read-header-timeout", httpfront.DefaultTimeouts.ReadHeader, "time a client may take to send request headers")
		fs.DurationVar(&c.ReadTimeout, "read-timeout", httpfront.DefaultTimeouts.Read, "time a client may take to send a whole request")
		fs.DurationVar(&c.IdleTimeout, "idle-timeout", httpfront.DefaultTimeouts.Idle, "time an idle kept-alive connection stays open")
		fs.DurationVar(&c.MCPSessionTTL, "mcp-session-ttl", mcpadapter.DefaultSessionIdleTTL, "an MCP HTTP session without a request for this long ends")
		fs.IntVar(&c.MCPMaxSessionsPerCredential, "mcp-max-sessions-per-credential", mcpadapter.DefaultMaxSessionsPerCredential, "live MCP HTTP sessions allowed per bearer token")
		fs.IntVar(&c.MCPMaxSessions, "mcp-max-sessions", mcpadapter.DefaultMaxSessions, "live MCP HTTP sessions allowed in total")
		fs.IntVar(&c.MCPMaxStreamsPerCredential, "mcp-max-streams-per-credential", mcpadapter.DefaultMaxStreamsPerCredential, "open GET /mcp streams allowed per bearer token")
		fs.DurationVar(&c.MCPStreamIdleTimeout, "mcp-stream-idle-timeout", mcpadapter.DefaultStreamIdleTimeout, "a GET /mcp stream that carries nothing for this long is closed")
	}
}

// notebookHelp says how a notebook setting names notebooks.
const notebookHelp = "comma-separated notebooks by id or path (Work/Clients; a title containing / or , is named by id), " +
	"each with its sub-notebooks, present and future; * or unset: every notebook"

// bindNotebookFlags registers --<prefix>notebooks and
// --<prefix>write-notebooks for who.
func bindNotebookFlags(fs *flag.FlagSet, read, write *string, prefix, who string) {
	fs.StringVar(read, prefix+"notebooks", "", "notebooks "+who+" may read and write: "+notebookHelp)
	fs.StringVar(write, prefix+"write-notebooks", "", "narrows the notebooks "+who+" may write (within --"+prefix+"notebooks)")
}

// notebookScope reads the settings --<prefix>notebooks and
// --<prefix>write-notebooks; nil when neither is set (every notebook).
func notebookScope(prefix, read, write string) (*notebookscope.Scope, error) {
	if strings.TrimSpace(read) == "" && strings.TrimSpace(write) == "" {
		return nil, nil
	}
	if strings.TrimSpace(read) == "" {
		read = "*"
	}
	sc, err := notebookscope.Parse(read, write)
	if err != nil {
		return nil, fmt.Errorf("--%snotebooks / --%swrite-notebooks: %w", prefix, prefix, err)
	}
	return &sc, nil
}

// parse applies NOTEBRIDGE_* variables for flags not set on the command line.
func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return flagError{err} // already printed, with the flags
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if set[f.Name] || err != nil {
			return
		}
		if v, ok := os.LookupEnv(envName(f.Name)); ok {
			if e := f.Value.Set(v); e != nil {
				err = fmt.Errorf("%s: %w", envName(f.Name), e)
			}
		}
	})
	return err
}

// byteSize is a flag value in the GOMEMLIMIT syntax (64MiB, 1GiB, off).
type byteSize int64

func (b *byteSize) String() string { return executor.FormatByteSize(int64(*b)) }

func (b *byteSize) Set(s string) error {
	n, err := executor.ParseByteSize(s)
	if err != nil {
		return err
	}
	*b = byteSize(n)
	return nil
}

func (c *config) limits() executor.Limits {
	return executor.Limits{MaxArgBytes: int(c.MaxRequestBytes), MaxDepth: c.MaxDepth, MaxActive: c.MaxActive}
}

func (c *config) timeouts() httpfront.Timeouts {
	return httpfront.Timeouts{ReadHeader: c.ReadHeaderTimeout, Read: c.ReadTimeout, Idle: c.IdleTimeout}
}

func (c *config) logger() *slog.Logger {
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.LogLevel)); err != nil {
		level = slog.LevelInfo
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
}

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}
