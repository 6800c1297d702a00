// Package service runs the streaming job: it consumes examples and labels,
// scores every example with the model in force, feeds the learner's window,
// re-solves in the background, publishes predictions and snapshots, and
// restores itself from its newest snapshot. Its HTTP listener also scores
// examples on request (POST /v1/predict), with the same decoder and model,
// learning nothing from them. It is the only package that wires
// ingest, online, snapshot and publish together.
package service
