package httpapi

// Body size limits. The spec leaves the bound behind 413 open; these are
// generous for every documented request.
const (
	defaultBodyLimit = 64 << 10
	loginBodyLimit   = 16 << 10
)
