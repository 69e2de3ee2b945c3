// SPDX-License-Identifier: Apache-2.0

package verdictlogs

import (
	"path/filepath"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/agentguard/agentguard/connector/verdictlogs/internal/metadata"
	"github.com/agentguard/agentguard/internal/verdictattr"
)

func TestLoadConfig(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		id      component.ID
		want    *Config
		wantErr string
	}{
		{id: component.NewID(metadata.Type), want: createDefaultConfig()},
		{id: component.NewIDWithName(metadata.Type, "violations"), want: &Config{Checks: []string{verdictattr.CheckTemporal}, Passes: false}},
		{id: component.NewIDWithName(metadata.Type, "unknown_check"), wantErr: `checks: unknown check "spellcheck": valid values are "temporalcheck" and "probguard"`},
		{id: component.NewIDWithName(metadata.Type, "no_checks"), wantErr: "checks: at least one check is required"},
	} {
		t.Run(tc.id.String(), func(t *testing.T) {
			cfg := NewFactory().CreateDefaultConfig()
			sub, err := cm.Sub(tc.id.String())
			if err != nil {
				t.Fatal(err)
			}
			if err := sub.Unmarshal(cfg); err != nil {
				t.Fatal(err)
			}
			err = confmap.Validate(cfg)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := cfg.(*Config)
			if strings.Join(got.Checks, ",") != strings.Join(tc.want.Checks, ",") || got.Passes != tc.want.Passes {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestConfigStruct(t *testing.T) {
	if err := componenttest.CheckConfigStruct(NewFactory().CreateDefaultConfig()); err != nil {
		t.Fatal(err)
	}
}
