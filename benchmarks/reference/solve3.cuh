// The point gradient's 3x3 system, solved by Cramer's rule: m[l] holds
// d(x, y, z, f)/dxi_l, and g solves m[:, :3] g = m[:, 3] (0 where the system is
// singular). The hand-tuned (hand_tuned_gradient.cuh) and the generic
// (generic.cu) reference kernels share it, so they solve it alike; inlined,
// it compiles to the same instructions as the code it replaced.
#ifndef SOLVE3_CUH
#define SOLVE3_CUH

__device__ __forceinline__ float3 solve3(const float (&m)[3][4])
{
    float c00 = m[1][1] * m[2][2] - m[1][2] * m[2][1];
    float c01 = m[1][2] * m[2][0] - m[1][0] * m[2][2];
    float c02 = m[1][0] * m[2][1] - m[1][1] * m[2][0];
    float det = m[0][0] * c00 + m[0][1] * c01 + m[0][2] * c02;
    float inv = det != 0.0f ? 1.0f / det : 0.0f;
    float b0 = m[0][3], b1 = m[1][3], b2 = m[2][3];
    float gx = (b0 * c00 + b1 * (m[0][2] * m[2][1] - m[0][1] * m[2][2])
                + b2 * (m[0][1] * m[1][2] - m[0][2] * m[1][1])) * inv;
    float gy = (b0 * c01 + b1 * (m[0][0] * m[2][2] - m[0][2] * m[2][0])
                + b2 * (m[0][2] * m[1][0] - m[0][0] * m[1][2])) * inv;
    float gz = (b0 * c02 + b1 * (m[0][1] * m[2][0] - m[0][0] * m[2][1])
                + b2 * (m[0][0] * m[1][1] - m[0][1] * m[1][0])) * inv;
    return make_float3(gx, gy, gz);
}

#endif  // SOLVE3_CUH
