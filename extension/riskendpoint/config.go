// SPDX-License-Identifier: Apache-2.0

package riskendpoint

import (
	"errors"
	"fmt"
	"net/url"
	"time"

	"go.opentelemetry.io/collector/config/confighttp"
)

// Config of the riskendpoint extension: an HTTP server, with everything
// confighttp offers (TLS, the collector's auth extensions, CORS, timeouts).
type Config struct {
	confighttp.ServerConfig `mapstructure:",squash"`
	// MaxWait bounds how long a decision waits for each processor's answer
	// (default 200ms); past it the answer is stale.
	MaxWait time.Duration `mapstructure:"max_wait"`
	// OnStale is the decision a stale answer gives: allow (default: an agent
	// is not stopped by a slow collector) or deny.
	OnStale string `mapstructure:"on_stale"`
	// OnUnknown is the decision for a group no processor holds (never seen,
	// or ended): allow (default) or deny.
	OnUnknown string `mapstructure:"on_unknown"`
	// Peers are the base URLs of the decisions endpoints of the other
	// collectors of a tier: a question about a group no processor here
	// holds is asked of them, within max_wait, and answered by the one that
	// holds it (peers.go).
	Peers []string `mapstructure:"peers"`
}

// defaultEndpoint is loopback only: the agents asking usually run beside
// the collector, and a wider listener should be a choice, with TLS and auth.
const defaultEndpoint = "localhost:4320"

// defaultMaxBody caps a request body: a question is one action, a few KB.
const defaultMaxBody = 64 << 10

func createDefaultConfig() *Config {
	server := confighttp.NewDefaultServerConfig()
	server.NetAddr.Endpoint = defaultEndpoint
	server.MaxRequestBodySize = defaultMaxBody
	return &Config{ServerConfig: server, MaxWait: 200 * time.Millisecond, OnStale: Allow, OnUnknown: Allow}
}

// Validate checks what the server needs before it can listen.
func (c *Config) Validate() error {
	var errs []error
	if c.NetAddr.Endpoint == "" {
		errs = append(errs, errors.New("endpoint: required (host:port to listen on, e.g. "+defaultEndpoint+")"))
	}
	if c.MaxWait <= 0 {
		errs = append(errs, fmt.Errorf("max_wait: must be a positive duration, got %v", c.MaxWait))
	}
	for i, p := range c.Peers {
		if u, err := url.Parse(p); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, fmt.Errorf("peers[%d]: %q is not a base URL (http://host:port)", i, p))
		}
	}
	for field, v := range map[string]string{"on_stale": c.OnStale, "on_unknown": c.OnUnknown} {
		if v != Allow && v != Deny {
			errs = append(errs, fmt.Errorf("%s: unknown value %q: valid values are %q and %q", field, v, Allow, Deny))
		}
	}
	return errors.Join(errs...)
}
