package riskendpoint

import (
	"errors"

	"go.opentelemetry.io/collector/config/confighttp"
)

// Config of the riskendpoint extension: an HTTP server, with everything
// confighttp offers (TLS, the collector's auth extensions, CORS, timeouts).
type Config struct {
	confighttp.ServerConfig `mapstructure:",squash"`
}

// defaultEndpoint is loopback only: the agents asking usually run beside
// the collector, and a wider listener should be a choice, with TLS and auth.
const defaultEndpoint = "localhost:4320"

func createDefaultConfig() *Config {
	server := confighttp.NewDefaultServerConfig()
	server.NetAddr.Endpoint = defaultEndpoint
	return &Config{ServerConfig: server}
}

// Validate checks what the server needs before it can listen.
func (c *Config) Validate() error {
	if c.NetAddr.Endpoint == "" {
		return errors.New("endpoint: required (host:port to listen on, e.g. " + defaultEndpoint + ")")
	}
	return nil
}
