package main

import (
	"regexp"
	"strconv"
	"strings"
)

// Outcome is what one `sync` command did, read from its output: `joplin
// sync` reports failures only there (it exits 0 and the batch goes on).
type Outcome struct {
	OK bool
	// Busy: Joplin answered that a sync is already in progress; not a
	// failure of the target, try again shortly.
	Busy bool
	// Err is set when !OK && !Busy.
	Err *Problem
	// PasswordNeeded: Joplin says a master key has no password.
	PasswordNeeded bool
}

// Lines Joplin 3.5.1 prints (command-sync, Synchronizer.reportToLines).
const (
	markStarted     = "Starting synchronisation..."
	markLastError   = "Last error:"
	markBusy        = "Synchronisation is already in progress."
	markLockHeld    = "Lock file is already being hold."
	markNotAuth     = "Not authenticated with"
	markPassword    = "Your password is needed to decrypt some of your data"
	markUpgrade     = "Sync target must be upgraded!"
	markCannotStart = "Cannot initialise synchroniser."
)

// ClassifySync reads the output of one `sync` command of a target kind,
// and the synchronizer error Joplin logged meanwhile ("" for none), which
// is the only trace of a network failure.
func ClassifySync(target, output, loggedError string) Outcome {
	out := Outcome{PasswordNeeded: strings.Contains(output, markPassword)}
	switch {
	case strings.Contains(output, markBusy) || strings.Contains(output, markLockHeld):
		out.Busy = true
		return out
	case strings.Contains(output, markNotAuth):
		out.Err = notAuthenticated(target)
		return out
	case strings.Contains(output, markUpgrade):
		out.Err = &Problem{CodeFailed, envURL, "the sync target uses an older format: upgrade it from a Joplin desktop app (Synchronisation → Upgrade), then sync there once"}
		return out
	}
	if msg, ok := lastError(output); ok {
		out.Err = classifyError(target, msg)
		return out
	}
	if loggedError != "" {
		out.Err = classifyError(target, loggedError)
		return out
	}
	if !strings.Contains(output, markStarted) || strings.Contains(output, markCannotStart) {
		// Sync never started: a thrown error is the output's last line.
		out.Err = classifyError(target, lastLine(output))
		return out
	}
	out.OK = true
	return out
}

// notAuthenticated is the problem for a target Joplin holds no credentials
// or authorisation for.
func notAuthenticated(target string) *Problem {
	if targets[target].interactive {
		return &Problem{CodeNeedsAuthorization, envTarget, "Joplin is not authorised for " + target +
			" yet: docker compose stop joplin && docker compose run --rm joplin authorize-sync && docker compose up -d"}
	}
	return &Problem{CodeAuthFailed, secretPassword, "Joplin has no credentials for the " + target + " target: check " + envUser + " and the " + secretPassword + " secret"}
}

// lastErrorRe finds Synchronizer.reportToLines' "Last error: ..." line.
var lastErrorRe = regexp.MustCompile(`(?m)Last error: (.*)$`)

// lastError returns the text of the last "Last error:" line.
func lastError(output string) (string, bool) {
	m := lastErrorRe.FindAllStringSubmatch(output, -1)
	if len(m) == 0 {
		return "", false
	}
	return strings.TrimSpace(m[len(m)-1][1]), true
}

func lastLine(output string) string {
	lines := strings.Split(strings.TrimSpace(output), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// httpStatusRe finds an HTTP status Joplin's WebDAV, S3 and Joplin Server
// clients put in their error messages ("... 401 ...", "status 404").
var httpStatusRe = regexp.MustCompile(`\b(40[0-9]|41[0-9]|42[0-9]|50[0-9])\b`)

// classifyError maps Joplin's error text to a code and the setting to fix.
func classifyError(target, msg string) *Problem {
	low := strings.ToLower(msg)
	text := shorten(msg)
	has := func(words ...string) bool {
		for _, w := range words {
			if strings.Contains(low, strings.ToLower(w)) {
				return true
			}
		}
		return false
	}
	credsSetting := secretPassword
	switch {
	case has("Fail-safe:"):
		return &Problem{CodeBadURL, envURL, "the sync target looks empty while this Joplin has notes: check the URL (or folder); Joplin stopped to avoid deleting your notes: " + text}
	case target == TargetFilesystem && has("ENOENT", "EACCES", "EPERM", "EROFS", "ENOTDIR"):
		return &Problem{CodeConfig, envPath, "the sync folder is missing or not writable by uid 1000: " + text}
	case has("ENOTFOUND", "EAI_AGAIN", "getaddrinfo"):
		return &Problem{CodeUnreachable, envURL, "the sync target's host name does not resolve: " + text}
	case has("ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "socket hang up",
		"network request failed", "request timeout", "fetch failed", "EPIPE", "timed out"):
		return &Problem{CodeUnreachable, envURL, "the sync target cannot be reached: " + text}
	case has("invalid password", "incorrect password", "wrong password", "invalid username or password",
		"invalid email or password", "invalid origin or credentials", "unauthorized", "forbidden", "authentication",
		"InvalidAccessKeyId", "SignatureDoesNotMatch", "AccessDenied"):
		return &Problem{CodeAuthFailed, credsSetting, "the sync target refused the login (check " + envUser + " and the " + secretPassword + " secret): " + text}
	case has("certificate", "self signed", "self-signed", "ssl", "tls"):
		return &Problem{CodeBadURL, envURL, "the sync target's TLS certificate is not trusted: " + text}
	case has("NoSuchBucket"):
		return &Problem{CodeBadURL, envBucket, "the bucket does not exist: " + text}
	}
	if m := httpStatusRe.FindString(msg); m != "" {
		code, _ := strconv.Atoi(m)
		switch {
		case code == 401 || code == 403:
			return &Problem{CodeAuthFailed, credsSetting, "the sync target refused the login (check " + envUser + " and the " + secretPassword + " secret): " + text}
		case code == 404 || code == 405 || code == 409 || code == 301 || code == 302:
			return &Problem{CodeBadURL, envURL, "the sync target answered " + m + ": check the URL (the folder must exist): " + text}
		case code >= 500:
			return &Problem{CodeUnreachable, envURL, "the sync target failed (" + m + "): " + text}
		}
	}
	if text == "" {
		text = "the sync failed without a message"
	}
	return &Problem{CodeFailed, envTarget, text}
}

// maxMessage bounds an error message in status.json and the log.
const maxMessage = 300

// shorten keeps the first line of msg, bounded, without a stack trace.
func shorten(msg string) string {
	msg = strings.TrimSpace(msg)
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	if i := strings.Index(msg, "    at "); i >= 0 {
		msg = strings.TrimSpace(msg[:i])
	}
	if len(msg) > maxMessage {
		msg = msg[:maxMessage] + "…"
	}
	return msg
}

// DecryptOutcome is what `e2ee decrypt` did.
type DecryptOutcome struct {
	// WrongPassword: Joplin could not load a master key with the password
	// it has (it asked for one).
	WrongPassword bool
	// Skipped is the count of items Joplin could not decrypt (-1 unknown).
	Skipped int
}

var skippedRe = regexp.MustCompile(`Skipped items: (\d+)`)

// ClassifyDecrypt reads the output of `e2ee decrypt --force` (which fails
// with "Master key is not loaded" where it would otherwise ask for the
// password) and the questions it asked.
func ClassifyDecrypt(output string, asked []string) DecryptOutcome {
	out := DecryptOutcome{Skipped: -1}
	for _, q := range asked {
		if q == "Enter master password:" {
			out.WrongPassword = true
		}
	}
	if strings.Contains(output, "Master key is not loaded") {
		out.WrongPassword = true
	}
	if out.WrongPassword {
		return out
	}
	if strings.Contains(output, "Completed decryption.") {
		out.Skipped = 0
		if m := skippedRe.FindStringSubmatch(output); m != nil {
			out.Skipped, _ = strconv.Atoi(m[1])
		}
	}
	return out
}

// EncryptionEnabled reads `e2ee status` ("Encryption is: Enabled").
func EncryptionEnabled(output string) bool {
	return strings.Contains(output, "Encryption is: Enabled")
}
