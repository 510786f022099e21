// Seed 000's four BiasAdd kernels, as the post writes them, for `daxpy bench bias`.
//
// TensorFlow's BiasNHWCKernel (the baseline) and the post's three variants:
// batched float4 fetches, the bias explicitly cached in shared memory with
// streaming loads and stores (__ldcv / __stwt, each byte is touched once), and
// both. All are grid-stride loops with the bias index taken modulo the bias
// length, like the originals. The float4 kernels need n % 4 == 0 and
// bias_size % 4 == 0 (the launcher in bias_study.py checks); the shared-memory
// kernels take 4 * bias_size bytes of dynamic shared memory.

// Baseline: TensorFlow's kernel (GPU_1D_KERNEL_LOOP, ldg loads).
extern "C" __global__ void bias_baseline(const float* __restrict__ input,
                                         const float* __restrict__ bias,
                                         float* __restrict__ output, int n, int bias_size)
{
    for (int index = blockIdx.x * blockDim.x + threadIdx.x; index < n;
         index += gridDim.x * blockDim.x) {
        int bias_offset = index % bias_size;
        output[index] = __ldg(input + index) + __ldg(bias + bias_offset);
    }
}

// Batched fetch: four floats per load and store.
extern "C" __global__ void bias_float4(const float* __restrict__ input,
                                       const float* __restrict__ bias,
                                       float* __restrict__ output, int n, int bias_size)
{
    int threadId = blockIdx.x * blockDim.x + threadIdx.x;
    for (int index = threadId; index < n / 4; index += gridDim.x * blockDim.x) {
        int bias_offset = ((index * 4) % bias_size) / 4;
        float4 bias_vec = reinterpret_cast<const float4*>(bias)[bias_offset];
        float4 input_vec = reinterpret_cast<const float4*>(input)[index];
        reinterpret_cast<float4*>(output)[index] = make_float4(
            input_vec.x + bias_vec.x, input_vec.y + bias_vec.y,
            input_vec.z + bias_vec.z, input_vec.w + bias_vec.w);
    }
}

// Explicit bias cache: the bias in shared memory, loaded once per block;
// input and output bypass the caches (streaming load, write-through store).
extern "C" __global__ void bias_shared_stream(const float* __restrict__ input,
                                              const float* __restrict__ bias,
                                              float* __restrict__ output, int n,
                                              int bias_size)
{
    extern __shared__ float shared_bias[];
    for (int index = threadIdx.x; index < bias_size; index += blockDim.x) {
        shared_bias[index] = bias[index];
    }
    __syncthreads();
    for (int index = blockIdx.x * blockDim.x + threadIdx.x; index < n;
         index += gridDim.x * blockDim.x) {
        int bias_offset = index % bias_size;
        __stwt(output + index, __ldcv(input + index) + shared_bias[bias_offset]);
    }
}

// Both: float4 fetches and the float4 bias cached in shared memory.
extern "C" __global__ void bias_float4_shared_stream(const float* __restrict__ input,
                                                     const float* __restrict__ bias,
                                                     float* __restrict__ output, int n,
                                                     int bias_size)
{
    extern __shared__ float4 shared_bias_vec[];
    for (int index = threadIdx.x; index < bias_size / 4; index += blockDim.x) {
        shared_bias_vec[index] = __ldg(reinterpret_cast<const float4*>(bias) + index);
    }
    __syncthreads();
    int threadId = blockIdx.x * blockDim.x + threadIdx.x;
    for (int index = threadId; index < n / 4; index += gridDim.x * blockDim.x) {
        int bias_offset = ((index * 4) % bias_size) / 4;
        float4 bias_vec = shared_bias_vec[bias_offset];
        float4 input_vec = __ldcv(reinterpret_cast<const float4*>(input) + index);
        __stwt(reinterpret_cast<float4*>(output) + index, make_float4(
            input_vec.x + bias_vec.x, input_vec.y + bias_vec.y,
            input_vec.z + bias_vec.z, input_vec.w + bias_vec.w));
    }
}
