// Command geminicli is a fake `gemini` (Gemini CLI 0.61) for the tests
// of the Gemini CLI login driver: the parts the driver uses, as the real
// one behaves, offline and deterministic.
//
//   - `gemini --version`: "0.61.0".
//   - `gemini` in a terminal, with the Google login selected
//     (security.auth.selectedType "oauth-personal" in the user's
//     ~/.gemini/settings.json, or in the folder's .gemini/settings.json
//     when GEMINI_CLI_TRUST_WORKSPACE=true), no login saved and
//     NO_BROWSER=true: the real one's login without a browser. It
//     prints the authorization link (with a fresh state) and "Enter the
//     authorization code: ", and reads a line, which it echoes as the
//     real one's readline does. The right code saves the login
//     (~/.gemini/oauth_creds.json, mode 0600) and the account
//     (google_accounts.json), and it goes on to its session; any other
//     is "Failed to authenticate with authorization code" and a new
//     link, twice, then its session. In its session it waits, and
//     records every line it reads in ~/.gemini/fake-prompts, where a
//     test sees whether anything was ever sent as a prompt.
//   - `gemini` otherwise: its session at once. Not in a terminal, or a
//     CI variable set: the real one's refusal of a login without a
//     terminal.
//
// The store is GEMINI_CLI_HOME's, else HOME's .gemini. Tests steer it
// with WHARF_FAKE_GEMINI_CODE (the code the fake accepts; default
// "fake-authorization-code").
package main

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"golang.org/x/term"
)

func main() {
	args := os.Args[1:]
	switch {
	case len(args) == 1 && (args[0] == "--version" || args[0] == "-v"):
		fmt.Println("0.61.0")
	case len(args) == 0:
		os.Exit(run())
	default:
		// A prompt (-p) would reach the model: a driver must never get
		// here.
		fmt.Fprintln(os.Stderr, "fake gemini: unsupported arguments")
		os.Exit(2)
	}
}

// geminiDir is the store's folder.
func geminiDir() string {
	home := os.Getenv("GEMINI_CLI_HOME")
	if home == "" {
		home = os.Getenv("HOME")
	}
	return filepath.Join(home, ".gemini")
}

// selectedType is the merged settings' login type: the folder's
// (trusted only by GEMINI_CLI_TRUST_WORKSPACE here) over the user's.
func selectedType() string {
	read := func(path string) string {
		var s struct {
			Security struct {
				Auth struct {
					SelectedType string `json:"selectedType"`
				} `json:"auth"`
			} `json:"security"`
		}
		b, err := os.ReadFile(path)
		if err == nil {
			_ = json.Unmarshal(b, &s)
		}
		return s.Security.Auth.SelectedType
	}
	t := read(filepath.Join(geminiDir(), "settings.json"))
	if os.Getenv("GEMINI_CLI_TRUST_WORKSPACE") == "true" {
		if w := read(filepath.Join(".gemini", "settings.json")); w != "" {
			t = w
		}
	}
	return t
}

func run() int {
	interactive := term.IsTerminal(int(os.Stdin.Fd())) && term.IsTerminal(int(os.Stdout.Fd())) &&
		os.Getenv("CI") != "true" && os.Getenv("GITHUB_ACTIONS") != "true"
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 4096), 64<<10)
	if selectedType() != "oauth-personal" || saved() {
		return session(in)
	}
	if os.Getenv("NO_BROWSER") != "true" {
		fmt.Print("\n\nAttempting to open authentication page in your browser.\n")
		return session(in)
	}
	if !interactive {
		fmt.Fprintln(os.Stderr, "Manual authorization is required but the current session is non-interactive. "+
			"Please run the Gemini CLI in an interactive terminal to log in, provide a GEMINI_API_KEY, "+
			"or ensure Application Default Credentials are configured.")
		return 41
	}
	want := os.Getenv("WHARF_FAKE_GEMINI_CODE")
	if want == "" {
		want = "fake-authorization-code"
	}
	// The real one's alternate screen, cleared, mouse and keyboard
	// protocols off, line wrapping on.
	fmt.Print("\x1b[?1049h\x1b[2J\x1b[H\x1b[?1006l\x1b[?1002l\x1b[<u\x1b[?7h")
	for try := range 2 {
		fmt.Printf("Please visit the following URL to authorize the application:\n\n%s\n\n", link())
		fmt.Print("\x1b[1G\x1b[0JEnter the authorization code: \x1b[31G")
		if !in.Scan() {
			wait() // the real one waits out its five minutes
		}
		code := strings.TrimSpace(in.Text())
		fmt.Print(code + "\n") // readline's echo
		switch {
		case code == "":
			fmt.Fprint(os.Stderr, "Authorization code is required.\n")
		case code != want:
			fmt.Fprint(os.Stderr, "Failed to authenticate with authorization code:invalid_grant\n")
		default:
			if err := save(); err != nil {
				fmt.Fprint(os.Stderr, "Failed to authenticate with authorization code:"+err.Error()+"\n")
				return 1
			}
			fmt.Print("\x1b[?1049l")
			return session(in)
		}
		if try == 0 {
			fmt.Fprint(os.Stderr, "\nFailed to authenticate with user code. Retrying...\n")
		}
	}
	fmt.Fprint(os.Stderr, "\nFailed to authenticate with user code.\nFailed to authenticate with user code.\n")
	fmt.Print("\x1b[?1049l")
	return session(in)
}

// link is an authorization link as the real one prints it.
func link() string {
	q := url.Values{}
	q.Set("redirect_uri", "https://codeassist.google.com/authcode")
	q.Set("access_type", "offline")
	q.Set("scope", "https://www.googleapis.com/auth/cloud-platform https://www.googleapis.com/auth/userinfo.email https://www.googleapis.com/auth/userinfo.profile")
	q.Set("code_challenge_method", "S256")
	q.Set("code_challenge", random(32))
	q.Set("state", random(32))
	q.Set("response_type", "code")
	q.Set("client_id", "681255809395-oo8ft2oprdrnp9e3aqf6av3hmdib135j.apps.googleusercontent.com")
	return "https://accounts.google.com/o/oauth2/v2/auth?" + q.Encode()
}

// saved reports whether a Google login is saved.
func saved() bool {
	b, err := os.ReadFile(filepath.Join(geminiDir(), "oauth_creds.json"))
	if err != nil {
		return false
	}
	var c map[string]any
	return json.Unmarshal(b, &c) == nil && (c["refresh_token"] != nil || c["access_token"] != nil)
}

// save writes the login and the account where the real one does.
func save() error {
	dir := geminiDir()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	creds, _ := json.MarshalIndent(map[string]any{
		"access_token": "ya29.fake-" + random(16), "refresh_token": "1//fake-" + random(16),
		"scope":      "https://www.googleapis.com/auth/cloud-platform https://www.googleapis.com/auth/userinfo.email openid",
		"token_type": "Bearer", "id_token": "fake." + random(8), "expiry_date": time.Now().Add(time.Hour).UnixMilli(),
	}, "", "  ")
	if err := os.WriteFile(filepath.Join(dir, "oauth_creds.json"), creds, 0o600); err != nil {
		return err
	}
	// cacheGoogleAccount: the earlier active account joins the old ones.
	path := filepath.Join(dir, "google_accounts.json")
	acct := struct {
		Active *string  `json:"active"`
		Old    []string `json:"old"`
	}{Old: []string{}}
	if b, err := os.ReadFile(path); err == nil {
		_ = json.Unmarshal(b, &acct)
	}
	email := "fake@example.com"
	if acct.Active != nil && *acct.Active != email {
		acct.Old = append(acct.Old, *acct.Active)
	}
	acct.Active = &email
	b, _ := json.MarshalIndent(acct, "", "  ")
	return os.WriteFile(path, b, 0o644)
}

// session is the real one's full-screen session, reduced to waiting: a
// line typed into it would be a prompt, recorded for the tests.
func session(in *bufio.Scanner) int {
	fmt.Print("\x1b]0;\u25c7  Ready\x07\n > Type your message or @path/to/file\n")
	for in.Scan() {
		f, err := os.OpenFile(filepath.Join(geminiDir(), "fake-prompts"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err == nil {
			fmt.Fprintln(f, len(in.Text()))
			f.Close()
		}
	}
	wait() // as the real one, until it is stopped
	return 0
}

func random(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// wait blocks until the process is told to stop, as the real one waits
// (for a browser, for input), and exits as one ended by that signal.
func wait() {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	s := <-c
	os.Exit(128 + int(s.(syscall.Signal)))
}
