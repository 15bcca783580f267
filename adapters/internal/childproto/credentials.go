package childproto

// A running session's credentials folder, as the local backend makes it
// (its projection) and the session's own programs read it: the variable
// that names the folder, and the public halves of the workspace's signing
// key in it, by which the session tells its own signatures from others'.
// The folder holds no secret.
const (
	// CredentialsEnv names the variable holding the folder, for `wharf
	// git-credential`, `wharf gpg` and the session itself.
	CredentialsEnv = "WHARF_SESSION_CREDENTIALS"
	// SigningSSHKeyFile holds an SSH signing key's authorized_keys line.
	SigningSSHKeyFile = "signing.pub"
	// SigningOpenPGPKeyFile holds an OpenPGP signing key's armored public
	// key.
	SigningOpenPGPKeyFile = "signing.asc"
)
