package main

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Target kinds, as NOTEBRIDGE_SYNC_TARGET names them and status.json
// reports them.
const (
	TargetNone         = "none"
	TargetJoplinServer = "joplin-server"
	TargetJoplinCloud  = "joplin-cloud"
	TargetWebDAV       = "webdav"
	TargetNextcloud    = "nextcloud"
	TargetFilesystem   = "filesystem"
	TargetS3           = "s3"
	TargetDropbox      = "dropbox"
	TargetOneDrive     = "onedrive"
)

// Setting and secret names a configuration error can point at.
const (
	envTarget      = "NOTEBRIDGE_SYNC_TARGET"
	envURL         = "NOTEBRIDGE_SYNC_URL"
	envUser        = "NOTEBRIDGE_SYNC_USER"
	envPath        = "NOTEBRIDGE_SYNC_PATH"
	envBucket      = "NOTEBRIDGE_SYNC_S3_BUCKET"
	envRegion      = "NOTEBRIDGE_SYNC_S3_REGION"
	envPathStyle   = "NOTEBRIDGE_SYNC_S3_PATH_STYLE"
	envInterval    = "NOTEBRIDGE_SYNC_INTERVAL"
	envSecretsDir  = "NOTEBRIDGE_SECRETS_DIR"
	envStateDir    = "NOTEBRIDGE_SYNC_STATE_DIR"
	secretPassword = "sync-password"
	secretMaster   = "e2ee-master-password"
	// secretEmbeddingsKey is the bridge's, not Joplin's: the key of the
	// embeddings provider (search by meaning), stored by the same command.
	secretEmbeddingsKey = "embeddings-key"
)

// joplinCloudURL is Joplin Cloud's API origin, the default of sync.10.path.
const joplinCloudURL = "https://api.joplincloud.com"

// targetKind describes one sync target: Joplin's id for it (the
// sync.target setting) and what it needs.
type targetKind struct {
	id int
	// needsURL: a URL (or endpoint) in NOTEBRIDGE_SYNC_URL is required;
	// optionalURL: one may be given (Joplin Cloud's default API origin).
	needsURL, optionalURL bool
	// needsCredentials: NOTEBRIDGE_SYNC_USER and the sync-password secret.
	needsCredentials bool
	// interactive: authorised once with `authorize-sync`; Joplin keeps the
	// result in the profile (sync.N.auth).
	interactive bool
}

// targets are Joplin 3.5.1's sync target ids (SyncTarget*.id() in
// @joplin/lib; deploy/joplin/VERIFIED.md).
var targets = map[string]targetKind{
	TargetNone:         {id: 0},
	TargetFilesystem:   {id: 2},
	TargetOneDrive:     {id: 3, interactive: true},
	TargetNextcloud:    {id: 5, needsURL: true, needsCredentials: true},
	TargetWebDAV:       {id: 6, needsURL: true, needsCredentials: true},
	TargetDropbox:      {id: 7, interactive: true},
	TargetS3:           {id: 8, needsURL: true, needsCredentials: true},
	TargetJoplinServer: {id: 9, needsURL: true, needsCredentials: true},
	TargetJoplinCloud:  {id: 10, optionalURL: true, needsCredentials: true},
}

// targetNames lists the kinds in the order the docs give them.
var targetNames = []string{TargetNone, TargetJoplinServer, TargetJoplinCloud, TargetWebDAV,
	TargetNextcloud, TargetFilesystem, TargetS3, TargetDropbox, TargetOneDrive}

// Config is the sync configuration of the bundled Joplin: which target,
// how to reach it, and how often to sync. Secrets are held in memory only;
// String and errors never show them.
type Config struct {
	Target   string
	URL      string
	User     string
	Path     string // filesystem target: the folder inside the container
	Bucket   string // s3
	Region   string // s3
	S3Path   bool   // s3: path-style addressing (MinIO and most S3-compatible stores)
	Interval time.Duration
	password string
	master   string // E2EE master password ("" when none is set)
}

// Problem is a configuration error that names the setting to fix.
type Problem struct {
	Code    string // SYNC_CONFIG or SYNC_BAD_URL
	Setting string
	Message string
}

func (p *Problem) Error() string { return p.Setting + ": " + p.Message }

// DefaultInterval is the sync interval when NOTEBRIDGE_SYNC_INTERVAL is unset.
const DefaultInterval = 5 * time.Minute

// Interval bounds: shorter would hammer the target, longer makes the
// schedule meaningless.
const (
	minInterval = time.Second
	maxInterval = 24 * time.Hour
)

// LoadConfig reads the configuration from the environment (getenv) and the
// secret files in secretsDir. A *Problem reports the first setting to fix;
// the Config is still returned with what could be read (its Interval and
// Target at least), so the supervisor can report the problem and keep
// serving.
func LoadConfig(getenv func(string) string, secretsDir string) (Config, error) {
	c := Config{
		Target:   strings.ToLower(strings.TrimSpace(getenv(envTarget))),
		URL:      strings.TrimSpace(getenv(envURL)),
		User:     strings.TrimSpace(getenv(envUser)),
		Path:     strings.TrimSpace(getenv(envPath)),
		Bucket:   strings.TrimSpace(getenv(envBucket)),
		Region:   strings.TrimSpace(getenv(envRegion)),
		Interval: DefaultInterval,
	}
	if c.Target == "" {
		c.Target = TargetNone
	}
	if s := strings.TrimSpace(getenv(envInterval)); s != "" {
		d, err := parseInterval(s)
		if err != nil {
			return c, &Problem{CodeConfig, envInterval, err.Error()}
		}
		c.Interval = d
	}
	kind, ok := targets[c.Target]
	if !ok {
		c.Target = TargetNone
		return c, &Problem{CodeConfig, envTarget, fmt.Sprintf("unknown sync target %q; use one of %s",
			strings.TrimSpace(getenv(envTarget)), strings.Join(targetNames, ", "))}
	}
	var err error
	if c.master, err = readSecret(secretsDir, secretMaster); err != nil {
		return c, err
	}
	if c.Target == TargetNone {
		return c, nil
	}
	if err := c.checkURL(kind); err != nil {
		return c, err
	}
	if kind.needsCredentials {
		if c.User == "" {
			return c, &Problem{CodeConfig, envUser, fmt.Sprintf("is required for the %s target (%s)", c.Target, userMeaning(c.Target))}
		}
		if c.password, err = readSecret(secretsDir, secretPassword); err != nil {
			return c, err
		}
		if c.password == "" {
			return c, &Problem{CodeConfig, secretPassword, fmt.Sprintf(
				"the %s target needs the secret %s: docker compose run --rm sync-secret %s", c.Target, secretPassword, secretPassword)}
		}
	}
	switch c.Target {
	case TargetFilesystem:
		if c.Path == "" {
			c.Path = "/sync-folder"
		}
		if !filepath.IsAbs(c.Path) {
			return c, &Problem{CodeConfig, envPath, "must be an absolute path inside the container (default /sync-folder)"}
		}
	case TargetS3:
		if c.Bucket == "" {
			return c, &Problem{CodeConfig, envBucket, "is required for the s3 target"}
		}
		if c.Region == "" {
			c.Region = "us-east-1"
		}
		c.S3Path = true
		if s := strings.TrimSpace(getenv(envPathStyle)); s != "" {
			if c.S3Path, err = strconv.ParseBool(s); err != nil {
				return c, &Problem{CodeConfig, envPathStyle, "must be true or false"}
			}
		}
	}
	return c, nil
}

// userMeaning says what NOTEBRIDGE_SYNC_USER holds for a target.
func userMeaning(target string) string {
	switch target {
	case TargetS3:
		return "the access key id"
	case TargetJoplinServer, TargetJoplinCloud:
		return "the account's email"
	}
	return "the user name"
}

// checkURL validates NOTEBRIDGE_SYNC_URL for targets that take one.
func (c *Config) checkURL(kind targetKind) error {
	if c.URL == "" {
		if kind.needsURL {
			return &Problem{CodeConfig, envURL, fmt.Sprintf("is required for the %s target", c.Target)}
		}
		if kind.optionalURL {
			c.URL = joplinCloudURL
		}
		return nil
	}
	if !kind.needsURL && !kind.optionalURL {
		return &Problem{CodeConfig, envURL, fmt.Sprintf("is not used by the %s target; remove it", c.Target)}
	}
	u, err := url.Parse(c.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return &Problem{CodeBadURL, envURL, "must be an http:// or https:// URL with a host"}
	}
	if u.User != nil {
		return &Problem{CodeBadURL, envURL, fmt.Sprintf("must not hold credentials; put the user in %s and the password in the %s secret", envUser, secretPassword)}
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return &Problem{CodeBadURL, envURL, "must not have a query or fragment"}
	}
	c.URL = strings.TrimRight(c.URL, "/")
	return nil
}

// parseInterval accepts seconds ("300") or a Go duration ("5m").
func parseInterval(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		n, nerr := strconv.Atoi(s)
		if nerr != nil {
			return 0, errors.New("must be a number of seconds (300) or a duration (5m)")
		}
		d = time.Duration(n) * time.Second
	}
	if d < minInterval || d > maxInterval {
		return 0, fmt.Errorf("must be between %s and %s", minInterval, maxInterval)
	}
	return d, nil
}

// readSecret reads one secret file: "" when it does not exist. The file
// must not be readable by group or others.
func readSecret(dir, name string) (string, error) {
	path := filepath.Join(dir, name)
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", &Problem{CodeConfig, name, "the secret file cannot be read by uid " + strconv.Itoa(os.Getuid())}
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", &Problem{CodeConfig, name, "the secret file cannot be read"}
	}
	if st.Mode().Perm()&0o077 != 0 {
		return "", &Problem{CodeConfig, name, fmt.Sprintf("the secret file must be private (mode 0600, is %04o)", st.Mode().Perm())}
	}
	b := make([]byte, maxSecretBytes+1)
	n, _ := f.Read(b)
	if n > maxSecretBytes {
		return "", &Problem{CodeConfig, name, fmt.Sprintf("the secret is longer than %d bytes", maxSecretBytes)}
	}
	return strings.TrimRight(string(b[:n]), "\r\n"), nil
}

// maxSecretBytes bounds a secret file.
const maxSecretBytes = 4096

// JoplinSettings is the settings object imported into the profile with
// `config --import-file`: the target, its connection settings, the master
// password and Joplin's own sync schedule turned off (the supervisor syncs).
func (c Config) JoplinSettings() map[string]any {
	kind := targets[c.Target]
	s := map[string]any{"sync.target": kind.id, "sync.interval": 0}
	if c.master != "" {
		s["encryption.masterPassword"] = c.master
	}
	n := strconv.Itoa(kind.id)
	switch c.Target {
	case TargetFilesystem:
		s["sync.2.path"] = c.Path
	case TargetWebDAV, TargetNextcloud, TargetJoplinServer, TargetJoplinCloud:
		s["sync."+n+".path"] = c.URL
		s["sync."+n+".username"] = c.User
		s["sync."+n+".password"] = c.password
	case TargetS3:
		s["sync.8.url"] = c.URL
		s["sync.8.path"] = c.Bucket
		s["sync.8.region"] = c.Region
		s["sync.8.username"] = c.User
		s["sync.8.password"] = c.password
		s["sync.8.forcePathStyle"] = c.S3Path
	}
	return s
}

// Secrets are the values that must never appear in a log line or status.
func (c Config) Secrets() []string {
	return slices.DeleteFunc([]string{c.password, c.master}, func(s string) bool { return s == "" })
}

// String describes the configuration for the log, without secrets.
func (c Config) String() string {
	parts := []string{"target=" + c.Target}
	if c.Target == TargetNone {
		return parts[0]
	}
	for _, kv := range [][2]string{{"url", c.URL}, {"user", c.User}, {"path", c.Path}, {"bucket", c.Bucket}, {"region", c.Region}} {
		if kv[1] != "" {
			parts = append(parts, kv[0]+"="+kv[1])
		}
	}
	parts = append(parts, "interval="+c.Interval.String(), "e2ee_password="+strconv.FormatBool(c.master != ""))
	return strings.Join(parts, " ")
}
