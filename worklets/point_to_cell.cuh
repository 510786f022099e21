// Point-to-cell average: each cell gets the mean of its corner values.
// One work item per cell; the cell's corner ids are computed (structured) or
// loaded (unstructured) once, then every component is averaged.
#ifndef DAXPY_POINT_TO_CELL_CUH
#define DAXPY_POINT_TO_CELL_CUH

namespace dax {

template <int C, class Topo, typename In, typename Out>
__device__ __forceinline__ void point_to_cell(const Topo& topo, typename Topo::Index item,
                                              const In* __restrict__ in, Out* __restrict__ out) {
  typedef typename Topo::Index I;
  const auto cell = topo.cell(item);
  Out sum[C];
#pragma unroll
  for (int c = 0; c < C; ++c) sum[c] = Out(0);
#pragma unroll
  for (int k = 0; k < Topo::n_corners; ++k) {
    const I p = cell.point(k);
#pragma unroll
    for (int c = 0; c < C; ++c) sum[c] += Out(load(in + p * I(C) + c));
  }
  const Out scale = Out(1) / Out(Topo::n_corners);
#pragma unroll
  for (int c = 0; c < C; ++c) __stcs(out + cell.id * I(C) + c, sum[c] * scale);
}

}  // namespace dax

#endif  // DAXPY_POINT_TO_CELL_CUH
