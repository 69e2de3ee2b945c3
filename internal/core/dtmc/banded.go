package dtmc

import "math"

// bandedLU is the LU factorization without pivoting of I − Q on the maybe
// states in index order, stored by rows within its band: entry (i, j) of the
// factors, |i − j| within the bandwidths, is at a[i*w + j − i + kl]. I − Q is
// a non-singular M-matrix (every maybe state can leave), so Gaussian
// elimination needs no pivoting, its pivots stay positive, and the factors
// stay within the band: a chain whose maybe states only step to nearby
// indices (a birth-death line is tridiagonal) factorizes in time m·kl·ku
// without fill outside it.
type bandedLU struct {
	m, kl, ku, w int
	a            []float64
}

// Limits of the banded factorization: the band's entries (memory) and the
// elimination's multiply-adds (time); beyond them the iterative methods are
// cheaper.
const (
	bandedMaxEntries = 1 << 24
	bandedMaxWork    = 1 << 29
)

// bandwidths returns the largest distances below and above the diagonal of
// the maybe states' system in index order; sv.index must map them.
func (sv *Solver) bandwidths(c *Chain) (kl, ku int) {
	for i, s := range sv.maybe {
		cols, probs := c.Row(int(s))
		for k, t := range cols {
			if sv.class[t] != classMaybe || probs[k] == 0 {
				continue
			}
			j := int(sv.index[t])
			kl, ku = max(kl, i-j), max(ku, j-i)
		}
	}
	return kl, ku
}

// factorBanded factorizes the maybe states' system when its band is narrow
// enough; false when it is not, or a pivot is not positive.
func (sv *Solver) factorBanded(c *Chain) (factorization, bool) {
	m := len(sv.maybe)
	sv.index = grow(sv.index, c.NumStates())
	for i, s := range sv.maybe {
		sv.index[s] = int32(i)
	}
	kl, ku := sv.bandwidths(c)
	w := kl + ku + 1
	if m*w > bandedMaxEntries || m*kl*max(ku, 1) > bandedMaxWork {
		return nil, false
	}
	sv.dense = grow(sv.dense, m*w)
	f := &bandedLU{m: m, kl: kl, ku: ku, w: w, a: sv.dense}
	clear(f.a)
	for i, s := range sv.maybe {
		f.a[i*w+kl] = 1
		cols, probs := c.Row(int(s))
		for k, t := range cols {
			if sv.class[t] == classMaybe && probs[k] != 0 {
				f.a[i*w+int(sv.index[t])-i+kl] -= probs[k]
			}
		}
	}
	for k := range m {
		piv := f.a[k*w+kl]
		if !(piv > 0) || math.IsInf(piv, 0) {
			return nil, false
		}
		for i := k + 1; i <= min(k+kl, m-1); i++ {
			l := f.a[i*w+k-i+kl] / piv
			f.a[i*w+k-i+kl] = l
			if l == 0 {
				continue
			}
			rowK, rowI := f.a[k*w+kl:k*w+w], f.a[i*w+k-i+kl:]
			// Entry (k, j) is rowK[j−k]; entry (i, j) is rowI[j−k].
			for j := 1; j < len(rowK) && k+j < m; j++ {
				rowI[j] -= l * rowK[j]
			}
		}
	}
	return f, true
}

func (f *bandedLU) solve(v []float64) {
	m, kl, ku, w, a := f.m, f.kl, f.ku, f.w, f.a
	for i := range m {
		sum := v[i]
		for k := max(0, i-kl); k < i; k++ {
			sum -= a[i*w+k-i+kl] * v[k]
		}
		v[i] = sum
	}
	for i := m - 1; i >= 0; i-- {
		sum := v[i]
		for j := i + 1; j <= min(i+ku, m-1); j++ {
			sum -= a[i*w+j-i+kl] * v[j]
		}
		v[i] = sum / a[i*w+kl]
	}
}
