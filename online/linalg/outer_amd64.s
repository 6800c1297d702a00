#include "textflag.h"

// func outer4AVX2(h *float64, d1 int, a *float64, alpha float64)
//
// Adds alpha·Σ_k a_k a_kᵀ to the upper triangle of the d1 × d1 row-major
// h, for the four rows a_k = a[k·d1 : (k+1)·d1]: for each row i of h,
// h[i][j] += c_0·a_0[j] + … + c_3·a_3[j] for j ≥ i, c_k = alpha·a_k[i],
// four columns at a time with fused multiply-adds, then one at a time.
TEXT ·outer4AVX2(SB), NOSPLIT, $0-32
	MOVQ h+0(FP), DI
	MOVQ d1+8(FP), CX
	MOVQ a+16(FP), SI
	VBROADCASTSD alpha+24(FP), Y5
	MOVQ CX, BX
	SHLQ $3, BX // bytes of a row

row:
	TESTQ CX, CX
	JZ    done
	LEAQ  (SI)(BX*1), R9
	LEAQ  (SI)(BX*2), R10
	LEAQ  (R10)(BX*1), R11
	VBROADCASTSD (SI), Y0
	VMULPD       Y5, Y0, Y0
	VBROADCASTSD (R9), Y1
	VMULPD       Y5, Y1, Y1
	VBROADCASTSD (R10), Y2
	VMULPD       Y5, Y2, Y2
	VBROADCASTSD (R11), Y3
	VMULPD       Y5, Y3, Y3
	XORQ  AX, AX
	MOVQ  CX, DX
	ANDQ  $-4, DX
	SHLQ  $3, DX // bytes of the columns taken four at a time

quad:
	CMPQ        AX, DX
	JGE         tail
	VMOVUPD     (DI)(AX*1), Y4
	VFMADD231PD (SI)(AX*1), Y0, Y4
	VFMADD231PD (R9)(AX*1), Y1, Y4
	VFMADD231PD (R10)(AX*1), Y2, Y4
	VFMADD231PD (R11)(AX*1), Y3, Y4
	VMOVUPD     Y4, (DI)(AX*1)
	ADDQ        $32, AX
	JMP         quad

tail:
	MOVQ CX, DX
	SHLQ $3, DX // bytes of the row's columns from i on

single:
	CMPQ        AX, DX
	JGE         next
	VMOVSD      (DI)(AX*1), X4
	VFMADD231SD (SI)(AX*1), X0, X4
	VFMADD231SD (R9)(AX*1), X1, X4
	VFMADD231SD (R10)(AX*1), X2, X4
	VFMADD231SD (R11)(AX*1), X3, X4
	VMOVSD      X4, (DI)(AX*1)
	ADDQ        $8, AX
	JMP         single

next:
	LEAQ 8(DI)(BX*1), DI // the diagonal of the next row of h
	ADDQ $8, SI
	DECQ CX
	JMP  row

done:
	VZEROUPPER
	RET
