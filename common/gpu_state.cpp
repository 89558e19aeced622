#include "gpu_state.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cstdio>

namespace tut {

namespace {

// The few NVML entry points used, with the signatures of nvml.h (which the toolkit here does
// not ship): every call returns 0 (NVML_SUCCESS) on success; a device is an opaque handle.
using NvmlDevice = struct NvmlDeviceOpaque*;
using NvmlInit = int (*)();
using NvmlHandleByBusId = int (*)(const char*, NvmlDevice*);
using NvmlClockInfo = int (*)(NvmlDevice, int, unsigned*);
using NvmlPowerUsage = int (*)(NvmlDevice, unsigned*);
using NvmlTemperature = int (*)(NvmlDevice, int, unsigned*);
using NvmlClockReasons = int (*)(NvmlDevice, unsigned long long*);

constexpr int kNvmlClockSm = 1;          // NVML_CLOCK_SM
constexpr int kNvmlTemperatureGpu = 0;   // NVML_TEMPERATURE_GPU
constexpr unsigned long long kReasonIdle = 0x1;  // nvmlClocksThrottleReasonGpuIdle

struct Nvml {
  bool ready = false;
  NvmlHandleByBusId handle_by_bus_id = nullptr;
  NvmlClockInfo clock_info = nullptr;
  NvmlPowerUsage power_usage = nullptr;
  NvmlTemperature temperature = nullptr;
  NvmlClockReasons clock_reasons = nullptr;
};

const Nvml& nvml() {
  static const Nvml lib = [] {
    Nvml n;
    void* so = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!so) return n;
    const auto init = reinterpret_cast<NvmlInit>(dlsym(so, "nvmlInit_v2"));
    n.handle_by_bus_id =
        reinterpret_cast<NvmlHandleByBusId>(dlsym(so, "nvmlDeviceGetHandleByPciBusId_v2"));
    n.clock_info = reinterpret_cast<NvmlClockInfo>(dlsym(so, "nvmlDeviceGetClockInfo"));
    n.power_usage = reinterpret_cast<NvmlPowerUsage>(dlsym(so, "nvmlDeviceGetPowerUsage"));
    n.temperature = reinterpret_cast<NvmlTemperature>(dlsym(so, "nvmlDeviceGetTemperature"));
    n.clock_reasons = reinterpret_cast<NvmlClockReasons>(
        dlsym(so, "nvmlDeviceGetCurrentClocksThrottleReasons"));
    n.ready = init && n.handle_by_bus_id && n.clock_info && n.power_usage && n.temperature &&
              n.clock_reasons && init() == 0;
    return n;
  }();
  return lib;
}

}  // namespace

GpuState sample_gpu_state(const std::string& pci_bus_id) {
  GpuState s;
  const Nvml& n = nvml();
  if (!n.ready || pci_bus_id.empty()) return s;
  NvmlDevice dev = nullptr;
  if (n.handle_by_bus_id(pci_bus_id.c_str(), &dev) != 0) return s;
  unsigned milliwatts = 0;
  s.known = n.clock_info(dev, kNvmlClockSm, &s.sm_mhz) == 0 &&
            n.power_usage(dev, &milliwatts) == 0 &&
            n.temperature(dev, kNvmlTemperatureGpu, &s.temperature_c) == 0 &&
            n.clock_reasons(dev, &s.reasons) == 0;
  s.power_w = milliwatts / 1000.0;
  return s;
}

std::string clock_reasons_text(unsigned long long mask) {
  // NVML's clock-limit reason bits (nvmlClocksThrottleReason*).
  static const struct { unsigned long long bit; const char* name; } kNames[] = {
      {0x2, "applications clocks setting"}, {0x4, "SW power cap"}, {0x8, "HW slowdown"},
      {0x10, "sync boost"}, {0x20, "SW thermal slowdown"}, {0x40, "HW thermal slowdown"},
      {0x80, "HW power brake"}, {0x100, "display clock setting"}};
  std::string text;
  unsigned long long named = kReasonIdle;
  for (const auto& r : kNames) {
    named |= r.bit;
    if (mask & r.bit) text += (text.empty() ? "" : ", ") + std::string(r.name);
  }
  if (mask & ~named) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "other (0x%llx)", mask & ~named);
    text += (text.empty() ? "" : ", ") + std::string(buf);
  }
  return text.empty() ? "none" : text;
}

void GpuStateLog::add(const GpuState& state) {
  if (state.known) known_.push_back(state);
  else ++unknown_;
}

unsigned long long GpuStateLog::limits_seen() const {
  unsigned long long mask = 0;
  for (const GpuState& s : known_) mask |= s.reasons & ~kReasonIdle;
  return mask;
}

std::string GpuStateLog::summary() const {
  if (known_.empty())
    return unknown_ > 0 ? "GPU state: not read (NVML, libnvidia-ml.so.1, did not answer)"
                        : "GPU state: no timed block";
  const auto by = [this](auto field) {
    const auto [lo, hi] = std::minmax_element(known_.begin(), known_.end(),
                                              [&](const GpuState& a, const GpuState& b) {
                                                return field(a) < field(b);
                                              });
    return std::make_pair(field(*lo), field(*hi));
  };
  const auto mhz = by([](const GpuState& s) { return double(s.sm_mhz); });
  const auto watts = by([](const GpuState& s) { return s.power_w; });
  const auto celsius = by([](const GpuState& s) { return double(s.temperature_c); });
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "GPU state (NVML, %d readings: the start and end of each timed block): SM clock "
                "%.0f-%.0f MHz, power %.0f-%.0f W, %.0f-%.0f C, clock limits: %s",
                known_count(), mhz.first, mhz.second, watts.first, watts.second, celsius.first,
                celsius.second, clock_reasons_text(limits_seen()).c_str());
  return buf;
}

}  // namespace tut
