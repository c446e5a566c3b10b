#pragma once
#include <cstdint>
#include <string>

namespace tensorlet {

enum class DeviceType : int8_t { CPU = 0, CUDA = 1, Meta = 2 };
constexpr int kNumDeviceTypes = 3;

struct Device {
  DeviceType type = DeviceType::CPU;
  int8_t index = -1;  // -1: "the current device" (only meaningful for CUDA)

  Device() = default;
  Device(DeviceType t, int8_t i = -1) : type(t), index(i) {}
  // Parses "cpu", "meta", "cuda", "cuda:1".
  explicit Device(const std::string& spec);

  bool is_cpu() const { return type == DeviceType::CPU; }
  bool is_cuda() const { return type == DeviceType::CUDA; }
  bool is_meta() const { return type == DeviceType::Meta; }
  bool operator==(const Device& o) const { return type == o.type && index == o.index; }
  bool operator!=(const Device& o) const { return !(*this == o); }
  std::string str() const;
};

const char* device_type_name(DeviceType t);

}  // namespace tensorlet
