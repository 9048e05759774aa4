package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/notebridge/notebridge/pkg/auth/bearer"
)

// settableSecrets are the secrets `secret set` stores.
var settableSecrets = []string{secretPassword, secretMaster, secretEmbeddingsKey}

// runSecretSet stores one secret, read from the terminal without echo (twice,
// to catch a typo) or as the first line of a non-terminal stdin. It prints
// the file's path, never the secret.
func runSecretSet(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("secret set", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("dir", secretsHome(), "directory holding the secret files")
	var name string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		name, args = args[0], args[1:]
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if name == "" && fs.NArg() == 1 { // flags first: compose's entrypoint, then NAME
		name = fs.Arg(0)
	} else if fs.NArg() != 0 {
		name = ""
	}
	if !slices.Contains(settableSecrets, name) {
		return fmt.Errorf("usage: joplinsync secret set {%s} [--dir DIR]", strings.Join(settableSecrets, "|"))
	}
	value, err := readSecretInput(name, stdin, stderr)
	if err != nil {
		return err
	}
	if value == "" {
		return errors.New("empty secret: nothing stored")
	}
	if len(value) > maxSecretBytes {
		return fmt.Errorf("the secret is longer than %d bytes: nothing stored", maxSecretBytes)
	}
	path := filepath.Join(*dir, name)
	if err := bearer.WriteSecretFile(path, value); err != nil {
		return fmt.Errorf("store %s: %w", name, err)
	}
	user := "joplin"
	if name == secretEmbeddingsKey {
		user = "bridge"
	}
	_, err = fmt.Fprintf(stdout, "stored %s (0600); restart the %s to use it: docker compose restart %s\n", path, user, user)
	return err
}

// readSecretInput reads the secret: hidden from a terminal, else one line.
func readSecretInput(name string, stdin io.Reader, prompt io.Writer) (string, error) {
	f, isFile := stdin.(*os.File)
	if isFile && isTerminal(f) {
		first, err := readHidden(f, prompt, name+": ")
		if err != nil {
			return "", err
		}
		again, err := readHidden(f, prompt, name+" (again): ")
		if err != nil {
			return "", err
		}
		if first != again {
			return "", errors.New("the two entries differ: nothing stored")
		}
		return first, nil
	}
	line, err := bufio.NewReader(stdin).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("read the secret from stdin: %w", err)
	}
	return strings.TrimRight(line, "\r\n"), nil
}

func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// readHidden reads one line from a terminal with echo off.
func readHidden(f *os.File, prompt io.Writer, label string) (string, error) {
	fd := int(f.Fd())
	old, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return "", fmt.Errorf("terminal: %w", err)
	}
	quiet := *old
	quiet.Lflag &^= unix.ECHO
	quiet.Lflag |= unix.ICANON | unix.ISIG
	if err := unix.IoctlSetTermios(fd, unix.TCSETS, &quiet); err != nil {
		return "", fmt.Errorf("terminal: %w", err)
	}
	defer unix.IoctlSetTermios(fd, unix.TCSETS, old)
	fmt.Fprint(prompt, label)
	var line []byte
	var b [1]byte
	for {
		n, err := f.Read(b[:])
		if n == 1 && b[0] != '\n' {
			line = append(line, b[0])
			if len(line) > maxSecretBytes {
				break
			}
			continue
		}
		if n == 1 || errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", fmt.Errorf("read the secret: %w", err)
		}
	}
	fmt.Fprintln(prompt)
	return strings.TrimRight(string(line), "\r"), nil
}
