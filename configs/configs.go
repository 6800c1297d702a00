package configs

import (
	_ "embed"
	"slices"
)

//go:embed streamer.yaml
var defaultYAML []byte

// Default returns the contents of streamer.yaml.
func Default() []byte { return slices.Clone(defaultYAML) }
