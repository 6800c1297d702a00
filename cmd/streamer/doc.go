// Command streamer classifies a Kafka stream in real time while it learns
// from the few labels that arrive late. Its subcommands run the service, an
// embedded broker and a demo; fit, apply and evaluate models offline;
// generate data; pin and inspect model versions; replay topics; and measure
// the solver, the graph and the running service. This package only wires
// flags and configuration to the packages that do the work.
package main
