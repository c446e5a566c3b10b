#include "core/Device.h"

#include <cstdlib>
#include <mutex>

#include "core/Allocator.h"
#include "core/Exception.h"

namespace tensorlet {

const char* device_type_name(DeviceType t) {
  switch (t) {
    case DeviceType::CPU: return "cpu";
    case DeviceType::CUDA: return "cuda";
    case DeviceType::Meta: return "meta";
  }
  return "?";
}

Device::Device(const std::string& spec) {
  std::string kind = spec;
  auto colon = spec.find(':');
  if (colon != std::string::npos) {
    kind = spec.substr(0, colon);
    index = static_cast<int8_t>(std::atoi(spec.c_str() + colon + 1));
  }
  if (kind == "cpu") type = DeviceType::CPU;
  else if (kind == "cuda") type = DeviceType::CUDA;
  else if (kind == "meta") type = DeviceType::Meta;
  else throw ValueError("Expected one of cpu, cuda, meta device type at start of device string: " + spec);
}

std::string Device::str() const {
  std::string s = device_type_name(type);
  if (index >= 0) s += ":" + std::to_string(index);
  return s;
}

// ---- allocator registry ----------------------------------------------------

namespace {
Allocator* g_allocators[kNumDeviceTypes] = {};
}

void set_allocator(DeviceType type, Allocator* allocator) { g_allocators[static_cast<int>(type)] = allocator; }

bool has_allocator(DeviceType type) { return g_allocators[static_cast<int>(type)] != nullptr; }

Allocator* get_allocator(DeviceType type) {
  Allocator* a = g_allocators[static_cast<int>(type)];
  TL_CHECK(a, "no allocator for device '", device_type_name(type), "'",
           type == DeviceType::CUDA ? ": tensorlet was built without CUDA or libtensorlet_cuda is not loaded" : "");
  return a;
}

}  // namespace tensorlet
