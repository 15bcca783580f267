package pushservice

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// refuse answers a push status and records why.
func (s *Service) refuse(w http.ResponseWriter, id string, status int, reason string) {
	s.mu.Lock()
	s.failures = append(s.failures, Failure{Subscription: id, Status: status, Reason: reason, At: s.clock.Now()})
	s.recordLocked()
	s.mu.Unlock()
	http.Error(w, reason, status)
}

// serve checks one push, records it and answers it: a refusal, or the
// subscription's Reply once the push is recorded as a Message.
func (s *Service) serve(w http.ResponseWriter, r *http.Request) {
	id, ok := strings.CutPrefix(r.URL.Path, "/push/")
	s.mu.Lock()
	sub, public := s.subs[id], s.public
	s.mu.Unlock()
	if !ok || sub == nil {
		s.refuse(w, id, http.StatusNotFound, "no such subscription")
		return
	}
	if r.Method != http.MethodPost {
		s.refuse(w, id, http.StatusMethodNotAllowed, "a push is a POST")
		return
	}
	now := s.clock.Now()
	claims, err := verifyVAPID(r.Header.Get("Authorization"), public, "https://"+s.Host(), now)
	if err != nil {
		s.refuse(w, id, http.StatusForbidden, err.Error())
		return
	}
	msg, reason := readHeaders(r.Header)
	if reason != "" {
		s.refuse(w, id, http.StatusBadRequest, reason)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	switch {
	case err != nil:
		s.refuse(w, id, http.StatusBadRequest, "the body could not be read")
		return
	case len(body) > maxBody:
		s.refuse(w, id, http.StatusRequestEntityTooLarge, "the body is larger than 4096 bytes")
		return
	}
	payload, err := Decrypt(sub.key, sub.auth, body)
	if err != nil {
		s.refuse(w, id, http.StatusBadRequest, "the body does not decrypt: "+err.Error())
		return
	}

	s.mu.Lock()
	reply, release := sub.reply, s.release
	if reply.Status == 0 {
		reply.Status = http.StatusCreated
	}
	msg.Subscription, msg.Payload, msg.Body = id, payload, body
	msg.Claims, msg.Status, msg.At = claims, reply.Status, now
	s.messages = append(s.messages, msg)
	s.recordLocked()
	s.mu.Unlock()

	if reply.Hang {
		select {
		case <-release:
		case <-s.closed:
			return
		case <-r.Context().Done():
			return
		}
	}
	answer(w, r, reply)
}

// readHeaders reads a push's TTL, Urgency and Topic and checks its
// content headers; reason says what is wrong.
func readHeaders(h http.Header) (msg Message, reason string) {
	ttl := h.Get("TTL")
	secs, err := strconv.ParseUint(ttl, 10, 32)
	if err != nil || strings.Trim(ttl, "0123456789") != "" {
		return msg, "TTL is missing or not a number of seconds"
	}
	msg.TTL = time.Duration(secs) * time.Second
	msg.Urgency = h.Get("Urgency")
	switch msg.Urgency {
	case "", "very-low", "low", "normal", "high":
	default:
		return msg, "Urgency is not very-low, low, normal or high"
	}
	msg.Topic = h.Get("Topic")
	if len(msg.Topic) > 32 || strings.Trim(msg.Topic, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") != "" {
		return msg, "Topic is not at most 32 base64url characters"
	}
	if h.Get("Content-Encoding") != "aes128gcm" {
		return msg, "Content-Encoding is not aes128gcm"
	}
	if h.Get("Content-Type") != "application/octet-stream" {
		return msg, "Content-Type is not application/octet-stream"
	}
	return msg, ""
}

// answer writes reply.
func answer(w http.ResponseWriter, r *http.Request, reply Reply) {
	if reply.RetryAfter != "" {
		w.Header().Set("Retry-After", reply.RetryAfter)
	}
	if reply.Location != "" {
		w.Header().Set("Location", reply.Location)
	}
	w.WriteHeader(reply.Status)
	_, _ = w.Write(reply.Body)
	if !reply.EndlessBody {
		return
	}
	chunk := bytes.Repeat([]byte("x"), 32<<10)
	rc := http.NewResponseController(w)
	for range (64 << 20) / len(chunk) {
		if r.Context().Err() != nil {
			return
		}
		if _, err := w.Write(chunk); err != nil {
			return
		}
		if rc.Flush() != nil {
			return
		}
	}
}
