package onlinetest

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"streamer/anngraph"
	"streamer/synth"
	"streamer/vector"
)

// AnnLaplacian returns the Laplacian of rows' kNN graph built by anngraph with cfg
// (MaxExamples set to the number of rows).
func AnnLaplacian(tb testing.TB, rows []vector.Vector, cfg anngraph.Config, lcfg anngraph.LaplacianConfig) *anngraph.Laplacian {
	tb.Helper()
	cfg.MaxExamples = len(rows)
	view, err := anngraph.Build(rows, cfg)
	if err != nil {
		tb.Fatal(err)
	}
	lap, err := view.Laplacian(lcfg)
	if err != nil {
		tb.Fatal(err)
	}
	return lap
}

// LabeledClusters draws c Gaussian clusters of n rows in dim dimensions
// and reveals the labels of a fraction of each class (at least two rows):
// the rows, the revealed labels ("" for the others) and every row's class.
func LabeledClusters(n, dim, c int, labeledFrac float64, seed uint64) (rows []vector.Vector, labels, truth []string) {
	xs, cs := synth.Clusters(synth.ClusterConfig{Points: n, Dim: dim, Clusters: c, Spread: 0.6, Seed: seed})
	truth = make([]string, n)
	labels = make([]string, n)
	perClass := map[int]int{}
	r := rand.New(rand.NewPCG(seed, 7))
	for i, k := range cs {
		truth[i] = fmt.Sprint(k)
		if perClass[k] < 2 || r.Float64() < labeledFrac {
			labels[i] = truth[i]
			perClass[k]++
		}
	}
	return xs, labels, truth
}

// DenseMultiClass returns n dense rows of dim features in classes classes
// (three Gaussian clusters per class), with a fraction labeled of the
// labels revealed ("" for the others), and every row's true class.
func DenseMultiClass(seed uint64, n, dim, classes int, labeled float64) (rows []vector.Vector, labels, truth []string) {
	xs, cs := synth.Clusters(synth.ClusterConfig{Points: n, Dim: dim, Clusters: 3 * classes, Spread: 0.6, Seed: seed})
	r := rand.New(rand.NewPCG(seed, 17))
	labels, truth = make([]string, n), make([]string, n)
	for i, c := range cs {
		truth[i] = fmt.Sprintf("c%d", c%classes)
		if r.Float64() < labeled {
			labels[i] = truth[i]
		}
	}
	return xs, labels, truth
}
