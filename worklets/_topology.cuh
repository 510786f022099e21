// Topologies for daxpy's generated kernels: one small struct per grid kind, all
// with the same device-side interface, so that a worklet is written once as a
// function template and instantiated per topology (never switched on).
//
//   topo.n_points(), topo.n_cells()          work counts
//   topo.cell(c)        -> Cell: c.id (output index), c.point(k) (corner ids),
//                          computed once per work item (seed 004, cause #2)
//   topo.for_each_cell_of_point(p, f)         neighbours of a point
//   topo.point_derivatives / cell_metric      coordinates and the derivatives
//                                             of the interpolation functions
//
// Structured grids keep only their D active axes (axes with one point hold
// no cells), x fastest, so the flat point id is p = i0 + n0 * (i1 + n1 * i2).
#ifndef DAXPY_TOPOLOGY_CUH
#define DAXPY_TOPOLOGY_CUH

namespace dax {

typedef long long i64;

template <typename T> struct V3 { T x, y, z; };

template <typename T>
__device__ __forceinline__ V3<T> operator+(V3<T> a, V3<T> b) { return {a.x + b.x, a.y + b.y, a.z + b.z}; }
template <typename T>
__device__ __forceinline__ V3<T> operator-(V3<T> a, V3<T> b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
template <typename T>
__device__ __forceinline__ V3<T> operator*(T s, V3<T> a) { return {s * a.x, s * a.y, s * a.z}; }
template <typename T>
__device__ __forceinline__ T dot(V3<T> a, V3<T> b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
template <typename T>
__device__ __forceinline__ V3<T> cross(V3<T> a, V3<T> b) {
  return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}

// Read-only loads through the non-coherent cache.
template <typename T> __device__ __forceinline__ T load(const T* p) { return __ldg(p); }

// Vector memory access: V consecutive elements moved as 16-byte (or smaller)
// words. Elementwise maps use read-only loads and plain stores: streaming
// hints measured equal or slower on the H200 (benchmarks/NOTES.md).
template <int B> struct Word;
template <> struct Word<16> { typedef uint4 type; };
template <> struct Word<8> { typedef uint2 type; };
template <> struct Word<4> { typedef unsigned int type; };
template <> struct Word<2> { typedef unsigned short type; };
template <> struct Word<1> { typedef unsigned char type; };

// Widest word (up to 16 bytes) that divides B bytes: 12 bytes move as three
// 4-byte words, 48 as three 16-byte ones.
template <int B> struct WordSize {
  static constexpr int value = B % 16 == 0 ? 16 : B % 8 == 0 ? 8 : B % 4 == 0 ? 4 : B % 2 == 0 ? 2 : 1;
};

// V elements of T seen as 16-byte (or smaller) words; the union keeps the
// elements in registers (nvcc and NVRTC both accept this type punning).
template <int V, typename T> struct Pack {
  static constexpr int bytes = V * int(sizeof(T)), word = WordSize<bytes>::value;
  typedef typename Word<word>::type W;
  union { T x[V]; W w[bytes / word]; };
};

template <int V, typename T>
__device__ __forceinline__ void load_vector(const T* p, T (&x)[V]) {
  Pack<V, T> pack;
  const auto* words = reinterpret_cast<const typename Pack<V, T>::W*>(p);
#pragma unroll
  for (int i = 0; i < Pack<V, T>::bytes / Pack<V, T>::word; ++i) pack.w[i] = __ldg(words + i);
#pragma unroll
  for (int v = 0; v < V; ++v) x[v] = pack.x[v];
}

// The name marks data that neighbours read again; the load is load_vector's
// read-only-cache one (streaming loads lost even on elementwise maps,
// benchmarks/NOTES.md).
template <int V, typename T>
__device__ __forceinline__ void load_cached(const T* p, T (&x)[V]) {
  load_vector<V, T>(p, x);
}

template <int V, typename T>
__device__ __forceinline__ void store_vector(T* p, const T (&x)[V]) {
  Pack<V, T> pack;
#pragma unroll
  for (int v = 0; v < V; ++v) pack.x[v] = x[v];
  auto* words = reinterpret_cast<typename Pack<V, T>::W*>(p);
#pragma unroll
  for (int i = 0; i < Pack<V, T>::bytes / Pack<V, T>::word; ++i) words[i] = pack.w[i];
}

// Float's range limits, handled in _wide.cuh (declared here for the grids).
template <bool Scaled, typename R>
__device__ __forceinline__ bool inverse_rows(const V3<R> (&J)[3], V3<R> (&m)[3]);
template <bool Scaled, typename R>
__device__ __forceinline__ V3<R> cell_normal(V3<R> a, V3<R> b);

// vtkLine::Derivatives divides by each coordinate difference on its own
// (zero where the line does not move along that axis).
template <typename R>
__device__ __forceinline__ V3<R> reciprocal_row(V3<R> dx) {
  return {dx.x != R(0) ? R(1) / dx.x : R(0), dx.y != R(0) ? R(1) / dx.y : R(0),
          dx.z != R(0) ? R(1) / dx.z : R(0)};
}

// ---------------------------------------------------------------- structured
template <int D> struct Pow2 { static constexpr int value = 1 << D; };

// Index space of a structured grid with D active axes (D = 0: one point).
template <int D, typename I>
struct StructuredIndex {
  typedef I Index;
  static constexpr int dim = D;
  static constexpr int n_corners = 1 << D;
  I n[D > 0 ? D : 1];  // points along each active axis

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
  __device__ __forceinline__ void split(I flat, const I (&ext)[D > 0 ? D : 1], I (&ijk)[D > 0 ? D : 1]) const {
#pragma unroll
    for (int d = 0; d < D; ++d) {
      if (d == D - 1) { ijk[d] = flat; } else { ijk[d] = flat % ext[d]; flat /= ext[d]; }
    }
  }

  // A cell: its lower corner id, computed once; corner k adds bit d of k
  // times the stride of axis d (VTK voxel/pixel order).
  struct Cell {
    I id, base, ijk[D > 0 ? D : 1];
    I strides[D > 0 ? D : 1];
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
    I ext[D > 0 ? D : 1];
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
    I ijk[D > 0 ? D : 1];
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

#define DAX_AXES(D) [D > 0 ? D : 1]

// Uniform grid: w[d] = e_axis(d) / spacing(axis(d)): the metric is constant.
// point_metric: rows m[d] for index-space differences from point plo[d]
// (index lo[d]) to point phi[d] (index hi[d]) along each axis.
// march_metric: the same rows for a marching kernel (D == 3), which holds the
// coordinate differences dX[d] = X(hi) - X(lo) itself where the grid has
// explicit points (explicit_points). The metrics return false where float
// could not invert a Jacobian accurately; Scaled computes them with
// inverse_rows' scaled rows instead (_wide.cuh).
template <int D, typename I, typename T>
struct UniformGrid : StructuredIndex<D, I> {
  typedef T Coord;
  static constexpr bool explicit_points = false;
  V3<T> w DAX_AXES(D);
  __device__ __forceinline__ bool march_metric(const I (&)[3], const I (&lo)[3], const I (&hi)[3],
                                               const V3<T> (&)[3], V3<T> (&m)[3]) const {
    // hi - lo is 2 inside and 1 at a border: a select, not a division.
#pragma unroll
    for (int d = 0; d < 3; ++d) m[d] = (hi[d] - lo[d] == 2 ? T(0.5) : T(1)) * w[d];
    return true;
  }
  template <bool Scaled = false>
  __device__ __forceinline__ bool point_metric(const I (&lo) DAX_AXES(D), const I (&hi) DAX_AXES(D),
                                               const I (&) DAX_AXES(D), const I (&) DAX_AXES(D),
                                               V3<T> (&m) DAX_AXES(D)) const {
#pragma unroll
    for (int d = 0; d < D; ++d) m[d] = (T(1) / T(hi[d] - lo[d])) * w[d];
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
struct RectilinearGrid : StructuredIndex<D, I> {
  typedef T Coord;
  static constexpr bool explicit_points = false;
  const T* x DAX_AXES(D);
  const T* inv DAX_AXES(D);
  V3<T> e DAX_AXES(D);
  __device__ __forceinline__ bool march_metric(const I (&at)[3], const I (&)[3], const I (&)[3],
                                               const V3<T> (&)[3], V3<T> (&m)[3]) const {
#pragma unroll
    for (int d = 0; d < 3; ++d) m[d] = load(inv[d] + at[d]) * e[d];
    return true;
  }
  template <bool Scaled = false>
  __device__ __forceinline__ bool point_metric(const I (&lo) DAX_AXES(D), const I (&hi) DAX_AXES(D),
                                               const I (&) DAX_AXES(D), const I (&) DAX_AXES(D),
                                               V3<T> (&m) DAX_AXES(D)) const {
#pragma unroll
    for (int d = 0; d < D; ++d) m[d] = (T(1) / (load(x[d] + hi[d]) - load(x[d] + lo[d]))) * e[d];
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
  __device__ __forceinline__ V3<T> point_coords(I p) const {
    return {load(xyz + 3 * p), load(xyz + 3 * p + 1), load(xyz + 3 * p + 2)};
  }
  template <bool Scaled>
  __device__ __forceinline__ bool fill_and_invert(V3<T> (&J)[3], V3<T> (&m) DAX_AXES(D)) const {
#pragma unroll
    for (int d = D; d < 3; ++d) J[d] = u[d - D];
    V3<T> all[3];
    const bool ok = inverse_rows<Scaled>(J, all);
#pragma unroll
    for (int d = 0; d < D; ++d) m[d] = all[d];
    return ok;
  }
  template <bool Scaled = false>
  __device__ __forceinline__ bool point_metric(const I (&) DAX_AXES(D), const I (&) DAX_AXES(D),
                                               const I (&plo) DAX_AXES(D), const I (&phi) DAX_AXES(D),
                                               V3<T> (&m) DAX_AXES(D)) const {
    V3<T> J[3];
#pragma unroll
    for (int d = 0; d < D; ++d) J[d] = point_coords(phi[d]) - point_coords(plo[d]);
    return fill_and_invert<Scaled>(J, m);
  }
  // At the cell centre: dX/dxi_d is the mean of the cell's edges along d.
  // As VTK's cells: a quad's third row is the normal through its first three
  // corners (ids 0, 1 and 3 in bit order), a line divides per coordinate.
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
    bool ok = true;
    if constexpr (D == 1) {
      m[0] = reciprocal_row(J[0]);
    } else if constexpr (D >= 2) {
      if constexpr (D == 2) J[2] = cell_normal<Scaled>(X[1] - X[0], X[3] - X[0]);
      V3<T> all[3];
      ok = inverse_rows<Scaled>(J, all);
#pragma unroll
      for (int d = 0; d < D; ++d) m[d] = all[d];
    }
    return ok;
  }
};

// -------------------------------------------------------------- unstructured
// VTK linear cell shapes: corner count and topological dimension. Their
// interpolation derivatives live with the worklets that need them.
#define DAX_SHAPE(NAME, CORNERS, DIM) \
  struct NAME { static constexpr int n_corners = CORNERS; static constexpr int dim = DIM; };
DAX_SHAPE(Vertex, 1, 0)
DAX_SHAPE(Line, 2, 1)
DAX_SHAPE(Tri, 3, 2)
DAX_SHAPE(Quad, 4, 2)
DAX_SHAPE(Tet, 4, 3)
DAX_SHAPE(Hex, 8, 3)
DAX_SHAPE(Wedge, 6, 3)
DAX_SHAPE(Pyramid, 5, 3)
#undef DAX_SHAPE

// All cells of one VTK shape: corner ids (n, K), loaded as vector words, and
// their ids in the grid (Sole: the grid holds only this shape, in order, so
// the block's cell c is the grid's cell c and no id is loaded).
template <class S, typename I, typename T, bool Sole>
struct CellBlock {
  typedef I Index;
  typedef S Shape;
  static constexpr int dim = S::dim;
  static constexpr int n_corners = S::n_corners;
  const I* corners;
  const I* cell_ids;
  const T* xyz;  // grid points (n_points, 3)
  I n;
  struct Cell {
    I id;
    I ids[S::n_corners];
    __device__ __forceinline__ I point(int k) const { return ids[k]; }
  };
  __device__ __forceinline__ I n_cells() const { return n; }
  __device__ __forceinline__ Cell cell(I c) const {
    Cell cell;
    cell.id = Sole ? c : load(cell_ids + c);
    load_cached<S::n_corners>(corners + c * I(S::n_corners), cell.ids);
    return cell;
  }
  __device__ __forceinline__ V3<T> point_coords(I p) const {
    return {load(xyz + 3 * p), load(xyz + 3 * p + 1), load(xyz + 3 * p + 2)};
  }
};

// The cells of one shape seen from their points: for each point, the flat
// positions (cell * K + corner) in the block's corner array where it appears,
// in CSR form and in a fixed order. Blocks run one after the other; First
// and Last say whether this block starts the per-point sums or ends them
// (dividing by counts[p], the number of cells of any shape using p).
template <class S, typename I, typename T, bool First, bool Last>
struct ShapeLinks {
  typedef I Index;
  typedef T Coord;
  typedef S Shape;
  static constexpr bool first = First, last = Last;
  const I* corners;
  const T* xyz;
  const I* offsets;  // n + 1
  const I* slots;    // positions in corners
  const I* counts;   // cells per point, all shapes
  I n;
  __device__ __forceinline__ I n_points() const { return n; }
  __device__ __forceinline__ V3<T> point_coords(I p) const {
    return {load(xyz + 3 * p), load(xyz + 3 * p + 1), load(xyz + 3 * p + 2)};
  }
};

// Point -> cell links in CSR form, built once on the device (sorted by point,
// then by cell id, so sums run in a fixed order: bitwise reproducible).
template <typename I>
struct PointCellLinks {
  typedef I Index;
  const I* offsets;  // n_points + 1
  const I* cells;    // incident cell ids
  I n;
  __device__ __forceinline__ I n_points() const { return n; }
  template <class F>
  __device__ __forceinline__ void for_each_cell_of_point(I p, F&& f) const {
    const I end = load(offsets + p + 1);
    for (I l = load(offsets + p); l < end; ++l) f(load(cells + l));
  }
};

}  // namespace dax

#endif  // DAXPY_TOPOLOGY_CUH
