package main

import (
	"os"
	"path/filepath"
	"testing"
)

// Sync outputs as Joplin 3.5.1 prints them in a batch (deploy/joplin/
// VERIFIED.md, "Sync").
const (
	syncOK = "Synchronisation target: WebDAV (6)\nStarting synchronisation...\n" +
		"Created local items: 1. Fetched items: 1/1. Completed: 02/12/2026 01:02\nDownloading resources...\n"
	syncPasswordNeeded = syncOK + "/!\\ Your password is needed to decrypt some of your data. Type `:e2ee decrypt` to set it.\n"
)

func syncFailed(msg string) string {
	return "Synchronisation target: WebDAV (6)\nStarting synchronisation...\nLast error: " + msg + "\nDownloading resources...\n"
}

func TestClassifySync(t *testing.T) {
	cases := []struct {
		name, target, out string
		ok, busy          bool
		code, setting     string
	}{
		{"success", TargetWebDAV, syncOK, true, false, "", ""},
		{"busy", TargetWebDAV, "Synchronisation is already in progress.\n", false, true, "", ""},
		{"lock held", TargetWebDAV, "Lock file is already being hold. If you know ...\n", false, true, "", ""},
		{"refused connection", TargetWebDAV, syncFailed("request to http://dav:8080/joplin/ failed, reason: connect ECONNREFUSED 172.18.0.3:8080"), false, false, CodeUnreachable, envURL},
		{"unknown host", TargetJoplinServer, syncFailed("request to https://nope.invalid/api/sessions failed, reason: getaddrinfo ENOTFOUND nope.invalid"), false, false, CodeUnreachable, envURL},
		{"webdav 401", TargetWebDAV, syncFailed("Unauthorized (Exception Unauthorized): 401 Unauthorized"), false, false, CodeAuthFailed, secretPassword},
		{"joplin server login", TargetJoplinServer, syncFailed("Invalid origin or credentials"), false, false, CodeAuthFailed, secretPassword},
		{"webdav 404", TargetWebDAV, syncFailed("Not Found (Exception Not Found): MKCOL locks/: 409 Conflict"), false, false, CodeBadURL, envURL},
		{"tls", TargetNextcloud, syncFailed("request to https://cloud/ failed, reason: self-signed certificate"), false, false, CodeBadURL, envURL},
		{"server error", TargetWebDAV, syncFailed("Internal Server Error: 503 Service Unavailable"), false, false, CodeUnreachable, envURL},
		{"folder missing", TargetFilesystem, syncFailed("ENOENT: no such file or directory, mkdir '/sync-folder/locks'"), false, false, CodeConfig, envPath},
		{"s3 key", TargetS3, syncFailed("InvalidAccessKeyId: The AWS Access Key Id you provided does not exist"), false, false, CodeAuthFailed, secretPassword},
		{"not authenticated", TargetWebDAV, "Not authenticated with WebDAV. Please provide any missing credentials.\n", false, false, CodeAuthFailed, secretPassword},
		{"dropbox not authorised", TargetDropbox, "Not authenticated with Dropbox. Please provide any missing credentials.\n", false, false, CodeNeedsAuthorization, envTarget},
		{"thrown before start", TargetWebDAV, "Synchronisation target: WebDAV (6)\nsomething odd happened\n", false, false, CodeFailed, envTarget},
		{"unclassified", TargetWebDAV, syncFailed("Unexpected token < in JSON"), false, false, CodeFailed, envTarget},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := ClassifySync(tc.target, tc.out, "")
			if got.OK != tc.ok || got.Busy != tc.busy {
				t.Fatalf("ok=%v busy=%v, want %v %v (%+v)", got.OK, got.Busy, tc.ok, tc.busy, got.Err)
			}
			if tc.code == "" {
				if got.Err != nil {
					t.Fatalf("unexpected error %+v", got.Err)
				}
				return
			}
			if got.Err == nil || got.Err.Code != tc.code || got.Err.Setting != tc.setting {
				t.Fatalf("err = %+v, want %s %s", got.Err, tc.code, tc.setting)
			}
		})
	}
	if !ClassifySync(TargetWebDAV, syncPasswordNeeded, "").PasswordNeeded {
		t.Error("the password message was not noticed")
	}
}

func TestClassifyDecrypt(t *testing.T) {
	d := ClassifyDecrypt("Starting decryption... Please wait\nOperation cancelled\n", []string{"Enter master password:"})
	if !d.WrongPassword {
		t.Error("a password question was not read as a wrong password")
	}
	d = ClassifyDecrypt("Starting decryption...\nMaster key is not loaded: 0123abcd\n", nil)
	if !d.WrongPassword {
		t.Error("a master key that cannot be loaded was not read as a wrong password")
	}
	d = ClassifyDecrypt("Starting decryption...\nDecrypted items: 3\nSkipped items: 2 (use --retry-failed-items to retry decrypting them)\nCompleted decryption.\n", nil)
	if d.WrongPassword || d.Skipped != 2 {
		t.Errorf("got %+v, want skipped 2", d)
	}
	d = ClassifyDecrypt("Starting decryption...\nDecrypted items: 0\nCompleted decryption.\n", nil)
	if d.Skipped != 0 {
		t.Errorf("got %+v, want skipped 0", d)
	}
	if !EncryptionEnabled("Encryption is: Enabled\n") || EncryptionEnabled("Encryption is: Disabled\n") {
		t.Error("e2ee status misread")
	}
}

func TestShortenDropsStackTraces(t *testing.T) {
	got := shorten("Error: boom    at Foo (/usr/local/lib/node_modules/x.js:1:2)\n    at Bar")
	if got != "Error: boom" {
		t.Errorf("shorten = %q", got)
	}
}

// TestClassifySyncReadsTheLoggedNetworkError: a refused connection leaves
// the sync output looking like a success (Joplin only logs it): the
// error logged during the sync decides.
func TestClassifySyncReadsTheLoggedNetworkError(t *testing.T) {
	silent := "Synchronisation target:  (6)\nStarting synchronisation...\nCompleted: 02/12/2026 00:16 (21s)\nDownloading resources...\n"
	if !ClassifySync(TargetWebDAV, silent, "").OK {
		t.Fatal("a quiet sync with nothing logged is not a success")
	}
	got := ClassifySync(TargetWebDAV, silent, "FetchError: request to http://webdav:9999/joplin/info.json failed, reason: connect ECONNREFUSED 172.18.0.2:9999")
	if got.OK || got.Err == nil || got.Err.Code != CodeUnreachable || got.Err.Setting != envURL {
		t.Fatalf("got %+v %+v, want %s", got, got.Err, CodeUnreachable)
	}
	failSafe := syncFailed("Fail-safe: Sync was interrupted to prevent data loss, because the sync target is empty or damaged. To override this behaviour disable the fail-safe in the sync settings.")
	if got := ClassifySync(TargetWebDAV, failSafe, ""); got.Err == nil || got.Err.Code != CodeBadURL || got.Err.Setting != envURL {
		t.Fatalf("fail-safe: %+v", got.Err)
	}
}

// TestProfileLogFindsErrorsAfterTheMark: only errors logged after the mark
// count; a truncated log is read from its start.
func TestProfileLogFindsErrorsAfterTheMark(t *testing.T) {
	l := ProfileLog{Path: filepath.Join(t.TempDir(), "log.txt")}
	if l.LastSyncError(l.Mark()) != "" {
		t.Fatal("an error from a missing log")
	}
	old := "2026-12-02 00:15:00: Synchronizer: [error] FetchError: old failure\n"
	if err := os.WriteFile(l.Path, []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	mark := l.Mark()
	if got := l.LastSyncError(mark); got != "" {
		t.Fatalf("an error logged before the mark: %q", got)
	}
	f, _ := os.OpenFile(l.Path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("2026-12-02 00:16:00: Synchronizer: [error] FetchError: new failure\nCode: ECONNREFUSED\n    at x (y.js:1:2)\n2026-12-02 00:16:00: Synchronizer: Sync: finished\n")
	f.Close()
	if got := l.LastSyncError(mark); got != "FetchError: new failure" {
		t.Fatalf("got %q", got)
	}
	os.WriteFile(l.Path, []byte("2026-12-02 00:17:00: Synchronizer: [error] after rotation\n"), 0o600)
	if got := l.LastSyncError(mark + 1000); got != "after rotation" {
		t.Fatalf("after truncation: %q", got)
	}
}
