// Cell-to-point average: each point gets the mean of the cells that use it
// (0 where no cell does). Point-centric: each point gathers from its cells
// (computed on structured grids, CSR links on unstructured ones), so there
// are no atomics and the sums run in a fixed order.
#ifndef DAXPY_CELL_TO_POINT_CUH
#define DAXPY_CELL_TO_POINT_CUH

namespace dax {

template <int C, class Topo, typename In, typename Out>
__device__ __forceinline__ void cell_to_point(const Topo& topo, typename Topo::Index p,
                                              const In* __restrict__ in, Out* __restrict__ out) {
  typedef typename Topo::Index I;
  Out sum[C];
#pragma unroll
  for (int c = 0; c < C; ++c) sum[c] = Out(0);
  int count = 0;
  topo.for_each_cell_of_point(p, [&](I cell) {
    ++count;
#pragma unroll
    for (int c = 0; c < C; ++c) sum[c] += Out(load(in + cell * I(C) + c));
  });
  const Out scale = count > 0 ? Out(1) / Out(count) : Out(0);
#pragma unroll
  for (int c = 0; c < C; ++c) __stcs(out + p * I(C) + c, sum[c] * scale);
}

}  // namespace dax

#endif  // DAXPY_CELL_TO_POINT_CUH
