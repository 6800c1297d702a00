package main

import (
	"github.com/spf13/pflag"

	"streamer/config"
)

// configFlags are the --config and --set flags of the commands that read
// the service's configuration.
type configFlags struct {
	path      string
	overrides []string
}

func (c *configFlags) register(f *pflag.FlagSet) {
	f.StringVar(&c.path, "config", "", "configuration file (configs/streamer.yaml documents the keys)")
	f.StringArrayVar(&c.overrides, "set", nil, "override a configuration key: --set key=value (repeatable)")
}

// load reads the configuration: the defaults, the file, the environment,
// then base (the command's own settings) and the user's --set flags.
func (c *configFlags) load(base ...string) (config.Config, error) {
	return config.Load(c.path, append(base, c.overrides...))
}
