#pragma once

/// \file
/// Vectorisable float math for the CPU kernels written in C++: branch-free approximations of exp,
/// tanh, erf and the logistic function (a loop over an array of them auto-vectorises: no library
/// calls, no data-dependent branches; accurate to a few ulp over the float range, as the tests
/// check against the standard library), and sums and maxima with partial accumulators.

#include <cstdint>
#include <cstring>
#include <limits>

namespace tc {

/// The float with bit pattern `bits`.
inline float float_from_bits(std::uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

/// The bit pattern of `f`.
inline std::uint32_t bits_of(float f) {
  std::uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return bits;
}

/// c ? a : b as a bit mask (no branch, no conditional float operation): GCC's vectoriser does not
/// if-convert float selects under the default -ftrapping-math, but vectorises this.
inline float select_float(bool c, float a, float b) {
  const std::uint32_t mask = 0u - static_cast<std::uint32_t>(c);
  return float_from_bits((bits_of(a) & mask) | (bits_of(b) & ~mask));
}

/// x clamped to [lo, hi] (NaN stays NaN).
inline float clamp_to(float x, float lo, float hi) {
  const float a = select_float(x < lo, lo, x);
  return select_float(a > hi, hi, a);
}

/// e^x: Cody-Waite range reduction to r in [-ln2/2, ln2/2], Cephes' degree-6 polynomial for e^r,
/// and the power of two built from its exponent bits in two halves (so results in the subnormal
/// range and up to FLT_MAX are exact to a few ulp). NaN stays NaN.
inline float fast_exp(float x) {
  const float clamped = clamp_to(x, -103.9f, 88.7228394f);
  // Round x * log2(e) to the nearest integer n with the 1.5 * 2^23 trick (no float-to-int
  // conversion, which is undefined for NaN).
  const float shifted = clamped * 1.44269504088896341f + 12582912.0f;
  const float n = shifted - 12582912.0f;
  const float r = clamped - n * 0.693359375f + n * 2.12194440e-4f;
  const float z = r * r;
  float y = 1.9875691500e-4f;
  y = y * r + 1.3981999507e-3f;
  y = y * r + 8.3334519073e-3f;
  y = y * r + 4.1665795894e-2f;
  y = y * r + 1.6666665459e-1f;
  y = y * r + 5.0000001201e-1f;
  y = y * z + r + 1.0f;
  // n sits in the low mantissa bits of `shifted` (0x4B400000 is 1.5 * 2^23).
  const std::uint32_t ni = bits_of(shifted) - 0x4B400000u;
  const std::uint32_t half = static_cast<std::uint32_t>(static_cast<std::int32_t>(ni) >> 1);
  const float p1 = float_from_bits((half + 127u) << 23);
  const float p2 = float_from_bits((ni - half + 127u) << 23);
  const float result = y * p1 * p2;
  const float low = select_float(x < -103.9f, 0.0f, result);
  return select_float(x > 88.7228394f, std::numeric_limits<float>::infinity(), low);
}

/// tanh(x): a 13/6-degree rational approximation on [-7.9, 7.9], exactly +-1 beyond (where tanh
/// rounds to +-1), x itself for |x| < 0.0004. The coefficients are those of the XLA and Eigen implementations.
inline float fast_tanh(float x) {
  const float c = clamp_to(x, -7.90531110763549805f, 7.90531110763549805f);
  const float x2 = c * c;
  float p = -2.76076847742355e-16f;
  p = p * x2 + 2.00018790482477e-13f;
  p = p * x2 - 8.60467152213735e-11f;
  p = p * x2 + 5.12229709037114e-08f;
  p = p * x2 + 1.48572235717979e-05f;
  p = p * x2 + 6.37261928875436e-04f;
  p = p * x2 + 4.89352455891786e-03f;
  p = p * c;
  float q = 1.19825839466702e-06f;
  q = q * x2 + 1.18534705686654e-04f;
  q = q * x2 + 2.26843463243900e-03f;
  q = q * x2 + 4.89352518554385e-03f;
  const float saturated = select_float((x > 7.9f) | (x < -7.9f), select_float(x < 0.0f, -1.0f, 1.0f), p / q);
  return select_float((x < 0.0004f) & (x > -0.0004f), x, saturated);
}

/// erf(x): a 13/8-degree rational approximation on [-4, 4] (beyond it erf rounds to +-1), the
/// coefficients of the XLA and Eigen implementations.
inline float fast_erf(float x) {
  const float c = clamp_to(x, -4.0f, 4.0f);
  const float x2 = c * c;
  float p = -2.72614225801306e-10f;
  p = p * x2 + 2.77068142495902e-08f;
  p = p * x2 - 2.10102402082508e-06f;
  p = p * x2 - 5.69250639462346e-05f;
  p = p * x2 - 7.34990630326855e-04f;
  p = p * x2 - 2.95459980854025e-03f;
  p = p * x2 - 1.60960333262415e-02f;
  p = p * c;
  float q = -1.45660718464996e-05f;
  q = q * x2 - 2.13374055278905e-04f;
  q = q * x2 - 1.68282697438203e-03f;
  q = q * x2 - 7.37332916720468e-03f;
  q = q * x2 - 1.42647390514189e-02f;
  return p / q;
}

/// The logistic function 1 / (1 + e^-x).
inline float fast_sigmoid(float x) { return 1.0f / (1.0f + fast_exp(-x)); }

/// Below this, logistic_rational's absolute error (about 1e-7, from adding 0.5) is more than 1e-3
/// of the logistic function itself.
constexpr float kLogisticRationalFloor = -9.0f;

/// The logistic function for x >= kLogisticRationalFloor by a 9/10-degree rational function of x
/// (Eigen's coefficients; exactly 1 from 15.72 up, NaN stays NaN): one division and no exponent
/// bits, about twice as fast as fast_sigmoid. Below the floor it is an absolute approximation only
/// (see swish_of).
inline float logistic_rational(float x) {
  const float c = clamp_to(x, -18.0f, 15.7243833541870117f);
  const float x2 = c * c;
  float p = 4.37031012579801e-11f;
  p = p * x2 + 1.15627324459942e-07f;
  p = p * x2 + 6.08574864600143e-05f;
  p = p * x2 + 8.51377133304701e-03f;
  p = p * x2 + 2.48287947061529e-01f;
  p = p * c;
  float q = 6.10247389755681e-13f;
  q = q * x2 + 5.76102136993427e-09f;
  q = q * x2 + 6.29106785017040e-06f;
  q = q * x2 + 1.70198817374094e-03f;
  q = q * x2 + 1.16817656904453e-01f;
  q = q * x2 + 9.93151921023180e-01f;
  return p / q + 0.5f;
}

/// y[i] = x[i] * logistic(x[i]) (SiLU, swish) over [0, n); y may be x. By logistic_rational, in
/// chunks, except in a chunk holding a value below kLogisticRationalFloor, which takes fast_sigmoid.
inline void swish_of(const float* x, float* y, std::int64_t n) {
  constexpr std::int64_t kChunk = 256;
  for (std::int64_t begin = 0; begin < n; begin += kChunk) {
    const std::int64_t end = n - begin < kChunk ? n : begin + kChunk;
    int low = 0;
    for (std::int64_t i = begin; i < end; ++i) low |= static_cast<int>(x[i] < kLogisticRationalFloor);
    if (low == 0) {
      for (std::int64_t i = begin; i < end; ++i) y[i] = x[i] * logistic_rational(x[i]);
    } else {
      for (std::int64_t i = begin; i < end; ++i) y[i] = x[i] * fast_sigmoid(x[i]);
    }
  }
}

/// Sum of v[0, n) with eight partial sums (vectorisable without reassociation flags).
inline float sum_of(const float* v, std::int64_t n) {
  float part[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  std::int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int l = 0; l < 8; ++l) part[l] += v[i + l];
  }
  float s = ((part[0] + part[4]) + (part[1] + part[5])) + ((part[2] + part[6]) + (part[3] + part[7]));
  for (; i < n; ++i) s += v[i];
  return s;
}

/// Sum of a[i] * b[i] over [0, n), with 32 partial sums: independent multiply-add chains that fill
/// two AVX-512 registers, four AVX or eight SSE ones, so the adds' latency does not bound the loop.
inline float dot_of(const float* a, const float* b, std::int64_t n) {
  constexpr int kParts = 32;
  float part[kParts] = {};
  std::int64_t i = 0;
  for (; i + kParts <= n; i += kParts) {
    for (int l = 0; l < kParts; ++l) part[l] += a[i + l] * b[i + l];
  }
  for (int width = kParts / 2; width > 0; width /= 2) {
    for (int l = 0; l < width; ++l) part[l] += part[l + width];
  }
  float s = part[0];
  for (; i < n; ++i) s += a[i] * b[i];
  return s;
}

/// max(a, b) that returns NaN when either is NaN.
inline float nan_max(float a, float b) { return select_float((a > b) | (a != a), a, b); }

/// The largest of init and v[0, n), NaN if any is NaN.
inline float max_of(const float* v, std::int64_t n, float init) {
  float part[8];
  for (float& p : part) p = init;
  std::int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int l = 0; l < 8; ++l) part[l] = nan_max(v[i + l], part[l]);
  }
  float m = init;
  for (float p : part) m = nan_max(p, m);
  for (; i < n; ++i) m = nan_max(v[i], m);
  return m;
}

}  // namespace tc
