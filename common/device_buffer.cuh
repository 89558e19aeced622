/// @file device_buffer.cuh
/// @brief An owning global-memory buffer (cudaMalloc/cudaFree) with upload, download, poison.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <utility>
#include <vector>

#include "cuda_check.cuh"
#include "fill.hpp"

namespace tut {

/// @brief @p count elements of T in device global memory, freed on destruction.
/// @note cudaMalloc returns 256-byte aligned memory, so data() satisfies every alignment the
///       async-copy instructions ask for (16 B for cp.async, 16 B for TMA bulk, 128 B for
///       swizzled TMA boxes) unless a chapter offsets it on purpose.
template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  /// @brief Allocate @p count elements (uninitialised).
  explicit DeviceBuffer(std::size_t count) : count_(count) {
    if (count_) CUDA_CHECK(cudaMalloc(&ptr_, count_ * sizeof(T)));
  }
  ~DeviceBuffer() {
    if (ptr_) CUDA_CHECK(cudaFree(ptr_));
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& other) noexcept { swap(other); }
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    swap(other);
    return *this;
  }

  T* data() { return ptr_; }
  const T* data() const { return ptr_; }
  std::size_t size() const { return count_; }
  std::size_t bytes() const { return count_ * sizeof(T); }

  /// @brief Copy @p host (exactly size() elements) to the device and wait until it landed.
  /// @note From pageable host memory, cudaMemcpy may return once the data is staged, before
  ///       the DMA into device memory has finished. Kernels run on non-blocking streams, which
  ///       do not wait for the legacy default stream, so without the device-wide
  ///       synchronisation a kernel could read the buffer while its tail is still arriving
  ///       (seen on the H200: the last elements of a 1 MiB input read as zero).
  void upload(const std::vector<T>& host) {
    CUDA_CHECK(cudaMemcpy(ptr_, host.data(), bytes(), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaDeviceSynchronize());
  }
  /// @brief Copy the buffer back to the host after the work queued on @p stream has finished.
  std::vector<T> download(cudaStream_t stream) const {
    std::vector<T> host(count_);
    CUDA_CHECK(cudaMemcpyAsync(host.data(), ptr_, bytes(), cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    return host;
  }
  /// @brief Overwrite every byte with kPoisonByte (each 32-bit word becomes kPoisonWord).
  void poison(cudaStream_t stream) {
    CUDA_CHECK(cudaMemsetAsync(ptr_, kPoisonByte, bytes(), stream));
  }

 private:
  void swap(DeviceBuffer& other) noexcept {
    std::swap(ptr_, other.ptr_);
    std::swap(count_, other.count_);
  }
  T* ptr_ = nullptr;
  std::size_t count_ = 0;
};

}  // namespace tut
