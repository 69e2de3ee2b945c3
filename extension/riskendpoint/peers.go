// SPDX-License-Identifier: Apache-2.0

package riskendpoint

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
)

// In a tier behind a load-balancing router, a conversation's spans go to
// one collector, chosen by a hash of its key over the tier's members; an
// agent's hook may ask any of them. A collector that does not hold the
// group asks its peers (the other members' decisions endpoints), once, and
// answers with the one that holds it: the hook needs no hash and no member
// list, and a rescale changes nothing for it. A forwarded question carries
// forwardedHeader, so that it is never forwarded again.

// forwardedHeader marks a question a peer forwarded.
const forwardedHeader = "X-Agentguard-Forwarded"

// askPeers asks every peer the question (its body as received) within
// ctx, and returns the first answer that holds the group as soon as it
// comes (the caller's cancel stops the others); found is false when none
// does. failed lists the peers that gave no answer: one of them may hold
// the group.
func (e *endpoint) askPeers(ctx context.Context, group string, body []byte) (resp DecisionResponse, found bool, failed []string) {
	return firstHolder(e.cfg.Peers, func(peer string) (DecisionResponse, bool, error) {
		r, err := e.askPeer(ctx, peer, group, body)
		return r, r.Group != nil, err
	})
}

// firstHolder asks every peer at once and returns the first answer from one
// that holds what was asked about, as soon as it comes; found is false when
// none does. failed lists the peers that gave no answer ("peer: error"):
// one of them may hold it.
func firstHolder[T any](peers []string, ask func(peer string) (answer T, holds bool, err error)) (answer T, found bool, failed []string) {
	type peerAnswer struct {
		peer   string
		answer T
		holds  bool
		err    error
	}
	answers := make(chan peerAnswer, len(peers))
	var wg sync.WaitGroup
	for _, peer := range peers {
		wg.Go(func() {
			a, holds, err := ask(peer)
			answers <- peerAnswer{peer, a, holds, err}
		})
	}
	go func() { wg.Wait(); close(answers) }()
	for a := range answers {
		switch {
		case a.err != nil:
			failed = append(failed, fmt.Sprintf("%s: %v", a.peer, a.err))
		case a.holds:
			return a.answer, true, nil
		}
	}
	return answer, false, failed
}

// peerURL is the URL of one of a group's resources (suffix) at a peer.
func peerURL(peer, group, suffix string) string {
	return strings.TrimRight(peer, "/") + groupsPath + url.PathEscape(group) + suffix
}

// askPeer posts the question to one peer.
func (e *endpoint) askPeer(ctx context.Context, peer, group string, body []byte) (DecisionResponse, error) {
	var d DecisionResponse
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, peerURL(peer, group, decisionsSuffix), bytes.NewReader(body))
	if err != nil {
		return d, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(forwardedHeader, "1")
	resp, err := e.peerClient.Do(req)
	if err != nil {
		return d, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return d, fmt.Errorf("answered %d: %s", resp.StatusCode, bytes.TrimSpace(msg))
	}
	return d, json.NewDecoder(resp.Body).Decode(&d)
}
