// Package kernel holds the Nyström feature map of the Gaussian kernel
// (Map): the landmarks, the factorization that makes a linear model over
// the map a kernel machine, the index that gives a sparse row's products
// with the landmarks, and the folding of weights over the map back to the
// landmarks' kernel values (Fold), which scoring reads.
//
// It knows nothing of solvers, labels or models: the weights it folds are
// plain vectors.
package kernel
