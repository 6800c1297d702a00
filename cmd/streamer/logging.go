package main

import (
	"io"
	"log/slog"

	"streamer/config"
)

// newLogger returns the service's structured logger.
func newLogger(w io.Writer, cfg config.LogConfig) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(cfg.Level))
	opts := &slog.HandlerOptions{Level: level}
	if cfg.Format == "text" {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}
