// SPDX-License-Identifier: Apache-2.0

package riskendpoint

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// A rescale of a tier moves conversations from one member to another. The
// new holder's processor asks its peers, through this extension, to hand
// the group over: POST /v1/groups/{group}/handover, naming the processor
// and the fingerprint of its configuration. The member that holds it gives
// it up as bytes (the processor's saved form of a group) and forgets it.

// handOverSuffix ends a hand-over's URL, after the group key.
const handOverSuffix = "/handover"

// The hand-over request's headers.
const (
	processorHeader   = "X-Agentguard-Processor"
	fingerprintHeader = "X-Agentguard-Fingerprint"
)

// HandOverer is a Decider that can give up a group to another member of
// the tier.
type HandOverer interface {
	// HandOver returns group's saved form and forgets it; found is false
	// when it does not hold the group. The error says the state cannot be
	// handed over (another configuration) or ctx ended.
	HandOver(ctx context.Context, group, fingerprint string) (saved []byte, found bool, err error)
}

// Tier is what the extension offers a processor in a tier (Config.Peers):
// taking over a group another member holds.
type Tier interface {
	// InTier reports whether peers are configured.
	InTier() bool
	// TakeOver asks every peer at once to hand over processor's group, saved
	// under fingerprint; the one that holds it answers. found is false when
	// none does; err lists the peers that gave no answer.
	TakeOver(ctx context.Context, processor, group, fingerprint string) (saved []byte, found bool, err error)
}

// InTier reports whether peers are configured.
func (e *endpoint) InTier() bool { return len(e.cfg.Peers) > 0 }

// TakeOver asks the peers for a group.
func (e *endpoint) TakeOver(ctx context.Context, processor, group, fingerprint string) ([]byte, bool, error) {
	saved, found, failed := firstHolder(e.cfg.Peers, func(peer string) ([]byte, bool, error) {
		saved, err := e.askHandOver(ctx, peer, processor, group, fingerprint)
		return saved, saved != nil, err
	})
	if found || len(failed) == 0 {
		return saved, found, nil
	}
	return nil, false, errors.New(strings.Join(failed, "; "))
}

// askHandOver asks one peer; nil saved and no error: it does not hold the
// group.
func (e *endpoint) askHandOver(ctx context.Context, peer, processor, group, fingerprint string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, peerURL(peer, group, handOverSuffix), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set(processorHeader, processor)
	req.Header.Set(fingerprintHeader, fingerprint)
	req.Header.Set(forwardedHeader, "1")
	resp, err := e.peerClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	switch {
	case err != nil:
		return nil, err
	case resp.StatusCode == http.StatusNotFound:
		return nil, nil
	case resp.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("answered %d: %s", resp.StatusCode, bytes.TrimSpace(body[:min(len(body), 512)]))
	}
	return body, nil
}

// serveHandOver gives up a group the named processor holds.
func (e *endpoint) serveHandOver(w http.ResponseWriter, r *http.Request, group string) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		reply(w, http.StatusMethodNotAllowed, problem{fmt.Sprintf("method %s: a hand-over is asked with POST", r.Method)})
		return
	}
	name := r.Header.Get(processorHeader)
	h, ok := e.deciders.get(name).(HandOverer)
	switch {
	case !ok && e.ready.Load():
		reply(w, http.StatusNotFound, problem{fmt.Sprintf("no processor %q runs here", name)})
		return
	case !ok:
		// Not "not held": the pipelines are starting (the processor may
		// be restoring the group) or stopping; the asker marks what it
		// starts partial.
		reply(w, http.StatusServiceUnavailable, problem{fmt.Sprintf("no processor %q here hands groups over now (the collector is starting or stopping)", name)})
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), e.cfg.MaxWait)
	defer cancel()
	saved, found, err := h.HandOver(ctx, group, r.Header.Get(fingerprintHeader))
	switch {
	case err != nil:
		reply(w, http.StatusConflict, problem{err.Error()})
	case !found:
		reply(w, http.StatusNotFound, problem{fmt.Sprintf("group %q is not held by %s here", group, name)})
	default:
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Cache-Control", "no-store")
		_, _ = w.Write(saved)
	}
}

// ProcessorTier is the tier as one processor takes groups over from it.
type ProcessorTier struct {
	tier      Tier
	processor string
}

// TierFor is the tier of the extension ext as the processor of that
// component ID takes groups over from it; ok is false when ext has no peers.
func TierFor(ext any, processor string) (ProcessorTier, bool) {
	t, ok := ext.(Tier)
	if !ok || !t.InTier() {
		return ProcessorTier{}, false
	}
	return ProcessorTier{tier: t, processor: processor}, true
}

// TakeOver asks the peers for the processor's group.
func (t ProcessorTier) TakeOver(ctx context.Context, group, fingerprint string) ([]byte, bool, error) {
	return t.tier.TakeOver(ctx, t.processor, group, fingerprint)
}
