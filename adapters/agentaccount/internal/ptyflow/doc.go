// Package ptyflow runs the command-line programs of the agent-login
// drivers that have no login server (Claude Code's `claude`, Gemini
// CLI's `gemini`): one-shot commands (Run) and logins that print a link
// in a terminal and read a code from it (Start, a Terminal).
//
// Every program leads a process group of its own that ends whole: once
// its leader exits, or when it is killed, what is left of the group is
// killed and waited for, so nothing a driver started outlives it. Every
// read is bounded: a one-shot command's standard output (its standard
// error, which can quote what it was given, is discarded), and a
// terminal's output, which is kept only while a driver looks for the
// login's link in it (MaxScan, with the terminal's control sequences
// removed) and past that is only watched for fixed markers, never kept:
// a terminal echoes what is typed into it, and what is typed is a
// login's code. The follower's own echo is turned off before the program
// starts; a program that echoes by itself (readline) is still never
// logged, kept or quoted.
package ptyflow
