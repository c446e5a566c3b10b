#pragma once
// Philox4x32-10 (Salmon, Moraes, Dror, Shaw: "Parallel random numbers: as easy as 1, 2,
// 3", SC 2011), the counter-based generator of the CUDA backend's rand and randn: each
// counter gives four 32-bit words on its own, so every thread draws its elements with no
// state shared between threads. Written out here (no cuRAND): the host compiles it too,
// and test_cuda.py checks it against Random123's known-answer vectors without a GPU.
#include <cstdint>

#include "ops/HostDevice.h"

namespace tensorlet {

struct Philox4x32 {
  uint32_t v[4];
};

TL_HOST_DEVICE inline uint32_t philox_mulhi(uint32_t a, uint32_t b) {
  return static_cast<uint32_t>((static_cast<uint64_t>(a) * b) >> 32);
}

// The 10-round block function of (counter, key).
TL_HOST_DEVICE inline Philox4x32 philox4x32_10(Philox4x32 c, uint32_t k0, uint32_t k1) {
  constexpr uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;  // multipliers
  constexpr uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;  // Weyl key increments
  for (int round = 0; round < 10; ++round) {
    if (round > 0) k0 += kW0, k1 += kW1;
    const uint32_t hi0 = philox_mulhi(kM0, c.v[0]), lo0 = kM0 * c.v[0];
    const uint32_t hi1 = philox_mulhi(kM1, c.v[2]), lo1 = kM1 * c.v[2];
    c = Philox4x32{{hi1 ^ c.v[1] ^ k0, lo1, hi0 ^ c.v[3] ^ k1, lo0}};
  }
  return c;
}

// The words of counter number `index` under a 64-bit seed: the index fills the counter's
// low 64 bits, the seed is the key.
TL_HOST_DEVICE inline Philox4x32 philox_at(uint64_t seed, uint64_t index) {
  const Philox4x32 counter{{static_cast<uint32_t>(index), static_cast<uint32_t>(index >> 32), 0u, 0u}};
  return philox4x32_10(counter, static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32));
}

// Uniform in [0, 1) and in (0, 1] (a logarithm's argument), from 24 bits (float) or 53 bits
// (double): every value a multiple of 2^-24 or 2^-53, so none rounds up to 1.
TL_HOST_DEVICE inline float uniform_float(uint32_t w) { return static_cast<float>(w >> 8) * 0x1.0p-24f; }
TL_HOST_DEVICE inline float uniform_float_open0(uint32_t w) { return static_cast<float>((w >> 8) + 1) * 0x1.0p-24f; }
TL_HOST_DEVICE inline double uniform_double(uint32_t hi, uint32_t lo) {
  return static_cast<double>(((static_cast<uint64_t>(hi) << 32) | lo) >> 11) * 0x1.0p-53;
}
TL_HOST_DEVICE inline double uniform_double_open0(uint32_t hi, uint32_t lo) {
  return static_cast<double>((((static_cast<uint64_t>(hi) << 32) | lo) >> 11) + 1) * 0x1.0p-53;
}

}  // namespace tensorlet
