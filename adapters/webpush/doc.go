// Package webpush is the Hub's hub.Pusher: Web Push (RFC 8030) with the
// message encryption of RFC 8291 and the server identification of RFC
// 8292 (VAPID), on the standard library alone.
//
// Why not a library: the maintained Go one pulls a JWT package with a
// published vulnerability and buffers whole records; what Web Push needs
// is one ECDH, three HKDF expansions, one AES-GCM seal and one ES256
// signature, which crypto/ecdh, crypto/hkdf, crypto/aes and crypto/ecdsa
// do. The RFC 8291 example is reproduced byte for byte by a test.
//
// Keys. The Hub has one VAPID key pair for good (browsers bind every
// subscription to its public key): a P-256 key made on the first
// configured start and kept in KeyFile as a PKCS #8 PEM block, mode 0600.
// It is written to a fresh file beside KeyFile, synced, then linked into
// place — an atomic rename that never replaces a file, so two starts
// agree on one key and a crash leaves either no key file or a whole one.
// A key file open to group or others, not a regular file, owned by
// another user, or not holding exactly one P-256 key is an error at
// start: it is never replaced, since replacing it would silently
// invalidate every enrolled device.
//
// Contact. RFC 8292's "sub" claim is the operator's contact, a mailto:
// address or an https: URL. Without one the Pusher is unconfigured (no
// key is read or made; Push fails Unavailable). A contact the push
// services are known to refuse is refused at start (CheckContact):
// Apple's answers 403 BadJwtToken for a mailto: at localhost, .local or
// a bare host name, and for an https://localhost URL — which otherwise
// shows only as notifications never reaching iPhones.
//
// One message. Each Push encrypts with a fresh ephemeral key and salt
// (aes128gcm, one 4,096-byte record, so at most MaxPayload bytes of
// payload), signs or reuses a VAPID token for the push service's origin
// (exp 12 h ahead; a token is reused for an hour, as Apple asks not to
// renew more often), and POSTs it with TTL (always, even 0), Urgency and
// Topic. It follows no redirect, gives the service 10 s, reads at most
// 4 KiB of the answer and classifies the status: 2xx accepted, 404/410
// gone, 429/5xx retry (with Retry-After, capped at 300 s), other 4xx
// rejected; a 3xx or a transport failure is an error, the answer
// unknown.
//
// Secrets. The endpoint is a bearer capability and the keys and payload
// are the subscriber's: no error or log line carries them, nor the
// private key. The transport's own errors quote the URL, so they are
// reduced to a fixed vocabulary (refused, not resolved, untrusted
// certificate, timed out) before they leave the package.
package webpush
