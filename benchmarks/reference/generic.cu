// Deliberately generic kernels: the analog of "unmodified Dax" in seed 004.
//
// One kernel per worklet serves every grid type, cell shape, dtype and
// component count, deciding at run time: the grid is a descriptor read from
// device memory, every field access switches on the dtype, every corner or
// neighbour lookup switches on the grid type and recomputes the cell's (i, j, k),
// loops over corners and components have run-time trip counts, and indices
// are 64-bit. Arithmetic is float (Dax's DaxScalar). Nothing here is slow on
// purpose beyond being generic; it is what a single, switch-based kernel looks like.
// benchmarks/reference/generic.py packs the descriptor and launches these.

#include "solve3.cuh"

enum GridType { UNIFORM = 0, RECTILINEAR = 1, CURVILINEAR = 2, UNSTRUCTURED = 3 };
enum DType { F32 = 0, F64 = 1, I32 = 2, I64 = 3 };

// Every member is 8 bytes, so the host packs it without padding rules.
struct GridDesc {
    long long type, nx, ny, nz, n_cells, pts_dtype;
    double origin[3], spacing[3];
    const double* coords[3];            // rectilinear axes
    const void* pts;                    // curvilinear / unstructured (n, 3)
    const long long* conn;              // unstructured
    const long long* offsets;
    const unsigned char* cell_types;
    const long long* link_offsets;      // point -> cell links (CSR), unstructured
    const long long* link_cells;
};

__device__ double load_value(const void* p, long long dtype, long long i)
{
    switch (dtype) {
        case F32: return ((const float*)p)[i];
        case F64: return ((const double*)p)[i];
        case I32: return ((const int*)p)[i];
        case I64: return (double)((const long long*)p)[i];
    }
    return 0.0;
}

__device__ void store_value(void* p, long long dtype, long long i, double v)
{
    switch (dtype) {
        case F32: ((float*)p)[i] = (float)v; break;
        case F64: ((double*)p)[i] = v; break;
        case I32: ((int*)p)[i] = (int)v; break;
        case I64: ((long long*)p)[i] = (long long)v; break;
    }
}

__device__ long long grid_n_points(const GridDesc* g)
{
    return g->nx * g->ny * g->nz;
}

__device__ int structured_dimension(const GridDesc* g)
{
    return (g->nx > 1) + (g->ny > 1) + (g->nz > 1);
}

__device__ int cell_n_corners(const GridDesc* g, long long cell)
{
    switch (g->type) {
        case UNIFORM: case RECTILINEAR: case CURVILINEAR:
            return 1 << structured_dimension(g);
        case UNSTRUCTURED:
            switch (g->cell_types[cell]) {
                case 1: return 1;  case 3: return 2;  case 5: return 3;  case 9: return 4;
                case 10: return 4; case 12: return 8; case 13: return 6; case 14: return 5;
            }
    }
    return 0;
}

// Point id of corner c of a cell; structured cells recompute (i, j, k) on
// every call, as Dax's GetConnectedElement did.
__device__ long long cell_corner(const GridDesc* g, long long cell, int c)
{
    switch (g->type) {
        case UNIFORM: case RECTILINEAR: case CURVILINEAR: {
            long long n[3] = {g->nx, g->ny, g->nz};
            long long cx = n[0] > 1 ? n[0] - 1 : 1, cy = n[1] > 1 ? n[1] - 1 : 1;
            long long ijk[3] = {cell % cx, (cell / cx) % cy, cell / (cx * cy)};
            int bit = 0;
            for (int a = 0; a < 3; ++a) {
                if (n[a] > 1) { ijk[a] += (c >> bit) & 1; ++bit; }
            }
            return ijk[0] + n[0] * (ijk[1] + n[1] * ijk[2]);
        }
        case UNSTRUCTURED:
            return g->conn[g->offsets[cell] + c];
    }
    return 0;
}

__device__ void point_coordinates(const GridDesc* g, long long p, double xyz[3])
{
    long long ijk[3] = {p % g->nx, (p / g->nx) % g->ny, p / (g->nx * g->ny)};
    switch (g->type) {
        case UNIFORM:
            for (int a = 0; a < 3; ++a) xyz[a] = g->origin[a] + g->spacing[a] * ijk[a];
            break;
        case RECTILINEAR:
            for (int a = 0; a < 3; ++a) xyz[a] = g->coords[a][ijk[a]];
            break;
        case CURVILINEAR: case UNSTRUCTURED:
            for (int a = 0; a < 3; ++a) xyz[a] = load_value(g->pts, g->pts_dtype, 3 * p + a);
            break;
    }
}

// Neighbour of point p along axis a (dir -1 or +1), clamped to the grid.
__device__ long long point_neighbor(const GridDesc* g, long long p, int a, int dir)
{
    switch (g->type) {
        case UNIFORM: case RECTILINEAR: case CURVILINEAR: {
            long long n[3] = {g->nx, g->ny, g->nz};
            long long ijk[3] = {p % n[0], (p / n[0]) % n[1], p / (n[0] * n[1])};
            long long v = ijk[a] + dir;
            if (v < 0 || v >= n[a]) return p;
            ijk[a] = v;
            return ijk[0] + n[0] * (ijk[1] + n[1] * ijk[2]);
        }
    }
    return p;
}

extern "C" __global__ void pass_through_generic(const void* in, long long in_dtype,
    void* out, long long out_dtype, long long n)
{
    for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < n;
         e += (long long)gridDim.x * blockDim.x)
        store_value(out, out_dtype, e, load_value(in, in_dtype, e));
}

extern "C" __global__ void bias_add_generic(const void* in, long long dtype,
    const void* bias, long long bias_dtype, long long nb, void* out, long long n)
{
    for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < n;
         e += (long long)gridDim.x * blockDim.x) {
        float v = (float)load_value(in, dtype, e) + (float)load_value(bias, bias_dtype, e % nb);
        store_value(out, dtype, e, v);
    }
}

extern "C" __global__ void magnitude_generic(const void* in, long long dtype,
    long long ncomp, void* out, long long n)
{
    for (long long p = blockIdx.x * (long long)blockDim.x + threadIdx.x; p < n;
         p += (long long)gridDim.x * blockDim.x) {
        float s = 0.0f;
        for (long long c = 0; c < ncomp; ++c) {
            float v = (float)load_value(in, dtype, p * ncomp + c);
            s += v * v;
        }
        store_value(out, dtype, p, sqrtf(s));
    }
}

extern "C" __global__ void point_to_cell_generic(const GridDesc* g, const void* in,
    long long dtype, long long ncomp, void* out)
{
    for (long long cell = blockIdx.x * (long long)blockDim.x + threadIdx.x;
         cell < g->n_cells; cell += (long long)gridDim.x * blockDim.x) {
        int corners = cell_n_corners(g, cell);
        for (long long comp = 0; comp < ncomp; ++comp) {
            float s = 0.0f;
            for (int c = 0; c < corners; ++c)
                s += (float)load_value(in, dtype, cell_corner(g, cell, c) * ncomp + comp);
            store_value(out, dtype, cell * ncomp + comp, s / corners);
        }
    }
}

extern "C" __global__ void cell_to_point_generic(const GridDesc* g, const void* in,
    long long dtype, long long ncomp, void* out)
{
    long long n_points = grid_n_points(g);
    for (long long p = blockIdx.x * (long long)blockDim.x + threadIdx.x; p < n_points;
         p += (long long)gridDim.x * blockDim.x) {
        for (long long comp = 0; comp < ncomp; ++comp) {
            float s = 0.0f;
            int count = 0;
            switch (g->type) {
                case UNIFORM: case RECTILINEAR: case CURVILINEAR: {
                    long long n[3] = {g->nx, g->ny, g->nz};
                    long long cn[3] = {n[0] > 1 ? n[0] - 1 : 1, n[1] > 1 ? n[1] - 1 : 1,
                                       n[2] > 1 ? n[2] - 1 : 1};
                    long long ijk[3] = {p % n[0], (p / n[0]) % n[1], p / (n[0] * n[1])};
                    for (int d = 0; d < 8; ++d) {
                        long long cijk[3];
                        bool inside = true;
                        for (int a = 0; a < 3; ++a) {
                            long long step = (d >> a) & 1;
                            if (n[a] == 1 && step) inside = false;
                            cijk[a] = n[a] == 1 ? 0 : ijk[a] - step;
                            if (cijk[a] < 0 || cijk[a] >= cn[a]) inside = false;
                        }
                        if (!inside) continue;
                        long long cell = cijk[0] + cn[0] * (cijk[1] + cn[1] * cijk[2]);
                        s += (float)load_value(in, dtype, cell * ncomp + comp);
                        ++count;
                    }
                    break;
                }
                case UNSTRUCTURED:
                    for (long long l = g->link_offsets[p]; l < g->link_offsets[p + 1]; ++l) {
                        s += (float)load_value(in, dtype, g->link_cells[l] * ncomp + comp);
                        ++count;
                    }
                    break;
            }
            store_value(out, dtype, p * ncomp + comp, count ? s / count : 0.0f);
        }
    }
}

// Structured point gradient through the general Jacobian path for every grid
// type (uniform included): index-space differences of the field and of the
// coordinates, then J^T g = df/dxi. A one-point axis contributes a unit row.
extern "C" __global__ void point_gradient_generic(const GridDesc* g, const void* in,
    long long dtype, void* out)
{
    long long n_points = grid_n_points(g);
    for (long long p = blockIdx.x * (long long)blockDim.x + threadIdx.x; p < n_points;
         p += (long long)gridDim.x * blockDim.x) {
        long long n[3] = {g->nx, g->ny, g->nz};
        float m[3][4];
        double xc[3];
        point_coordinates(g, p, xc);
        for (int a = 0; a < 3; ++a) {
            long long lo = point_neighbor(g, p, a, -1), hi = point_neighbor(g, p, a, +1);
            if (n[a] == 1) {
                for (int b = 0; b < 3; ++b) m[a][b] = a == b ? 1.0f : 0.0f;
                m[a][3] = 0.0f;
                continue;
            }
            float w = (lo == p || hi == p) ? 1.0f : 0.5f;
            double xl[3], xh[3];
            point_coordinates(g, lo, xl);
            point_coordinates(g, hi, xh);
            for (int b = 0; b < 3; ++b) m[a][b] = w * (float)(xh[b] - xl[b]);
            m[a][3] = w * (float)(load_value(in, dtype, hi) - load_value(in, dtype, lo));
        }
        const float3 g = solve3(m);
        const float gv[3] = {g.x, g.y, g.z};
        for (int a = 0; a < 3; ++a) store_value(out, dtype, 3 * p + a, gv[a]);
    }
}
