// SPDX-License-Identifier: Apache-2.0

package riskendpoint

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.opentelemetry.io/collector/extension/extensioncapabilities"
	"go.uber.org/zap"

	"github.com/agentguard/agentguard/internal/core/guard"
)

// groupsPath is the prefix of a group's URL; the rest of the path is the
// group key, percent-encoded as needed.
const groupsPath = "/v1/groups/"

// endpoint is the extension: the board probguard publishes to, and the
// server that reads it.
type endpoint struct {
	*board
	deciders
	followers
	cfg     *Config
	set     component.TelemetrySettings
	server  *http.Server
	stopped chan struct{}
	// peerClient asks the peers (Config.Peers).
	peerClient *http.Client
	// ready: the collector's pipelines run (extensioncapabilities.PipelineWatcher),
	// so every processor that answers here has registered.
	ready atomic.Bool
}

var (
	_ Board       = (*endpoint)(nil)
	_ Registry    = (*endpoint)(nil)
	_ DecisionLog = (*endpoint)(nil)

	_ extensioncapabilities.PipelineWatcher = (*endpoint)(nil)
)

// Ready is called once the pipelines run: a processor not registered by
// then does not run here.
func (e *endpoint) Ready() error {
	e.ready.Store(true)
	return nil
}

// NotReady is called before the pipelines stop.
func (e *endpoint) NotReady() error {
	e.ready.Store(false)
	return nil
}

func newEndpoint(cfg *Config, set component.TelemetrySettings) *endpoint {
	return &endpoint{board: newBoard(), cfg: cfg, set: set, peerClient: &http.Client{}}
}

// Start listens (a port in use fails the start) and serves.
func (e *endpoint) Start(ctx context.Context, host component.Host) error {
	ln, err := e.cfg.ToListener(ctx)
	if err != nil {
		return fmt.Errorf("endpoint %s: %w", e.cfg.NetAddr.Endpoint, err)
	}
	e.server, err = e.cfg.ToServer(ctx, host.GetExtensions(), e.set, http.HandlerFunc(e.serveHTTP))
	if err != nil {
		_ = ln.Close()
		return err
	}
	e.set.Logger.Info("serving probguard's decisions", zap.String("endpoint", ln.Addr().String()))
	e.stopped = make(chan struct{})
	go func() {
		defer close(e.stopped)
		if err := e.server.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			componentstatus.ReportStatus(host, componentstatus.NewFatalErrorEvent(err))
		}
	}()
	return nil
}

// Shutdown stops the server; requests in flight are cut.
func (e *endpoint) Shutdown(context.Context) error {
	if e.server == nil {
		return nil
	}
	err := e.server.Close()
	<-e.stopped
	return err
}

// Response is what GET /v1/groups/{group} returns: the alert, and which
// span it was decided at and when, so that an agent can tell whether it
// covers its latest action.
type Response struct {
	guard.Alert
	TraceID   string    `json:"trace_id"`
	SpanID    string    `json:"span_id"`
	DecidedAt time.Time `json:"decided_at"`
	// History is absent for a complete history, else why the decision may
	// rest on an incomplete one: partial (its beginning may be missing) or
	// out_of_order, as agentguard.history on the spans.
	History string `json:"history,omitempty"`
}

// problem is the body of every refusal.
type problem struct {
	Error string `json:"error"`
}

func (e *endpoint) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if group, ok := decisionGroup(r.URL); ok {
		e.serveDecision(w, r, group)
		return
	}
	if group, ok := groupBefore(r.URL, handOverSuffix); ok {
		e.serveHandOver(w, r, group)
		return
	}
	group, ok := strings.CutPrefix(r.URL.Path, groupsPath)
	switch {
	case !ok:
		reply(w, http.StatusNotFound, problem{fmt.Sprintf("no such path %q: ask GET %s{group} or POST %s{group}%s", r.URL.Path, groupsPath, groupsPath, decisionsSuffix)})
		return
	case r.Method != http.MethodGet:
		w.Header().Set("Allow", http.MethodGet)
		reply(w, http.StatusMethodNotAllowed, problem{fmt.Sprintf("method %s: only GET is served", r.Method)})
		return
	case group == "":
		reply(w, http.StatusBadRequest, problem{"group key missing: ask GET " + groupsPath + "{group}"})
		return
	}
	d, open := e.latest(group)
	switch {
	case !open:
		reply(w, http.StatusNotFound, problem{fmt.Sprintf("group %q is not open: probguard has not seen it, or it ended", group)})
	case d == nil:
		reply(w, http.StatusNotFound, problem{fmt.Sprintf("group %q has no scored event yet", group)})
	default:
		reply(w, http.StatusOK, Response{
			Alert:   d.Guard.Alert(d.Decision, d.Group, d.Event),
			TraceID: d.TraceID.String(), SpanID: d.SpanID.String(), DecidedAt: d.At.UTC(), History: d.History,
		})
	}
}

// decisionGroup is the group of a decision's URL, read from the path as
// sent, so that a key's own percent-encoded slashes are not taken for the
// path's: /v1/groups/a%2Fdecisions is group "a/decisions", a GET.
func decisionGroup(u *url.URL) (string, bool) { return groupBefore(u, decisionsSuffix) }

// groupBefore is the group of a URL /v1/groups/{group}{suffix}.
func groupBefore(u *url.URL, suffix string) (string, bool) {
	raw, ok := strings.CutPrefix(u.EscapedPath(), groupsPath)
	if !ok {
		return "", false
	}
	raw, ok = strings.CutSuffix(raw, suffix)
	if !ok || raw == "" {
		return "", false
	}
	group, err := url.PathUnescape(raw)
	return group, err == nil
}

func reply(w http.ResponseWriter, status int, body any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false) // "P(stay safe) = 0.54 < 0.7", not \u003c
	_ = enc.Encode(body)
}
