// Package synth generates reproducible data for tests, demos and benchmarks:
// g50c-style Gaussians, clustered dense points, digit-like glyph images,
// sparse text-like vectors with a planted separator, and a two-class text
// stream. Everything is driven by an explicit seed; nothing here reads files.
package synth
