package httpapi

import (
	"net/http"
	"strconv"
	"time"

	"github.com/wharfhub/wharf/adapters/internal/httpjson"
	"github.com/wharfhub/wharf/hub"
)

type loginRequest struct {
	Name        string `json:"name"`
	Password    string `json:"password"`
	DeviceLabel string `json:"deviceLabel"`
}

type loginResponse struct {
	SessionID string `json:"sessionId"`
	User      string `json:"user"`
}

type revocationResult struct {
	Revoked bool  `json:"revoked"`
	Current *bool `json:"current,omitempty"`
}

type deviceSession struct {
	Handle      string `json:"handle"`
	DeviceLabel string `json:"deviceLabel"`
	IssuedAt    int64  `json:"issuedAt"` // epoch seconds, as existing clients expect
	Current     bool   `json:"current"`
}

type deviceSessionList struct {
	Sessions []deviceSession `json:"sessions"`
}

// handleLogin checks, in the spec's order: origin (403), the address's
// failure budget (429, before the body is read), the body (400), then the
// other limits (429) and the credentials (401). The device cookie, when
// the request carries one, tells the core the device is known; a success
// sets the session cookie and a fresh device cookie. A 429 says how long
// to wait in Retry-After when the core knows.
func (a *api) handleLogin(w http.ResponseWriter, r *http.Request, _ caller) error {
	if !a.sameOrigin(r) {
		return hub.Errorf(hub.Forbidden, "cross-origin login rejected")
	}
	addr := a.clientAddr(r)
	if err := a.auth.CheckLoginRate(addr); err != nil {
		setRetryAfter(w, err)
		return err
	}
	var req loginRequest
	if err := httpjson.Decode(r, loginBodyLimit, false, &req); err != nil {
		return err
	}
	res, err := a.auth.Login(r.Context(), hub.LoginRequest{Name: req.Name, Password: req.Password,
		DeviceLabel: req.DeviceLabel, UserAgent: r.UserAgent(), ClientAddr: addr, DeviceToken: a.deviceCookie(r)})
	if err != nil {
		setRetryAfter(w, err)
		return err
	}
	a.setDeviceSessionCookie(w, r, res.SessionID, int(a.auth.DeviceSessionLifetime().Seconds()))
	if res.DeviceToken != "" {
		a.setDeviceCookie(w, r, res.DeviceToken, int(a.auth.DeviceTokenLifetime().Seconds()))
	}
	writeJSON(w, http.StatusOK, loginResponse{SessionID: res.SessionID, User: res.Session.User})
	return nil
}

// setRetryAfter sets Retry-After, in whole seconds rounded up, on the
// answer to a refused login whose wait the core knows.
func setRetryAfter(w http.ResponseWriter, err error) {
	if d := hub.RetryAfter(err); d > 0 {
		w.Header().Set("Retry-After", strconv.FormatInt(int64((d+time.Second-1)/time.Second), 10))
	}
}

// handleLogout revokes the bearer session. It is bearer-only: a cookie
// client signs out by revoking its current device session.
func (a *api) handleLogout(w http.ResponseWriter, r *http.Request, _ caller) error {
	token, ok := bearerToken(r)
	if !ok {
		return hub.Errorf(hub.Forbidden, "logout requires an active bearer session")
	}
	if err := a.auth.Logout(r.Context(), token); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, revocationResult{Revoked: true})
	return nil
}

func (a *api) handleListDeviceSessions(w http.ResponseWriter, r *http.Request, c caller) error {
	list, err := a.auth.DeviceSessions(r.Context(), c.DeviceSession)
	if err != nil {
		return err
	}
	out := deviceSessionList{Sessions: make([]deviceSession, 0, len(list))}
	for _, s := range list {
		out.Sessions = append(out.Sessions, deviceSession{Handle: s.Handle, DeviceLabel: s.DeviceLabel,
			IssuedAt: s.IssuedAt.Unix(), Current: s.Current})
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// handleRevokeDeviceSession revokes one of the caller's device sessions; revoking
// its own session over the cookie also clears the cookie.
func (a *api) handleRevokeDeviceSession(w http.ResponseWriter, r *http.Request, c caller) error {
	current, err := a.auth.RevokeDeviceSession(r.Context(), c.DeviceSession, r.PathValue("sessionHandle"))
	if err != nil {
		return err
	}
	if current && c.viaCookie {
		a.clearDeviceSessionCookie(w, r)
	}
	writeJSON(w, http.StatusOK, revocationResult{Revoked: true, Current: &current})
	return nil
}
