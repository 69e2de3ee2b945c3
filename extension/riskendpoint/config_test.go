// SPDX-License-Identifier: Apache-2.0

package riskendpoint

import (
	"path/filepath"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/agentguard/agentguard/extension/riskendpoint/internal/metadata"
)

func loadConfig(t *testing.T, name string) *Config {
	t.Helper()
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	sub, err := cm.Sub(component.NewIDWithName(metadata.Type, name).String())
	if err != nil {
		t.Fatal(err)
	}
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	if err := sub.Unmarshal(cfg); err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestConfig(t *testing.T) {
	if cfg := loadConfig(t, ""); cfg.NetAddr.Endpoint != defaultEndpoint || cfg.Validate() != nil {
		t.Errorf("default: endpoint %q, %v", cfg.NetAddr.Endpoint, cfg.Validate())
	}
	cfg := loadConfig(t, "tls")
	if cfg.NetAddr.Endpoint != "0.0.0.0:4443" || !cfg.TLS.HasValue() || cfg.TLS.Get().CertFile != "server.crt" {
		t.Errorf("tls: %+v", cfg.ServerConfig)
	}
	if !cfg.Auth.HasValue() || cfg.Auth.Get().Config.AuthenticatorID.String() != "bearertokenauth" {
		t.Errorf("auth: %+v", cfg.Auth)
	}
	if err := loadConfig(t, "empty").Validate(); err == nil || !strings.Contains(err.Error(), "endpoint: required") {
		t.Errorf("empty endpoint: %v", err)
	}
}
