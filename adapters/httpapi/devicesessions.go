package httpapi

import (
	"net/http"

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
// credentials (401).
func (a *api) handleLogin(w http.ResponseWriter, r *http.Request, _ caller) error {
	if !sameOrigin(r) {
		return hub.Errorf(hub.Forbidden, "cross-origin login rejected")
	}
	addr := a.clientAddr(r)
	if err := a.hub.CheckLoginRate(addr); err != nil {
		return err
	}
	var req loginRequest
	if err := decodeJSON(r, loginBodyLimit, false, &req); err != nil {
		return err
	}
	res, err := a.hub.Login(r.Context(), hub.LoginRequest{Name: req.Name, Password: req.Password,
		DeviceLabel: req.DeviceLabel, UserAgent: r.UserAgent(), ClientAddr: addr})
	if err != nil {
		return err
	}
	setDeviceSessionCookie(w, r, res.SessionID, int(a.hub.DeviceSessionLifetime().Seconds()))
	writeJSON(w, http.StatusOK, loginResponse{SessionID: res.SessionID, User: res.Session.User})
	return nil
}

// handleLogout revokes the bearer session. It is bearer-only: a cookie
// client signs out by revoking its current device session.
func (a *api) handleLogout(w http.ResponseWriter, r *http.Request, _ caller) error {
	token, ok := bearerToken(r)
	if !ok {
		return hub.Errorf(hub.Forbidden, "logout requires an active bearer session")
	}
	if err := a.hub.Logout(r.Context(), token); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, revocationResult{Revoked: true})
	return nil
}

func (a *api) handleListDeviceSessions(w http.ResponseWriter, r *http.Request, c caller) error {
	list, err := a.hub.DeviceSessions(r.Context(), c.DeviceSession)
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
	current, err := a.hub.RevokeDeviceSession(r.Context(), c.DeviceSession, r.PathValue("sessionHandle"))
	if err != nil {
		return err
	}
	if current && c.viaCookie {
		clearDeviceSessionCookie(w, r)
	}
	writeJSON(w, http.StatusOK, revocationResult{Revoked: true, Current: &current})
	return nil
}
