// Hand-tuned CUDA kernels: each written for exactly one case, the yardstick for
// daxpy's generated kernels (issue 3's benchmark). Loaded through cupy.RawModule;
// launch geometry and preconditions live in benchmarks/reference/hand_tuned.py.
//
// The elementwise kernels are in hand_tuned_elementwise.cuh and the point-gradient
// stencils in hand_tuned_gradient.cuh (included below).
//
// Conventions: point index i + nx*(j + ny*k) (x fastest, VTK order); 32-bit
// indices (the launcher checks every index fits); float32 values.
// Variants of one kernel are template parameters, so that
// `benchmarks/kernels.py --variants` times each optimization on its own
// (benchmarks/NOTES.md).

#define FULL_MASK 0xffffffffu

#include "hand_tuned_elementwise.cuh"

#include "hand_tuned_gradient.cuh"

// ------------------------------------------------------ point to cell (uniform)
// Naive: one thread per cell, eight loads.
extern "C" __global__ void point_to_cell_uniform_naive(const float* __restrict__ f,
    float* __restrict__ out, int nx, int ny, int nz)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int j = blockIdx.y * blockDim.y + threadIdx.y;
    int k = blockIdx.z;
    if (i >= nx - 1 || j >= ny - 1) return;
    int sy = nx, sz = nx * ny, p = i + sy * j + sz * k;
    float s = __ldg(f + p) + __ldg(f + p + 1) + __ldg(f + p + sy) + __ldg(f + p + sy + 1)
            + __ldg(f + p + sz) + __ldg(f + p + sz + 1) + __ldg(f + p + sz + sy)
            + __ldg(f + p + sz + sy + 1);
    out[i + (nx - 1) * (j + (ny - 1) * k)] = 0.125f * s;
}

// Marching: one thread per cell column (i, j); the four-corner sum of each
// point plane is kept in a register, so a cell costs one plane sum, not two.
// x+1 comes from the next lane, row j+1 from the warp beside (L1).
// blockDim.x == 32; lanes step by 31 cells so that lane 31 only supplies x+1.
extern "C" __global__ void point_to_cell_uniform_march(const float* __restrict__ f,
    float* __restrict__ out, int nx, int ny, int nz, int zc)
{
    const int lane = threadIdx.x;
    const int i = blockIdx.x * 31 + lane;
    const int j = blockIdx.y * blockDim.y + threadIdx.y;
    const int ic = min(i, nx - 1), jc = min(j, ny - 2);
    const bool active = lane < 31 && i < nx - 1 && j < ny - 1;
    const int k0 = blockIdx.z * zc, k1 = min(k0 + zc, nz - 1);
    const int sz = nx * ny;
    const int p = ic + nx * jc;
    const int ncx = nx - 1, ncxy = (nx - 1) * (ny - 1);
    float a = __ldg(f + k0 * sz + p) + __ldg(f + k0 * sz + p + nx);
    float prev = a + __shfl_down_sync(FULL_MASK, a, 1);
    for (int k = k0; k < k1; ++k) {
        const int e = (k + 1) * sz + p;
        float b = __ldg(f + e) + __ldg(f + e + nx);
        float cur = b + __shfl_down_sync(FULL_MASK, b, 1);
        if (active) __stcs(out + i + ncx * jc + ncxy * k, 0.125f * (prev + cur));
        prev = cur;
    }
}

// Float4 marching: each thread owns four cells (points x0..x0+4, the fifth from
// the next lane). The 128 results of a warp are staged in shared memory and
// written back as four coalesced rows (cell rows are nx-1 long, so float4
// stores would be misaligned). Needs nx % 4 == 0, blockDim.x == 32.
template <int TY>
__global__ void point_to_cell_uniform_march4(const float* __restrict__ f,
    float* __restrict__ out, int nx, int ny, int nz, int zc)
{
    __shared__ __align__(16) float stage[TY][128];
    const int lane = threadIdx.x, ty = threadIdx.y;
    const int nq = nx >> 2;
    const int q = blockIdx.x * 32 + lane;
    const int j = blockIdx.y * TY + ty;
    const int qc = min(q, nq - 1), jc = min(j, ny - 2);
    const bool row_active = j < ny - 1;
    const int plane4 = nq * ny;
    const int row = jc * nq + qc;
    const int k0 = blockIdx.z * zc, k1 = min(k0 + zc, nz - 1);
    const int ncx = nx - 1, ncxy = (nx - 1) * (ny - 1);
    const int x_first = blockIdx.x * 128;
    const float4* f4 = reinterpret_cast<const float4*>(f);

    auto plane_sum = [&](int k, float4& s, float& s4) {
        float4 a = __ldg(f4 + k * plane4 + row), b = __ldg(f4 + k * plane4 + row + nq);
        s = make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w);
        float next = __shfl_down_sync(FULL_MASK, s.x, 1);
        if (lane == 31 && 4 * qc + 4 < nx) {
            const int e = k * nx * ny + jc * nx + 4 * qc + 4;
            next = __ldg(f + e) + __ldg(f + e + nx);
        }
        s4 = next;
    };
    float4 prev, cur;
    float prev4, cur4;
    plane_sum(k0, prev, prev4);
    for (int k = k0; k < k1; ++k) {
        plane_sum(k + 1, cur, cur4);
        // x-pairs of the two plane sums give the four cells of this thread.
        float4 r = make_float4(prev.x + prev.y + cur.x + cur.y, prev.y + prev.z + cur.y + cur.z,
                               prev.z + prev.w + cur.z + cur.w, prev.w + prev4 + cur.w + cur4);
        reinterpret_cast<float4*>(stage[ty])[lane] = make_float4(
            0.125f * r.x, 0.125f * r.y, 0.125f * r.z, 0.125f * r.w);
        __syncwarp();
        if (row_active) {
            float* o = out + ncx * jc + ncxy * k + x_first;
#pragma unroll
            for (int s = 0; s < 4; ++s) {
                const int x = 32 * s + lane;
                if (x_first + x < ncx) __stcs(o + x, stage[ty][x]);
            }
        }
        __syncwarp();
        prev = cur;
        prev4 = cur4;
    }
}

// ------------------------------------------------------ cell to point (uniform)
// Average of the cells around a point (those that exist), separable per axis.
extern "C" __global__ void cell_to_point_uniform_naive(const float* __restrict__ c,
    float* __restrict__ out, int nx, int ny, int nz)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int j = blockIdx.y * blockDim.y + threadIdx.y;
    int k = blockIdx.z;
    if (i >= nx || j >= ny) return;
    const int cx = nx - 1, cy = ny - 1;
    int i0 = max(i - 1, 0), i1 = min(i, cx - 1);
    int j0 = max(j - 1, 0), j1 = min(j, cy - 1);
    int k0 = max(k - 1, 0), k1 = min(k, nz - 2);
    float s = 0.0f;
#pragma unroll
    for (int kk = 0; kk < 2; ++kk)
#pragma unroll
        for (int jj = 0; jj < 2; ++jj)
#pragma unroll
            for (int ii = 0; ii < 2; ++ii)
                s += __ldg(c + (ii ? i1 : i0) + cx * ((jj ? j1 : j0) + cy * (kk ? k1 : k0)));
    // Duplicated corners at a border average to the same value as VTK's
    // average over the cells that exist, since the duplicates are equal pairs.
    out[i + nx * (j + ny * k)] = 0.125f * s;
}

// Marching: one thread per point column; W_k (the x-y average of cell plane k
// around the point) is kept in a register. Lanes step by 31 points so that
// lane 0 only supplies the cell left of the warp.
extern "C" __global__ void cell_to_point_uniform_march(const float* __restrict__ c,
    float* __restrict__ out, int nx, int ny, int nz, int zc)
{
    const int lane = threadIdx.x;
    const int i = blockIdx.x * 31 + lane - 1;   // lane 0 holds cell column i = -1 + ...
    const int j = blockIdx.y * blockDim.y + threadIdx.y;
    const int cx = nx - 1, cy = ny - 1, cxy = cx * cy;
    const int ic = min(max(i, 0), cx - 1);
    const int j0 = max(min(j, ny - 1) - 1, 0), j1 = min(j, cy - 1);
    const bool active = lane > 0 && i < nx && j < ny;
    const int k0 = blockIdx.z * zc, k1 = min(k0 + zc, nz);
    // Cell value pair (rows j0, j1) at column ic; the point at i averages cell
    // columns i-1 and i: its own pair and the previous lane's.
    auto w_of = [&](int kc) {
        float s = 0.5f * (__ldg(c + ic + cx * j0 + cxy * kc) + __ldg(c + ic + cx * j1 + cxy * kc));
        float left = __shfl_up_sync(FULL_MASK, s, 1);
        float own = i <= cx - 1 ? s : left;     // right border: only cell i-1
        return (i == 0 ? s : 0.5f * (own + (i >= 1 ? left : s)));
    };
    float prev = w_of(max(k0 - 1, 0));
    for (int k = k0; k < k1; ++k) {
        float cur = w_of(min(k, nz - 2));
        float v = (k == 0) ? cur : (k == nz - 1) ? prev : 0.5f * (prev + cur);
        if (active) __stcs(out + i + nx * (j + ny * k), v);
        prev = cur;
    }
}

// Float4 marching: each thread owns four points (one float4 of output, aligned
// since nx % 4 == 0) and reads the five cell columns x0-1..x0+3 around them,
// the first from the previous lane. Needs blockDim.x == 32.
__device__ __forceinline__ float point_from_cells(int i, int n, float left, float own)
{
    return i == 0 ? own : i == n - 1 ? left : 0.5f * (left + own);
}

template <int TY>
__global__ void cell_to_point_uniform_march4(const float* __restrict__ c,
    float* __restrict__ out, int nx, int ny, int nz, int zc)
{
    const int lane = threadIdx.x;
    const int nq = nx >> 2;
    const int q = blockIdx.x * 32 + lane;
    const int j = blockIdx.y * TY + threadIdx.y;
    const int qc = min(q, nq - 1), x0 = 4 * qc;
    const bool active = q < nq && j < ny;
    const int cx = nx - 1, cy = ny - 1, cxy = cx * cy;
    const int j0 = max(min(j, ny - 1) - 1, 0), j1 = min(j, cy - 1);
    const int k0 = blockIdx.z * zc, k1 = min(k0 + zc, nz);
    auto w_of = [&](int kc) {
        const float* r0 = c + cx * j0 + cxy * kc;
        const float* r1 = c + cx * j1 + cxy * kc;
        float s[4];
#pragma unroll
        for (int e = 0; e < 4; ++e) {
            const int x = min(x0 + e, cx - 1);
            s[e] = 0.5f * (__ldg(r0 + x) + __ldg(r1 + x));
        }
        float sl = __shfl_up_sync(FULL_MASK, s[3], 1);
        if (lane == 0) {
            const int x = max(x0 - 1, 0);
            sl = 0.5f * (__ldg(r0 + x) + __ldg(r1 + x));
        }
        return make_float4(point_from_cells(x0, nx, sl, s[0]),
                           point_from_cells(x0 + 1, nx, s[0], s[1]),
                           point_from_cells(x0 + 2, nx, s[1], s[2]),
                           point_from_cells(x0 + 3, nx, s[2], s[3]));
    };
    float4 prev = w_of(max(k0 - 1, 0));
    float4* out4 = reinterpret_cast<float4*>(out);
    for (int k = k0; k < k1; ++k) {
        float4 cur = w_of(min(k, nz - 2));
        float4 v = k == 0 ? cur : k == nz - 1 ? prev
                 : make_float4(0.5f * (prev.x + cur.x), 0.5f * (prev.y + cur.y),
                               0.5f * (prev.z + cur.z), 0.5f * (prev.w + cur.w));
        if (active) __stcs(out4 + (k * ny + j) * nq + qc, v);
        prev = cur;
    }
}

// ------------------------------------------- point to cell (unstructured hex)
// One thread per hexahedron: its eight int32 corner ids as two 16-byte
// streamed loads, then eight gathers through the read-only cache.
template <bool VEC>
__global__ void point_to_cell_hex(const float* __restrict__ f, const int* __restrict__ conn,
                                  float* __restrict__ out, int n_cells)
{
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= n_cells) return;
    int id[8];
    if (VEC) {
        const int4* c4 = reinterpret_cast<const int4*>(conn) + 2 * c;
        int4 a = __ldcs(c4), b = __ldcs(c4 + 1);
        id[0] = a.x; id[1] = a.y; id[2] = a.z; id[3] = a.w;
        id[4] = b.x; id[5] = b.y; id[6] = b.z; id[7] = b.w;
    } else {
#pragma unroll
        for (int v = 0; v < 8; ++v) id[v] = conn[8 * c + v];
    }
    float s = 0.0f;
#pragma unroll
    for (int v = 0; v < 8; ++v) s += __ldg(f + id[v]);
    __stcs(out + c, 0.125f * s);
}

// Explicit instantiations, named so that cupy's name_expressions can find them.
template __global__ void pass_through_f32_f64<0, false>(const float*, double*, int);
template __global__ void pass_through_f32_f64<1, false>(const float*, double*, int);
template __global__ void pass_through_f32_f64<1, true>(const float*, double*, int);
template __global__ void pass_through_f32_f64<2, true>(const float*, double*, int);
template __global__ void bias_add_f32<false, 0, false>(const float*, const float*, float*, int, int);
template __global__ void bias_add_f32<true, 0, false>(const float*, const float*, float*, int, int);
template __global__ void bias_add_f32<true, 1, false>(const float*, const float*, float*, int, int);
template __global__ void bias_add_f32<true, 1, true>(const float*, const float*, float*, int, int);
template __global__ void bias_add_f32<true, 2, true>(const float*, const float*, float*, int, int);
template __global__ void magnitude3_f32<false, false>(const float*, float*, int);
template __global__ void magnitude3_f32<true, false>(const float*, float*, int);
template __global__ void magnitude3_f32<true, true>(const float*, float*, int);
template __global__ void gradient_uniform_march<false, 4, 1, false>(const float*, float*, int, int, int, int, float, float, float);
template __global__ void gradient_uniform_march<false, 8, 1, false>(const float*, float*, int, int, int, int, float, float, float);
template __global__ void gradient_uniform_march<false, 8, 5, false>(const float*, float*, int, int, int, int, float, float, float);
template __global__ void gradient_uniform_march<true, 8, 1, false>(const float*, float*, int, int, int, int, float, float, float);
template __global__ void gradient_uniform_march<false, 8, 1, true>(const float*, float*, int, int, int, int, float, float, float);
template __global__ void gradient_uniform_march<false, 4, 1, true>(const float*, float*, int, int, int, int, float, float, float);
template __global__ void gradient_rectilinear_march<8, false>(const float*, float*, int, int, int, int, const float*, const float*, const float*);
template __global__ void gradient_rectilinear_march<8, true>(const float*, float*, int, int, int, int, const float*, const float*, const float*);
template __global__ void point_to_cell_uniform_march4<8>(const float*, float*, int, int, int, int);
template __global__ void cell_to_point_uniform_march4<8>(const float*, float*, int, int, int, int);
template __global__ void gradient_curvilinear_march<8, false>(const float*, const float*, float*, int, int, int, int);
template __global__ void gradient_curvilinear_march<8, true>(const float*, const float*, float*, int, int, int, int);
template __global__ void point_to_cell_hex<false>(const float*, const int*, float*, int);
template __global__ void point_to_cell_hex<true>(const float*, const int*, float*, int);
