package main

import (
	"github.com/spf13/pflag"

	"streamer/config"
	"streamer/ingest"
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

// given reports whether the user named a configuration: a file or a key.
func (c *configFlags) given() bool { return c.path != "" || len(c.overrides) > 0 }

// decoder returns the decoder of the configuration the user named.
func (c *configFlags) decoder() (ingest.Decoder, error) {
	cfg, err := c.load()
	if err != nil {
		return ingest.Decoder{}, err
	}
	return cfg.Decoder()
}
