package train

import (
	"streamer/online/model"
	"streamer/online/spectral"
)

// warmState is what training keeps in a model (Model.Warm) for the next
// solve.
type warmState struct {
	// spectral is an SR model's eigensolver block, duals and Gram matrix.
	spectral *spectral.State
	// trial, set by auto when it weighed sr against svm or lapsvm, holds
	// the candidate not served and their record.
	trial *autoTrial
	// lambdaRecord is searchLambda's decayed error of each λ it tries.
	lambdaRecord []float64
}

// warmOf returns the state training kept in m: none for nil, or for a
// model it did not solve (a restored one).
func warmOf(m *model.Model) warmState {
	if m == nil {
		return warmState{}
	}
	if w, ok := m.Warm.(*warmState); ok {
		return *w
	}
	return warmState{}
}
