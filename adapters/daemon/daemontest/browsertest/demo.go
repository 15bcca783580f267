package browsertest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// DemoWorkspace is one folder of the demonstration home.
type DemoWorkspace struct {
	Folder, Name string
	Start        bool
	Files        map[string]string // extra files, some left uncommitted
	Commits      []string          // further commit subjects
}

// Demo are the workspaces the screenshots show.
var Demo = []DemoWorkspace{
	{Folder: "wharf-site", Name: "Wharf website", Start: true,
		Files:   map[string]string{"docs/getting-started.md": "# Getting started\n", "docs/phone.md": "# On your phone\n", "src/index.html": "<!doctype html>\n", "src/style.css": "body{}\n"},
		Commits: []string{"Describe the first steps", "Add the phone guide", "Tighten the landing page copy"}},
	{Folder: "api-server", Name: "API server", Start: true,
		Files:   map[string]string{"cmd/api/main.go": "package main\n", "internal/store/store.go": "package store\n", "go.mod": "module example.com/api\n"},
		Commits: []string{"Serve the health check", "Store sessions in SQLite"}},
	{Folder: "notes", Name: "Notes", Files: map[string]string{"ideas.md": "# Ideas\n"}},
	{Folder: "design-system", Name: "Design system", Files: map[string]string{"tokens.css": ":root{}\n"}},
}

// MakeDemo lays out the demonstration folders under home/src, each a Git
// repository with a few commits, and leaves some changes uncommitted.
func MakeDemo(ctx context.Context, home string) error {
	for _, d := range Demo {
		dir := filepath.Join(home, "src", d.Folder)
		if err := GitRepo(ctx, dir); err != nil {
			return err
		}
		for _, subject := range d.Commits {
			f := filepath.Join(dir, "CHANGELOG.md")
			old, _ := os.ReadFile(f)
			if err := os.WriteFile(f, append(old, []byte("- "+subject+"\n")...), 0o644); err != nil {
				return err
			}
			if err := git(ctx, dir, "add", "-A"); err != nil {
				return err
			}
			if err := git(ctx, dir, "-c", "user.name=Ann", "-c", "user.email=ann@example.com", "commit", "-q", "-m", subject); err != nil {
				return err
			}
		}
		for name, content := range d.Files {
			p := filepath.Join(dir, name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
				return err
			}
		}
		if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("# "+d.Name+"\n\nWork in progress.\n"), 0o644); err != nil {
			return err
		}
	}
	return os.MkdirAll(filepath.Join(home, "src", "experiments"), 0o755)
}

func git(ctx context.Context, dir string, args ...string) error {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("git %v: %w: %s", args, err, b)
	}
	return nil
}
