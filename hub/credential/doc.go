// Package credential is the credentials family's rules: what a Git host
// is (NormalizeHost), and the checks every credential operation makes on
// its input. It is pure: plain functions over the records of package hub
// (credentials.go), which the service applies through its one commit path.
package credential
