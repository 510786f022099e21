// Point and cell gradients of a point field, VTK's layout (n, 3C):
// [dc0/dx, dc0/dy, dc0/dz, dc1/dx, ...].
//
// Every variant ends the same way: derivatives along the parametric (or
// index) axes df_d, and metric rows m[d] from the topology, give
// grad f = sum_d df_d m[d]. Loops over corners, axes and components have
// compile-time trip counts; the work item's base index is computed once.
//
// Numerics: every corner is weighted, zero weights too, so a NaN or Inf
// corner value reaches every derivative of its cell, as in VTK. VTK
// differentiates in double; here the coordinates' type R is used, with the
// float cases that need more range redone (_wide.cuh): Jacobians inverted
// with rows scaled, and a non-finite gradient redone with the values shrunk.
//
// The worklets point_gradient and cell_gradient, and point_gradient_march,
// are overloads per grid family, one header each.
#ifndef DAXPY_GRADIENT_CUH
#define DAXPY_GRADIENT_CUH

#include "_structured_gradient.cuh"
#include "_march_gradient.cuh"
#include "_unstructured_gradient.cuh"
#include "_hex_point_gradient.cuh"

#endif  // DAXPY_GRADIENT_CUH
