// Package eigen holds the iterative solvers of symmetric problems that
// Spectral Regression needs: LOBPCG for the leading eigenpairs of an
// operator (TopEigen), and block conjugate gradients for a positive
// definite system with several right-hand sides (BlockCG).
//
// It knows the operators only through their products: nothing of graphs,
// labels, regressions or models.
package eigen
