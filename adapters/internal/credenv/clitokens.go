package credenv

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/wharfhub/wharf/hub"
)

// cliEnv makes the provider CLIs' config folders in dir and returns the
// variables that point gh and glab at them, with the token of each tool
// that was given one. gh and glab read a token nowhere but their
// environment (or a config file, which would put it on disk), so this is
// the one place a secret enters a session's environment; the Hub stops
// the session when such a token is disabled or deleted. Without a token
// a tool still gets its own empty folder, so it never reads the user's
// login.
//
//	gh:   GH_CONFIG_DIR=<dir>/gh (config.yml: git_protocol https),
//	      GH_HOST, and GH_TOKEN for github.com, ghe.com and *.ghe.com,
//	      GH_ENTERPRISE_TOKEN for another host
//	glab: GLAB_CONFIG_DIR=<dir>/glab (config.yml naming the host),
//	      GITLAB_HOST, GITLAB_TOKEN
func cliEnv(dir string, tokens []hub.SessionCLIToken) ([]string, error) {
	var gh, glab *hub.SessionCLIToken
	for i, t := range tokens {
		switch t.Tool {
		case hub.ToolGH:
			gh = &tokens[i]
		case hub.ToolGLab:
			glab = &tokens[i]
		}
	}
	ghDir, glabDir := filepath.Join(dir, "gh"), filepath.Join(dir, "glab")
	env := []string{"GH_CONFIG_DIR=" + ghDir, "GLAB_CONFIG_DIR=" + glabDir}
	for _, d := range []string{ghDir, glabDir} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return nil, err
		}
	}
	if gh != nil {
		if err := os.WriteFile(filepath.Join(ghDir, "config.yml"), []byte("git_protocol: https\n"), 0o600); err != nil {
			return nil, err
		}
		name := "GH_ENTERPRISE_TOKEN"
		if gh.Host == "github.com" || gh.Host == "ghe.com" || strings.HasSuffix(gh.Host, ".ghe.com") {
			name = "GH_TOKEN"
		}
		env = append(env, "GH_HOST="+gh.Host, name+"="+string(gh.Token))
	}
	if glab != nil {
		q := strconv.Quote(glab.Host) // a normalized host: plain ASCII, quoted as YAML reads it
		cfg := fmt.Sprintf("hosts:\n  %s:\n    api_host: %s\n    git_protocol: https\n", q, q)
		if err := os.WriteFile(filepath.Join(glabDir, "config.yml"), []byte(cfg), 0o600); err != nil {
			return nil, err
		}
		env = append(env, "GITLAB_HOST="+glab.Host, "GITLAB_TOKEN="+string(glab.Token))
	}
	return env, nil
}
