// Topologies for daxpy's generated kernels: one small struct per grid kind, all
// with the same device-side interface, so that a worklet is written once as a
// function template and instantiated per topology (never switched on).
//
//   topo.n_points(), topo.n_cells()          work counts
//   topo.cell(c)        -> Cell: c.id (output index), c.point(k) (corner ids),
//                          computed once per work item (seed 004, cause #2)
//   topo.for_each_cell_of_point(p, f)         neighbours of a point
//   topo.point_metric / cell_metric           coordinates and the derivatives
//                                             of the interpolation functions
//
// One header per grid family; the codegen inlines the includes (NVRTC gets
// one self-contained source).
#ifndef DAXPY_TOPOLOGY_CUH
#define DAXPY_TOPOLOGY_CUH

#include "_vectors.cuh"
#include "_structured.cuh"
#include "_unstructured.cuh"

#endif  // DAXPY_TOPOLOGY_CUH
