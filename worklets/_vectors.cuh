// Values in registers and in memory for daxpy's generated kernels: 3-vectors
// (coordinates, metric rows, gradients), read-only loads, and V consecutive
// elements moved as vector words.
#ifndef DAXPY_VECTORS_CUH
#define DAXPY_VECTORS_CUH

namespace dax {

template <typename T> struct V3 { T x, y, z; };

template <typename T>
__device__ __forceinline__ V3<T> operator+(V3<T> a, V3<T> b) { return {a.x + b.x, a.y + b.y, a.z + b.z}; }
template <typename T>
__device__ __forceinline__ V3<T> operator-(V3<T> a, V3<T> b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
template <typename T>
__device__ __forceinline__ V3<T> operator*(T s, V3<T> a) { return {s * a.x, s * a.y, s * a.z}; }
template <typename T>
__device__ __forceinline__ T dot(V3<T> a, V3<T> b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
template <typename T>
__device__ __forceinline__ V3<T> cross(V3<T> a, V3<T> b) {
  return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}

// Read-only loads through the non-coherent cache.
template <typename T> __device__ __forceinline__ T load(const T* p) { return __ldg(p); }

// Point p of an (n_points, 3) coordinate array.
template <typename T, typename I>
__device__ __forceinline__ V3<T> load_point(const T* xyz, I p) {
  return {load(xyz + 3 * p), load(xyz + 3 * p + 1), load(xyz + 3 * p + 2)};
}

// Vector memory access: V consecutive elements moved as 16-byte (or smaller)
// words. Elementwise maps use read-only loads and plain stores: streaming
// hints measured equal or slower on the H200 (benchmarks/NOTES.md).
template <int B> struct Word;
template <> struct Word<16> { typedef uint4 type; };
template <> struct Word<8> { typedef uint2 type; };
template <> struct Word<4> { typedef unsigned int type; };
template <> struct Word<2> { typedef unsigned short type; };
template <> struct Word<1> { typedef unsigned char type; };

// Widest word (up to 16 bytes) that divides B bytes: 12 bytes move as three
// 4-byte words, 48 as three 16-byte ones.
template <int B> struct WordSize {
  static constexpr int value = B % 16 == 0 ? 16 : B % 8 == 0 ? 8 : B % 4 == 0 ? 4 : B % 2 == 0 ? 2 : 1;
};

// V elements of T seen as 16-byte (or smaller) words; the union keeps the
// elements in registers (nvcc and NVRTC both accept this type punning).
template <int V, typename T> struct Pack {
  static constexpr int bytes = V * int(sizeof(T)), word = WordSize<bytes>::value;
  typedef typename Word<word>::type W;
  union { T x[V]; W w[bytes / word]; };
};

template <int V, typename T>
__device__ __forceinline__ void load_vector(const T* p, T (&x)[V]) {
  Pack<V, T> pack;
  const auto* words = reinterpret_cast<const typename Pack<V, T>::W*>(p);
#pragma unroll
  for (int i = 0; i < Pack<V, T>::bytes / Pack<V, T>::word; ++i) pack.w[i] = __ldg(words + i);
#pragma unroll
  for (int v = 0; v < V; ++v) x[v] = pack.x[v];
}

// The name marks data that neighbours read again; the load is load_vector's
// read-only-cache one (streaming loads lost even on elementwise maps,
// benchmarks/NOTES.md).
template <int V, typename T>
__device__ __forceinline__ void load_cached(const T* p, T (&x)[V]) {
  load_vector<V, T>(p, x);
}

template <int V, typename T>
__device__ __forceinline__ void store_vector(T* p, const T (&x)[V]) {
  Pack<V, T> pack;
#pragma unroll
  for (int v = 0; v < V; ++v) pack.x[v] = x[v];
  auto* words = reinterpret_cast<typename Pack<V, T>::W*>(p);
#pragma unroll
  for (int i = 0; i < Pack<V, T>::bytes / Pack<V, T>::word; ++i) words[i] = pack.w[i];
}

}  // namespace dax

#endif  // DAXPY_VECTORS_CUH
