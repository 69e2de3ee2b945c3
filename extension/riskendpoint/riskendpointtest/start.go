// SPDX-License-Identifier: Apache-2.0

// Package riskendpointtest runs a riskendpoint extension for the tests of
// the processors that publish and answer there.
package riskendpointtest

import (
	"context"
	"net"
	"testing"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/extension"
	"go.opentelemetry.io/collector/extension/extensiontest"

	"github.com/agentguard/agentguard/extension/riskendpoint"
)

// Start runs a riskendpoint extension with its default configuration on a
// free loopback port until the test ends, and returns it with its base URL.
func Start(t testing.TB) (extension.Extension, string) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	f := riskendpoint.NewFactory()
	cfg := f.CreateDefaultConfig().(*riskendpoint.Config)
	cfg.NetAddr.Endpoint = addr
	ext, err := f.Create(context.Background(), extensiontest.NewNopSettings(f.Type()), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := ext.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ext.Shutdown(context.Background()) })
	return ext, "http://" + addr
}

// Host is a host running the given extensions.
type Host map[component.ID]component.Component

// GetExtensions returns the extensions.
func (h Host) GetExtensions() map[component.ID]component.Component { return h }
