package chat

// TerminalWatcher shows the terminals agents open (ACP terminal/create)
// to the workspace's people, read-only: the workspace child gives one to
// the agent runtime, which reports each terminal's life through it. Its
// methods are safe for concurrent use and never block on a viewer.
type TerminalWatcher interface {
	// WatchTerminal starts showing a terminal whose command line is
	// commandLine (the watcher shortens it for display).
	WatchTerminal(commandLine string) TerminalView
}

// TerminalView is one agent terminal being shown.
type TerminalView interface {
	// Write tees the command's output to viewers. It never blocks and
	// never fails: a viewer that falls behind loses output, never the
	// command its time.
	Write(p []byte) (int, error)
	// Exited says the command ended, with its exit code (nil when a
	// signal ended it). The view stays until Release.
	Exited(code *int)
	// Release ends the view: the agent released the terminal or its
	// connection ended. Later calls do nothing.
	Release()
}
