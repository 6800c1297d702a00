// Package active chooses which examples of the window to ask labelers
// about (active learning on a stream): those whose labels would teach the
// model most, by the margin between the top two classes of the blended
// prediction, weighted by the unlabeled rows a label would reach over the
// window's kNN graph and by how many edges the row is from any labeled or
// requested one, classes of one or two labels first. Where the graph does
// not carry the labels (text), the margin alone ranks every row of the
// window, weighted by how typical of the window the row is (information
// density), so that outliers are not asked about, and by how unlike it is
// to every labeled or requested row, so that the requests spread. Before
// any model the graph alone chooses: dense rows far from every label
// first, so that the requests cover the stream. A share of the budget is
// drawn at random, so that the answers to those requests estimate
// accuracy without the bias of hard examples.
//
// A Selector keeps the budget (raised for a while when drift is seen
// without labels), the requests it made (never an id twice, never a
// labeled one) and their expiry, and counts the answers. It knows the
// window only as a Pool of rows (ids, labels, neighbour lists, class
// distributions, densities, how alike two rows are); it knows nothing of
// models, solvers, vectors or Kafka.
package active
