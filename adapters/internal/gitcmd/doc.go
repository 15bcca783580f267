// Package gitcmd runs the git binary for the adapters that need it: the
// Hub's GitRunner (adapters/gitexec) and the workspace child's document
// feed (adapters/child/docfeed). It is the one place Wharf runs git
// (TestOnlyGitcmdRunsGit keeps it so); callers say which command and read
// its answer. It holds no domain types.
//
// # Bounds
//
// Every command:
//   - runs as `git [-C dir] [Options.Args...] args...` with its working
//     directory "/", so it never depends on the process's own;
//   - gets the environment Env builds from Options.Env: no GIT_* variable
//     of the caller's, the C locale, no terminal prompt and, with
//     Options.IsolateConfig, none of the user's global or the system's git
//     config;
//   - gets an empty stdin (the null device) and its own process group,
//     killed as a whole (SIGKILL) when ctx ends or Options.Timeout passes,
//     so hooks, helpers and a wedged pager die with git;
//   - may hold its output pipes open (through a stray grandchild) at most
//     Options.WaitDelay after git exited or was killed;
//   - keeps at most Options.MaxStdout bytes of stdout, and fails past
//     them rather than answer with a truncated listing, and the last
//     Options.StderrTail bytes of stderr, for logs only: decisions come from
//     exit statuses and machine formats (-z, porcelain, --format), never
//     from git's messages.
//
// One command runs otherwise: StartClone runs `git clone` in a
// pseudo-terminal of its own, unbounded in time (its caller kills it),
// with no system or global config, no HOME, NETRC or ambient SSH agent,
// and prompts on, so that its owner answers them (terminal.go). A clone
// makes a repository and reads no existing one's config.
//
// # No program a repository names
//
// A repository's own config (.git/config, config.worktree, the files they
// include) can make git run a program: filters (clean, smudge, process),
// diff drivers and textconv, external diff, merge drivers, fsmonitor,
// hooks and core.hooksPath, pagers, editors, credential helpers,
// core.sshCommand, core.askPass, core.gitProxy, gpg.*program,
// remote.*.uploadpack, url.*.insteadOf leading to ext::, and more with
// each git release. A workspace folder is not trusted (a clone, an
// unpacked archive), and an agent may write its .git/config without asking
// anyone. The rule: the settings of the user's own (global) and the
// system's config apply, Wharf's own (Options.Config) override them, and
// the repository's never choose a program. It holds like this:
//
//   - Discover finds a work tree with `git rev-parse`, and Run takes only
//     `init` and `version`: these read a repository's config at most to
//     learn its format, and run nothing any setting names
//     (TestNoProgramARepositoryNamesRuns checks it on the git at hand).
//   - Every other command runs through RunIn, in a repository Discover
//     found. git gets it explicitly (GIT_DIR, GIT_WORK_TREE) and, as its
//     common directory (GIT_COMMON_DIR), a shadow made for this command
//     alone, under Options.ShadowDir: symbolic links to every entry of the
//     real common directory but its config and its hooks, and a config
//     gitcmd writes itself from the repository's settings that keptKeys
//     allows (format and extensions, how files compare with the index,
//     branches and remotes; nothing that names a program or includes a
//     file). The repository's config and config.worktree are read once,
//     without blocking and bounded (MaxConfigBytes), by a parser that
//     reads them as git's does (TestConfigIsReadAsGitReadsIt and
//     FuzzParseConfig compare it with git itself); a file git would refuse
//     is refused. Objects, refs and the index are the real ones: what a
//     command writes lands in the repository, but for its config, which
//     git cannot lock in the shadow: writing it fails rather than be lost
//     (a family that sets a repository's config writes the file itself).
//   - Two worktree commands read the repository's config themselves
//     (worktree.go): ListWorktrees, which reads files only, and
//     AddWorktree, which makes a tree without checking it out (a branch,
//     two refs and the tree's git directory) with addConfig overriding
//     hooks; through a shadow git would record and list the shadow's
//     path. The checkout then runs through RunIn
//     (TestWorktreeCommandsRunNoProgramARepositoryNames).
//   - RunInWith bounds one command otherwise (a checkout, the status of
//     a large tree) and runs a fetch with the credentials it is lent
//     alone, as a clone runs, prompts off (With, Lent).
//   - Submodules have their own config, which the shadow does not cover:
//     fixedConfig and submoduleGuard keep git out of their work trees, and
//     options that would enter them are refused.
//   - Wharf's own settings (Options.Config) and fixedConfig reach git as
//     command-line config (GIT_CONFIG_COUNT), which git reads last, so they
//     override the user's; this is where Wharf sets its own
//     core.sshCommand, credential helper or signing program. The
//     repository cannot set those keys at all.
//
// Why a shadow and not overrides. Reading the repository's config and
// overriding each dangerous key it names (-c filter.x.clean=, an empty
// value disables a filter) leaves a race: git reads the config again,
// later, and an agent rewriting it in between wins. Measured on git 2.39.5
// with a loop flipping the config between a benign version and one naming
// a clean filter, git ran the program in 27 and 34 of 500 status runs. It
// also needs a list of dangerous keys, which git outgrows, and it cannot
// give the user's own value back for a key the repository shadowed. With
// the shadow, git never opens the repository's config: the file it reads
// is the one gitcmd wrote from a single read
// (TestARepositoryConfigRewrittenDuringRunsIsNeverUsed runs status 200
// times under thousands of rewrites; a rewrite torn mid-file makes a run
// fail, never leak a key). Refusing to run when the config changed would
// detect the race only after the program ran.
//
// What remains. Discover, Run and the two worktree commands read the
// repository's config directly; they run no program on the git versions
// tested, and a newer git that did would fail the tests above. An included file or an excludes or attributes
// file that is a FIFO makes git wait until its timeout. Programs the
// user's own config names still run when the repository points at them (a
// .gitattributes naming a filter the user's config defines, such as
// git-lfs): that is the user's configuration, as with their own git.
package gitcmd
