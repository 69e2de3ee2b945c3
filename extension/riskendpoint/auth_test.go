// SPDX-License-Identifier: Apache-2.0

package riskendpoint

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/bearertokenauthextension"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/extension"
	"go.opentelemetry.io/collector/extension/extensiontest"
)

// The endpoint exposes conversations' state: with auth naming one of the
// collector's auth extensions (here the distribution's bearertokenauth),
// a question without the token is refused before anything reads it, and
// one with it is answered.
func TestAuthExtensionGuardsTheEndpoint(t *testing.T) {
	authID := component.MustNewID("bearertokenauth")
	af := bearertokenauthextension.NewFactory()
	acfg := af.CreateDefaultConfig()
	if err := confmap.NewFromStringMap(map[string]any{"token": "s3cret"}).Unmarshal(acfg); err != nil {
		t.Fatal(err)
	}
	auth, err := af.Create(context.Background(), extensiontest.NewNopSettings(af.Type()), acfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := auth.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	defer auth.Shutdown(context.Background())

	var addr string
	var ext extension.Extension
	onFreePorts(t, 1, func(addrs []string) error {
		addr = addrs[0]
		cfg := createDefaultConfig()
		if err := confmap.NewFromStringMap(map[string]any{"endpoint": addr, "auth": map[string]any{"authenticator": "bearertokenauth"}}).Unmarshal(cfg); err != nil {
			t.Fatal(err)
		}
		var err error
		ext, err = startConfigured(t, cfg, hostOf{authID: auth})
		return err
	})
	d := &recordingDecider{open: true}
	defer ext.(*endpoint).Register("temporalcheck", d)()

	for token, want := range map[string]int{"": http.StatusUnauthorized, "Bearer wrong": http.StatusUnauthorized, "Bearer s3cret": http.StatusOK} {
		req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/v1/groups/g/decisions", strings.NewReader(`{"action": {"tool": "x"}}`))
		if token != "" {
			req.Header.Set("Authorization", token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("Authorization %q: %d, want %d", token, resp.StatusCode, want)
		}
	}
	if len(d.groups) != 1 {
		t.Errorf("%d questions reached the processor, want the authorised one only", len(d.groups))
	}
}

// hostOf is a host running the given extensions.
type hostOf map[component.ID]component.Component

func (h hostOf) GetExtensions() map[component.ID]component.Component { return h }
