// Structured grids (uniform, rectilinear, curvilinear) as topologies
// (_topology.cuh). Only the D active axes are kept (axes with one point hold
// no cells), x fastest, so the flat point id is p = i0 + n0 * (i1 + n1 * i2).
#ifndef DAXPY_STRUCTURED_CUH
#define DAXPY_STRUCTURED_CUH

#include "_metric.cuh"

namespace dax {

// Index space of a structured grid with D active axes (D = 0: one point).
template <int D, typename I>
struct StructuredIndex {
  typedef I Index;
  static constexpr int dim = D;
  static constexpr int n_corners = 1 << D;
  I n DAX_AXES(D);  // points along each active axis

  __device__ __forceinline__ I stride(int d) const {
    I s = 1;
#pragma unroll
    for (int e = 0; e < D; ++e) s = e < d ? s * n[e] : s;
    return s;
  }
  __device__ __forceinline__ I n_points() const { return stride(D); }
  __device__ __forceinline__ I n_cells() const {
    I c = 1;
#pragma unroll
    for (int d = 0; d < D; ++d) c *= n[d] - 1;
    return c;
  }
  // Split a flat id over per-axis extents ext[d] (points or cells).
  __device__ __forceinline__ void split(I flat, const I (&ext) DAX_AXES(D), I (&ijk) DAX_AXES(D)) const {
#pragma unroll
    for (int d = 0; d < D; ++d) {
      if (d == D - 1) { ijk[d] = flat; } else { ijk[d] = flat % ext[d]; flat /= ext[d]; }
    }
  }

  // A cell: its lower corner id, computed once; corner k adds bit d of k
  // times the stride of axis d (VTK voxel/pixel order).
  struct Cell {
    I id, base, ijk DAX_AXES(D);
    I strides DAX_AXES(D);
    __device__ __forceinline__ I point(int k) const {
      I p = base;
#pragma unroll
      for (int d = 0; d < D; ++d) p += ((k >> d) & 1) ? strides[d] : I(0);
      return p;
    }
  };
  __device__ __forceinline__ Cell cell(I c) const {
    Cell cell;
    cell.id = c;
    I ext DAX_AXES(D);
#pragma unroll
    for (int d = 0; d < D; ++d) ext[d] = n[d] - 1;
    split(c, ext, cell.ijk);
    cell.base = 0;
#pragma unroll
    for (int d = 0; d < D; ++d) { cell.strides[d] = stride(d); cell.base += cell.ijk[d] * cell.strides[d]; }
    return cell;
  }

  // Cells around point p: along each axis the cell below (i - 1) and the
  // cell above (i), where they exist. f(cell_id) is called once per cell.
  template <class F>
  __device__ __forceinline__ void for_each_cell_of_point(I p, F&& f) const {
    I ijk DAX_AXES(D);
    split(p, n, ijk);
#pragma unroll
    for (int k = 0; k < (1 << D); ++k) {
      bool inside = true;
      I cid = 0, cstride = 1;
#pragma unroll
      for (int d = 0; d < D; ++d) {
        const I ci = ijk[d] - 1 + ((k >> d) & 1);
        inside = inside && ci >= 0 && ci < n[d] - 1;
        cid += ci * cstride;
        cstride *= n[d] - 1;
      }
      if (D == 0 || inside) f(cid);
    }
  }
};

// The grid-specific metrics. point_metric: rows m[d] for index-space
// differences from point plo[d] (index lo[d]) to point phi[d] (index hi[d])
// along each axis. march_metric: the same rows for a marching kernel
// (D == 3), which holds the coordinate differences dX[d] = X(hi) - X(lo)
// itself where the grid has explicit points (explicit_points). The metrics
// return false where float could not invert a Jacobian accurately; Scaled
// computes them with inverse_rows' scaled rows instead (_wide.cuh).
//
// Uniform and rectilinear grids (Grid) have the coordinate axes as their
// axes: row d is Grid::axis(d) over the length Grid::span(d, lo, hi) between
// two indices along axis d.
template <class Grid, int D, typename I, typename T>
struct AxisAlignedGrid : StructuredIndex<D, I> {
  typedef T Coord;
  static constexpr bool explicit_points = false;
  template <bool Scaled = false>
  __device__ __forceinline__ bool point_metric(const I (&lo) DAX_AXES(D), const I (&hi) DAX_AXES(D),
                                               const I (&) DAX_AXES(D), const I (&) DAX_AXES(D),
                                               V3<T> (&m) DAX_AXES(D)) const {
    const Grid& grid = static_cast<const Grid&>(*this);
#pragma unroll
    for (int d = 0; d < D; ++d) m[d] = (T(1) / grid.span(d, lo[d], hi[d])) * grid.axis(d);
    return true;
  }
};

// Uniform grid: w[d] = e_axis(d) / spacing(axis(d)): the metric is constant.
template <int D, typename I, typename T>
struct UniformGrid : AxisAlignedGrid<UniformGrid<D, I, T>, D, I, T> {
  V3<T> w DAX_AXES(D);
  __device__ __forceinline__ T span(int, I lo, I hi) const { return T(hi - lo); }
  __device__ __forceinline__ V3<T> axis(int d) const { return w[d]; }
  __device__ __forceinline__ bool march_metric(const I (&)[3], const I (&lo)[3], const I (&hi)[3],
                                               const V3<T> (&)[3], V3<T> (&m)[3]) const {
    // hi - lo is 2 inside and 1 at a border: a select, not a division.
#pragma unroll
    for (int d = 0; d < 3; ++d) m[d] = (hi[d] - lo[d] == 2 ? T(0.5) : T(1)) * w[d];
    return true;
  }
  template <bool Scaled = false>
  __device__ __forceinline__ bool cell_metric(const typename StructuredIndex<D, I>::Cell&,
                                              V3<T> (&m) DAX_AXES(D)) const {
#pragma unroll
    for (int d = 0; d < D; ++d) m[d] = w[d];
    return true;
  }
};

// Rectilinear grid: one coordinate array per active axis, e[d] its unit vector,
// and inv[d][i] = 1 / (x[hi] - x[lo]) of the point stencil at index i (a few
// KB that stay in L1: a load instead of a division per point and axis).
template <int D, typename I, typename T>
struct RectilinearGrid : AxisAlignedGrid<RectilinearGrid<D, I, T>, D, I, T> {
  const T* x DAX_AXES(D);
  const T* inv DAX_AXES(D);
  V3<T> e DAX_AXES(D);
  __device__ __forceinline__ T span(int d, I lo, I hi) const { return load(x[d] + hi) - load(x[d] + lo); }
  __device__ __forceinline__ V3<T> axis(int d) const { return e[d]; }
  __device__ __forceinline__ bool march_metric(const I (&at)[3], const I (&)[3], const I (&)[3],
                                               const V3<T> (&)[3], V3<T> (&m)[3]) const {
#pragma unroll
    for (int d = 0; d < 3; ++d) m[d] = load(inv[d] + at[d]) * e[d];
    return true;
  }
  // From inv as well (not 1 / span in T): a march's redo recomputes its
  // points one by one, and the finite ones must keep the march's bits. The
  // stencil [lo, hi] is index lo + 1's inside, index 0's or hi's at an end
  // (on two points both ends share one inverse).
  template <bool Scaled = false>
  __device__ __forceinline__ bool point_metric(const I (&lo) DAX_AXES(D), const I (&hi) DAX_AXES(D),
                                               const I (&) DAX_AXES(D), const I (&) DAX_AXES(D),
                                               V3<T> (&m) DAX_AXES(D)) const {
#pragma unroll
    for (int d = 0; d < D; ++d) {
      const I at = hi[d] - lo[d] == 2 ? lo[d] + 1 : (lo[d] == 0 ? I(0) : hi[d]);
      m[d] = load(inv[d] + at) * e[d];
    }
    return true;
  }
  template <bool Scaled = false>
  __device__ __forceinline__ bool cell_metric(const typename StructuredIndex<D, I>::Cell& c,
                                              V3<T> (&m) DAX_AXES(D)) const {
#pragma unroll
    for (int d = 0; d < D; ++d)
      m[d] = (T(1) / (load(x[d] + c.ijk[d] + 1) - load(x[d] + c.ijk[d]))) * e[d];
    return true;
  }
};

// Curvilinear grid: explicit points (n_points, 3). The Jacobian's rows are
// the same index-space differences of the coordinates; an axis with a single
// point contributes the unit vector u of its own coordinate axis.
template <int D, typename I, typename T>
struct CurvilinearGrid : StructuredIndex<D, I> {
  typedef T Coord;
  static constexpr bool explicit_points = true;
  const T* xyz;
  V3<T> u[3 - D > 0 ? 3 - D : 1];
  __device__ __forceinline__ bool march_metric(const I (&)[3], const I (&)[3], const I (&)[3],
                                               const V3<T> (&dX)[3], V3<T> (&m)[3]) const {
    return inverse_rows<false>(dX, m);
  }
  __device__ __forceinline__ V3<T> point_coords(I p) const { return load_point(xyz, p); }
  template <bool Scaled = false>
  __device__ __forceinline__ bool point_metric(const I (&) DAX_AXES(D), const I (&) DAX_AXES(D),
                                               const I (&plo) DAX_AXES(D), const I (&phi) DAX_AXES(D),
                                               V3<T> (&m) DAX_AXES(D)) const {
    V3<T> J[3];
#pragma unroll
    for (int d = 0; d < D; ++d) J[d] = point_coords(phi[d]) - point_coords(plo[d]);
#pragma unroll
    for (int d = D; d < 3; ++d) J[d] = u[d - D];
    return inverse_first_rows<D, Scaled>(J, m);
  }
  // At the cell centre: dX/dxi_d is the mean of the cell's edges along d; a
  // quad's first three corners are ids 0, 1 and 3 in bit order.
  template <bool Scaled = false>
  __device__ __forceinline__ bool cell_metric(const typename StructuredIndex<D, I>::Cell& c,
                                              V3<T> (&m) DAX_AXES(D)) const {
    V3<T> X[1 << D];
#pragma unroll
    for (int k = 0; k < (1 << D); ++k) X[k] = point_coords(c.point(k));
    V3<T> J[3];
#pragma unroll
    for (int d = 0; d < D; ++d) {
      J[d] = V3<T>{T(0), T(0), T(0)};
#pragma unroll
      for (int k = 0; k < (1 << D); ++k)
        if ((k >> d) & 1) J[d] = J[d] + (X[k] - X[k ^ (1 << d)]);
      J[d] = (T(1) / T(1 << (D > 0 ? D - 1 : 0))) * J[d];
    }
    return cell_rows<D, 3, Scaled>(J, X, m);
  }
};

}  // namespace dax

#endif  // DAXPY_STRUCTURED_CUH
