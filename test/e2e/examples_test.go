// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e_test

import "path/filepath"

// The examples' configurations and the household model, as the demo and
// users run them.
var (
	weatherConfig      = filepath.Join("..", "..", "examples", "weather", "collector.yaml")
	householdConfig    = filepath.Join("..", "..", "examples", "household", "collector.yaml")
	riskEndpointConfig = filepath.Join("..", "..", "examples", "household", "risk-endpoint.yaml")
	householdModel     = filepath.Join("..", "..", "examples", "household", "model.json")
)
