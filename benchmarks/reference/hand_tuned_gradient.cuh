// Point-gradient stencils of the hand-tuned kernels (included by hand_tuned.cu):
// uniform and rectilinear grids through one marching template over the axis
// type, curvilinear grids through the Jacobian. VTK's semantics: central
// differences inside, one-sided at the borders, output (n, 3) interleaved.
#ifndef HAND_TUNED_GRADIENT_CUH
#define HAND_TUNED_GRADIENT_CUH
#include "solve3.cuh"

// ---------------------------------------------------------- point gradient
// VTK's structured-grid stencil along one axis at index i of n points: central
// difference inside, one-sided at the two ends, zero on a one-point axis.
// lo/hi are the values at i-1/i+1 (ignored where they do not exist).
struct UniformAxis {
    float inv_h;   // 1 / spacing
    int n;
    __device__ __forceinline__ float d(int i, float lo, float c, float hi) const {
        float a = i == 0 ? c : lo;
        float b = i == n - 1 ? c : hi;
        float w = (i == 0 || i == n - 1) ? inv_h : 0.5f * inv_h;
        return (b - a) * w;
    }
};

// Rectilinear axis: inv[i] = 1 / (x[min(i+1, n-1)] - x[max(i-1, 0)]), a few KB
// that stay in L1.
struct RectilinearAxis {
    const float* __restrict__ inv;
    int n;
    __device__ __forceinline__ float d(int i, float lo, float c, float hi) const {
        float a = i == 0 ? c : lo;
        float b = i == n - 1 ? c : hi;
        return n == 1 ? 0.0f : (b - a) * __ldg(inv + i);
    }
};

// Naive reference point: one thread per point, seven loads through the caches.
template <class Axis>
__device__ __forceinline__ void gradient_point_naive(const float* __restrict__ f,
    float* __restrict__ out, int nx, int ny, int nz, Axis ax, Axis ay, Axis az)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int j = blockIdx.y * blockDim.y + threadIdx.y;
    int k = blockIdx.z;
    if (i >= nx || j >= ny) return;
    int sy = nx, sz = nx * ny;
    int p = i + sy * j + sz * k;
    float c = __ldg(f + p);
    float gx = ax.d(i, i > 0 ? __ldg(f + p - 1) : c, c, i < nx - 1 ? __ldg(f + p + 1) : c);
    float gy = ay.d(j, j > 0 ? __ldg(f + p - sy) : c, c, j < ny - 1 ? __ldg(f + p + sy) : c);
    float gz = az.d(k, k > 0 ? __ldg(f + p - sz) : c, c, k < nz - 1 ? __ldg(f + p + sz) : c);
    out[3 * p] = gx; out[3 * p + 1] = gy; out[3 * p + 2] = gz;
}

extern "C" __global__ void gradient_uniform_naive(const float* __restrict__ f,
    float* __restrict__ out, int nx, int ny, int nz, float ihx, float ihy, float ihz)
{
    gradient_point_naive(f, out, nx, ny, nz, UniformAxis{ihx, nx}, UniformAxis{ihy, ny},
                         UniformAxis{ihz, nz});
}

// Marching stencil: each thread owns four consecutive x points (one float4) of
// one row and walks a chunk of zc planes, keeping the planes below, at and
// above in registers, so each input row is read from DRAM about once. x
// neighbours come from the neighbouring lanes (shuffles); y neighbours are the
// rows of the warps beside it in the block (L1 hits, or a shared tile when
// SMEM). Output: three float4 per thread, 48 contiguous bytes, streamed.
// Needs nx % 4 == 0 and blockDim.x == 32.
__device__ __forceinline__ float4 ld4(const float4* p, bool stream)
{
    return stream ? __ldcs(p) : __ldg(p);
}

// STAGE: the warp's 96 output float4s go through shared memory, so that each
// store instruction writes 512 contiguous bytes instead of every third 16.
__device__ __forceinline__ void store_staged(float4* stage, float4* dst, int lane,
                                             int n_valid, float4 a, float4 b, float4 c)
{
    stage[3 * lane] = a; stage[3 * lane + 1] = b; stage[3 * lane + 2] = c;
    __syncwarp();
#pragma unroll
    for (int s = 0; s < 3; ++s)
        if (32 * s + lane < n_valid) __stcs(dst + 32 * s + lane, stage[32 * s + lane]);
    __syncwarp();
}

template <class Axis, bool SMEM, int TY, bool STAGE>
__device__ __forceinline__ void gradient_march(const float* __restrict__ f,
    float* __restrict__ out, int nx, int ny, int nz, int zc, Axis ax, Axis ay, Axis az)
{
    __shared__ float4 tile[SMEM ? TY + 2 : 1][32];
    __shared__ float4 ostage[STAGE ? TY : 1][STAGE ? 96 : 1];
    const int lane = threadIdx.x, ty = threadIdx.y;
    const int nq = nx >> 2;
    const int q = blockIdx.x * 32 + lane;
    const int j = blockIdx.y * TY + ty;
    const bool active = q < nq && j < ny;
    const int qc = min(q, nq - 1), jc = min(j, ny - 1);
    const int plane4 = nq * ny;
    const int row = jc * nq + qc;
    const int rowm = max(jc - 1, 0) * nq + qc, rowp = min(jc + 1, ny - 1) * nq + qc;
    const int x0 = 4 * qc;
    const int k0 = blockIdx.z * zc, k1 = min(k0 + zc, nz);
    const float4* f4 = reinterpret_cast<const float4*>(f);
    float4* out4 = reinterpret_cast<float4*>(out);

    float4 below = __ldg(f4 + max(k0 - 1, 0) * plane4 + row);
    float4 cur = __ldg(f4 + k0 * plane4 + row);
    for (int k = k0; k < k1; ++k) {
        const int base = k * plane4;
        float4 above = __ldg(f4 + min(k + 1, nz - 1) * plane4 + row);
        float4 ym, yp;
        if (SMEM) {
            // The block's own rows come from the tile; the two edge rows from memory.
            tile[ty + 1][lane] = cur;
            if (ty == 0) tile[0][lane] = __ldg(f4 + base + rowm);
            if (ty == TY - 1) tile[TY + 1][lane] = __ldg(f4 + base + rowp);
            __syncthreads();
            ym = tile[ty][lane];
            yp = tile[ty + 2][lane];
        } else {
            ym = __ldg(f4 + base + rowm);
            yp = __ldg(f4 + base + rowp);
        }
        float left = __shfl_up_sync(FULL_MASK, cur.w, 1);
        float right = __shfl_down_sync(FULL_MASK, cur.x, 1);
        const int e = k * nx * ny + jc * nx + x0;
        if (lane == 0 && x0 > 0) left = __ldg(f + e - 1);
        if (lane == 31 && x0 + 4 < nx) right = __ldg(f + e + 4);
        float gx0 = ax.d(x0, left, cur.x, cur.y), gx1 = ax.d(x0 + 1, cur.x, cur.y, cur.z);
        float gx2 = ax.d(x0 + 2, cur.y, cur.z, cur.w), gx3 = ax.d(x0 + 3, cur.z, cur.w, right);
        float gy0 = ay.d(jc, ym.x, cur.x, yp.x), gy1 = ay.d(jc, ym.y, cur.y, yp.y);
        float gy2 = ay.d(jc, ym.z, cur.z, yp.z), gy3 = ay.d(jc, ym.w, cur.w, yp.w);
        float gz0 = az.d(k, below.x, cur.x, above.x), gz1 = az.d(k, below.y, cur.y, above.y);
        float gz2 = az.d(k, below.z, cur.z, above.z), gz3 = az.d(k, below.w, cur.w, above.w);
        float4 o0 = make_float4(gx0, gy0, gz0, gx1), o1 = make_float4(gy1, gz1, gx2, gy2);
        float4 o2 = make_float4(gz2, gx3, gy3, gz3);
        if (STAGE) {
            const int q0 = blockIdx.x * 32;
            if (j < ny)
                store_staged(ostage[ty], out4 + 3 * (base + jc * nq + q0), lane,
                             3 * (nq - q0), o0, o1, o2);
        } else if (active) {
            float4* o = out4 + 3 * (base + row);
            __stcs(o, o0); __stcs(o + 1, o1); __stcs(o + 2, o2);
        }
        if (SMEM) __syncthreads();
        below = cur;
        cur = above;
    }
}

template <bool SMEM, int TY, int MIN_BLOCKS, bool STAGE>
__global__ void __launch_bounds__(32 * TY, MIN_BLOCKS) gradient_uniform_march(const float* __restrict__ f, float* __restrict__ out,
    int nx, int ny, int nz, int zc, float ihx, float ihy, float ihz)
{
    gradient_march<UniformAxis, SMEM, TY, STAGE>(f, out, nx, ny, nz, zc, UniformAxis{ihx, nx},
                                          UniformAxis{ihy, ny}, UniformAxis{ihz, nz});
}

template <int TY, bool STAGE>
__global__ void gradient_rectilinear_march(const float* __restrict__ f,
    float* __restrict__ out, int nx, int ny, int nz, int zc, const float* __restrict__ invx,
    const float* __restrict__ invy, const float* __restrict__ invz)
{
    gradient_march<RectilinearAxis, false, TY, STAGE>(f, out, nx, ny, nz, zc,
        RectilinearAxis{invx, nx}, RectilinearAxis{invy, ny}, RectilinearAxis{invz, nz});
}

// Curvilinear: the same index-space stencil applied to the field and to the
// point coordinates gives df/dxi and the Jacobian dx/dxi; the gradient solves
// J^T g = df/dxi (VTK's vtkGradientFilter on structured grids). One thread per
// point; neighbours through the caches. Points are float32 (n, 3).
__device__ __forceinline__ float xi_diff(int i, int n, float lo, float c, float hi)
{
    return i == 0 ? hi - c : i == n - 1 ? c - lo : 0.5f * (hi - lo);
}

extern "C" __global__ void gradient_curvilinear(const float* __restrict__ f,
    const float* __restrict__ pts, float* __restrict__ out, int nx, int ny, int nz)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int j = blockIdx.y * blockDim.y + threadIdx.y;
    int k = blockIdx.z;
    if (i >= nx || j >= ny) return;
    const int idx[3] = {i, j, k}, n[3] = {nx, ny, nz}, stride[3] = {1, nx, nx * ny};
    const int p = i + nx * j + nx * ny * k;
    float m[3][4];   // row l: d(x, y, z, f)/dxi_l
    const float fc = __ldg(f + p);
    const float xc = __ldg(pts + 3 * p), yc = __ldg(pts + 3 * p + 1), zc = __ldg(pts + 3 * p + 2);
#pragma unroll
    for (int l = 0; l < 3; ++l) {
        const int lo = idx[l] > 0 ? p - stride[l] : p;
        const int hi = idx[l] < n[l] - 1 ? p + stride[l] : p;
        m[l][0] = xi_diff(idx[l], n[l], __ldg(pts + 3 * lo), xc, __ldg(pts + 3 * hi));
        m[l][1] = xi_diff(idx[l], n[l], __ldg(pts + 3 * lo + 1), yc, __ldg(pts + 3 * hi + 1));
        m[l][2] = xi_diff(idx[l], n[l], __ldg(pts + 3 * lo + 2), zc, __ldg(pts + 3 * hi + 2));
        m[l][3] = xi_diff(idx[l], n[l], __ldg(f + lo), fc, __ldg(f + hi));
    }
    const float3 g = solve3(m);
    __stcs(out + 3 * p, g.x); __stcs(out + 3 * p + 1, g.y); __stcs(out + 3 * p + 2, g.z);
}

// ------------------------------------------------ curvilinear point gradient
// Marching version of gradient_curvilinear: one thread per point column walks a
// chunk of zc planes with (x, y, z, f) below, at and above in registers; x
// neighbours from the neighbouring lanes, y neighbours from the rows beside
// (L1). Needs blockDim.x == 32.
__device__ __forceinline__ float4 xyzf(const float* __restrict__ f,
                                       const float* __restrict__ pts, int p)
{
    return make_float4(__ldg(pts + 3 * p), __ldg(pts + 3 * p + 1), __ldg(pts + 3 * p + 2),
                       __ldg(f + p));
}

__device__ __forceinline__ float4 shfl4(float4 v, int delta, bool up)
{
    if (up) return make_float4(__shfl_up_sync(FULL_MASK, v.x, delta),
                               __shfl_up_sync(FULL_MASK, v.y, delta),
                               __shfl_up_sync(FULL_MASK, v.z, delta),
                               __shfl_up_sync(FULL_MASK, v.w, delta));
    return make_float4(__shfl_down_sync(FULL_MASK, v.x, delta),
                       __shfl_down_sync(FULL_MASK, v.y, delta),
                       __shfl_down_sync(FULL_MASK, v.z, delta),
                       __shfl_down_sync(FULL_MASK, v.w, delta));
}

__device__ __forceinline__ void xi_row(float* row, int i, int n, float4 lo, float4 c, float4 hi)
{
    row[0] = xi_diff(i, n, lo.x, c.x, hi.x);
    row[1] = xi_diff(i, n, lo.y, c.y, hi.y);
    row[2] = xi_diff(i, n, lo.z, c.z, hi.z);
    row[3] = xi_diff(i, n, lo.w, c.w, hi.w);
}

template <int TY, bool STAGE>
__global__ void gradient_curvilinear_march(const float* __restrict__ f,
    const float* __restrict__ pts, float* __restrict__ out, int nx, int ny, int nz, int zc)
{
    __shared__ float ostage[STAGE ? TY : 1][STAGE ? 96 : 1];
    const int lane = threadIdx.x;
    const int i = blockIdx.x * 32 + lane, j = blockIdx.y * TY + threadIdx.y;
    const bool active = i < nx && j < ny;
    const int ic = min(i, nx - 1), jc = min(j, ny - 1);
    const int sz = nx * ny, pc = ic + nx * jc;
    const int k0 = blockIdx.z * zc, k1 = min(k0 + zc, nz);
    float4 below = xyzf(f, pts, max(k0 - 1, 0) * sz + pc);
    float4 cur = xyzf(f, pts, k0 * sz + pc);
    for (int k = k0; k < k1; ++k) {
        const int p = k * sz + pc;
        float4 above = xyzf(f, pts, min(k + 1, nz - 1) * sz + pc);
        float4 ym = xyzf(f, pts, jc > 0 ? p - nx : p);
        float4 yp = xyzf(f, pts, jc < ny - 1 ? p + nx : p);
        float4 left = shfl4(cur, 1, true), right = shfl4(cur, 1, false);
        if (lane == 0 && ic > 0) left = xyzf(f, pts, p - 1);
        if (lane == 31 && ic < nx - 1) right = xyzf(f, pts, p + 1);
        float m[3][4];
        xi_row(m[0], ic, nx, left, cur, right);
        xi_row(m[1], jc, ny, ym, cur, yp);
        xi_row(m[2], k, nz, below, cur, above);
        const float3 g = solve3(m);
        const float gx = g.x, gy = g.y, gz = g.z;
        if (STAGE) {
            // 32 points x 3 components: three 128-byte rows instead of strided words.
            float* st = ostage[threadIdx.y];
            st[3 * lane] = gx; st[3 * lane + 1] = gy; st[3 * lane + 2] = gz;
            __syncwarp();
            const int i0 = blockIdx.x * 32, n_valid = 3 * (nx - i0);
            float* dst = out + 3 * (p - ic + i0);
            if (j < ny) {
#pragma unroll
                for (int s = 0; s < 3; ++s)
                    if (32 * s + lane < n_valid) __stcs(dst + 32 * s + lane, st[32 * s + lane]);
            }
            __syncwarp();
        } else if (active) {
            __stcs(out + 3 * p, gx); __stcs(out + 3 * p + 1, gy); __stcs(out + 3 * p + 2, gz);
        }
        below = cur;
        cur = above;
    }
}

#endif  // HAND_TUNED_GRADIENT_CUH
