// Unstructured grids as topologies (_topology.cuh): VTK's linear cell shapes,
// the cells of one shape, and the links from points to the cells using them.
#ifndef DAXPY_UNSTRUCTURED_CUH
#define DAXPY_UNSTRUCTURED_CUH

#include "_vectors.cuh"

namespace dax {

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
  typedef T Coord;
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
  __device__ __forceinline__ V3<T> point_coords(I p) const { return load_point(xyz, p); }
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
  const T* xyz4;     // grid points as rows of four (x, y, z, 0): one 16-byte load
                     // (two for double) a gathered corner instead of three
  const I* offsets;  // n + 1
  const I* slots;    // positions in corners
  const I* counts;   // cells per point, all shapes
  I n;
  int finite_points;  // every coordinate finite (checked once per grid)
  __device__ __forceinline__ I n_points() const { return n; }
  __device__ __forceinline__ V3<T> point_coords(I p) const {
    T row[4];
    load_cached<4>(xyz4 + 4 * p, row);
    return {row[0], row[1], row[2]};
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

#endif  // DAXPY_UNSTRUCTURED_CUH
