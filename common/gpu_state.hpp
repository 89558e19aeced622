/// @file gpu_state.hpp
/// @brief The GPU's clock, power, temperature and clock-limit reasons, read through NVML at the
///        start and end of every timed block, so a table can show that the clocks held while it
///        was measured (host only; NVML is loaded at run time, never linked).
#pragma once

#include <string>
#include <vector>

namespace tut {

/// @brief One reading of the GPU's state.
struct GpuState {
  bool known = false;               ///< false: NVML is not there (no driver) or the read failed
  unsigned sm_mhz = 0;              ///< current SM clock
  double power_w = 0;               ///< board power draw (NVML: averaged over one second on
                                    ///< GPUs after GA100, so it lags a short timed block)
  unsigned temperature_c = 0;       ///< GPU core temperature
  unsigned long long reasons = 0;   ///< NVML's clock-limit ("throttle") reason bits
};

/// @brief Read the state of the GPU at PCI bus id @p pci_bus_id ("0000:19:00.0", as
///        cudaDeviceGetPCIBusId writes it). NVML (libnvidia-ml.so.1, part of the driver) is
///        opened with dlopen on the first call, so a machine without a driver still runs the
///        program: it gets `known = false`, as it does for any failed read.
GpuState sample_gpu_state(const std::string& pci_bus_id);

/// @brief The clock-limit reasons of @p mask in words ("SW power cap, HW slowdown"), "none"
///        for 0. "idle" (nothing was running at the instant of the reading) is not a limit.
std::string clock_reasons_text(unsigned long long mask);

/// @brief The readings of a whole run: their range, in one line for the table's footer.
class GpuStateLog {
 public:
  /// @brief Add one reading (unknown ones count only towards "not read").
  void add(const GpuState& state);
  /// @brief "SM clock 1980-1980 MHz, power 310-690 W, 38-52 C, clock limits: none (NVML, 24
  ///        readings: the start and end of each timed block)", or why there is nothing to show.
  std::string summary() const;
  /// @brief Clock-limit reasons other than idle seen in any reading, OR-ed together.
  unsigned long long limits_seen() const;
  /// @brief How many readings were known.
  int known_count() const { return static_cast<int>(known_.size()); }

 private:
  std::vector<GpuState> known_;
  int unknown_ = 0;
};

}  // namespace tut
