package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// env is a fake environment.
type env map[string]string

func (e env) get(k string) string { return e[k] }

// secretsDir makes a secrets directory holding the given files (0600).
func secretsDir(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, v := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(v), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestLoadConfigProblemsNameTheSetting: every invalid configuration is a
// Problem with a stable code naming the setting to fix, and its message
// never holds the password.
func TestLoadConfigProblemsNameTheSetting(t *testing.T) {
	pw := map[string]string{secretPassword: "hunter2-secret\n"}
	cases := []struct {
		name    string
		env     env
		secrets map[string]string
		code    string
		setting string
	}{
		{"unknown target", env{envTarget: "ftp"}, nil, CodeConfig, envTarget},
		{"webdav without url", env{envTarget: "webdav", envUser: "u"}, pw, CodeConfig, envURL},
		{"webdav url not http", env{envTarget: "webdav", envURL: "ftp://h/x", envUser: "u"}, pw, CodeBadURL, envURL},
		{"webdav url without host", env{envTarget: "webdav", envURL: "https:///x", envUser: "u"}, pw, CodeBadURL, envURL},
		{"url with credentials", env{envTarget: "webdav", envURL: "https://u:hunter2-secret@h/x", envUser: "u"}, pw, CodeBadURL, envURL},
		{"webdav without user", env{envTarget: "webdav", envURL: "https://h/dav"}, pw, CodeConfig, envUser},
		{"webdav without password", env{envTarget: "webdav", envURL: "https://h/dav", envUser: "u"}, nil, CodeConfig, secretPassword},
		{"nextcloud without password", env{envTarget: "nextcloud", envURL: "https://h/remote.php/dav/files/u/Joplin", envUser: "u"}, nil, CodeConfig, secretPassword},
		{"joplin server without url", env{envTarget: "joplin-server", envUser: "a@b.c"}, pw, CodeConfig, envURL},
		{"joplin cloud without user", env{envTarget: "joplin-cloud"}, pw, CodeConfig, envUser},
		{"s3 without bucket", env{envTarget: "s3", envURL: "https://s3.example.org", envUser: "AKIA"}, pw, CodeConfig, envBucket},
		{"s3 path style not a bool", env{envTarget: "s3", envURL: "https://s3.example.org", envUser: "AKIA", envBucket: "b", envPathStyle: "maybe"}, pw, CodeConfig, envPathStyle},
		{"filesystem relative path", env{envTarget: "filesystem", envPath: "notes"}, nil, CodeConfig, envPath},
		{"filesystem with url", env{envTarget: "filesystem", envURL: "https://h"}, nil, CodeConfig, envURL},
		{"dropbox with url", env{envTarget: "dropbox", envURL: "https://h"}, nil, CodeConfig, envURL},
		{"interval not a number", env{envTarget: "none", envInterval: "often"}, nil, CodeConfig, envInterval},
		{"interval too short", env{envTarget: "none", envInterval: "0"}, nil, CodeConfig, envInterval},
		{"interval too long", env{envTarget: "none", envInterval: "48h"}, nil, CodeConfig, envInterval},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadConfig(tc.env.get, secretsDir(t, tc.secrets))
			var p *Problem
			if !errors.As(err, &p) {
				t.Fatalf("err = %v, want a *Problem", err)
			}
			if p.Code != tc.code || p.Setting != tc.setting {
				t.Errorf("problem = %s %s (%s), want %s %s", p.Code, p.Setting, p.Message, tc.code, tc.setting)
			}
			if strings.Contains(p.Error(), "hunter2") {
				t.Errorf("the problem shows the password: %s", p.Error())
			}
		})
	}
}

// TestLoadConfigSecretFileMustBePrivate: a secret readable by others is a
// configuration problem naming the secret.
func TestLoadConfigSecretFileMustBePrivate(t *testing.T) {
	dir := secretsDir(t, map[string]string{secretPassword: "pw"})
	if err := os.Chmod(filepath.Join(dir, secretPassword), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := LoadConfig(env{envTarget: "webdav", envURL: "https://h/d", envUser: "u"}.get, dir)
	var p *Problem
	if !errors.As(err, &p) || p.Setting != secretPassword || !strings.Contains(p.Message, "0600") {
		t.Fatalf("err = %v, want a problem naming %s and 0600", err, secretPassword)
	}
}

// TestJoplinSettingsPerTarget: each target sets Joplin's sync.target id and
// its own sync.N.* settings, and turns off Joplin's own schedule.
func TestJoplinSettingsPerTarget(t *testing.T) {
	pw := map[string]string{secretPassword: "pw\n", secretMaster: "mk\n"}
	cases := []struct {
		env  env
		want map[string]any
	}{
		{env{}, map[string]any{"sync.target": 0, "sync.interval": 0, "encryption.masterPassword": "mk"}},
		{env{envTarget: "webdav", envURL: "http://dav:8080/joplin/", envUser: "u"}, map[string]any{
			"sync.target": 6, "sync.6.path": "http://dav:8080/joplin", "sync.6.username": "u", "sync.6.password": "pw"}},
		{env{envTarget: "nextcloud", envURL: "https://cloud.example.org/remote.php/dav/files/u/Joplin", envUser: "u"}, map[string]any{
			"sync.target": 5, "sync.5.path": "https://cloud.example.org/remote.php/dav/files/u/Joplin", "sync.5.username": "u", "sync.5.password": "pw"}},
		{env{envTarget: "joplin-server", envURL: "https://joplin.example.org", envUser: "me@example.org"}, map[string]any{
			"sync.target": 9, "sync.9.path": "https://joplin.example.org", "sync.9.username": "me@example.org", "sync.9.password": "pw"}},
		{env{envTarget: "joplin-cloud", envUser: "me@example.org"}, map[string]any{
			"sync.target": 10, "sync.10.path": joplinCloudURL, "sync.10.username": "me@example.org", "sync.10.password": "pw"}},
		{env{envTarget: "filesystem"}, map[string]any{"sync.target": 2, "sync.2.path": "/sync-folder"}},
		{env{envTarget: "s3", envURL: "https://minio.example.org", envUser: "AKIA", envBucket: "notes"}, map[string]any{
			"sync.target": 8, "sync.8.url": "https://minio.example.org", "sync.8.path": "notes", "sync.8.region": "us-east-1",
			"sync.8.username": "AKIA", "sync.8.password": "pw", "sync.8.forcePathStyle": true}},
		{env{envTarget: "dropbox"}, map[string]any{"sync.target": 7}},
		{env{envTarget: "onedrive"}, map[string]any{"sync.target": 3}},
	}
	for _, tc := range cases {
		cfg, err := LoadConfig(tc.env.get, secretsDir(t, pw))
		if err != nil {
			t.Fatalf("%v: %v", tc.env, err)
		}
		got := cfg.JoplinSettings()
		for k, v := range tc.want {
			if got[k] != v {
				t.Errorf("%s: %s = %#v, want %#v", cfg.Target, k, got[k], v)
			}
		}
		if got["sync.interval"] != 0 {
			t.Errorf("%s: Joplin's own sync schedule is not off", cfg.Target)
		}
		if s := cfg.String(); strings.Contains(s, "pw") && cfg.Target != TargetNone || strings.Contains(s, "mk") {
			t.Errorf("%s: String shows a secret: %s", cfg.Target, s)
		}
	}
}

// TestIntervalForms: seconds and Go durations; the default is 5 minutes.
func TestIntervalForms(t *testing.T) {
	for in, want := range map[string]time.Duration{"": DefaultInterval, "300": 5 * time.Minute, "2s": 2 * time.Second, "1h": time.Hour} {
		cfg, err := LoadConfig(env{envInterval: in}.get, t.TempDir())
		if err != nil || cfg.Interval != want {
			t.Errorf("%q: interval %s, err %v; want %s", in, cfg.Interval, err, want)
		}
	}
}
