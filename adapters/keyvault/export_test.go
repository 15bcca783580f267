package keyvault

// OpenSealed opens a sealed blob of any kind with v's Hub key, for the
// tests that look inside one.
func OpenSealed(v *Vault, blob []byte) ([]byte, error) {
	k, _, err := splitSealed(blob)
	if err != nil {
		return nil, err
	}
	return v.open(k, blob)
}
