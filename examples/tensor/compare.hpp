#pragma once

/// \file
/// Comparing a computed tensor with an expected one, elementwise within tolerances, naming the
/// worst element when they differ.

#include <string>

#include "tensor/tensor.hpp"

namespace tc {

/// Whether `actual` and `expected` have the same shape and every pair of elements satisfies
/// |actual - expected| <= atol + rtol * |expected| (numpy's allclose; NaN matches NaN, an infinity
/// matches only itself). When `worst` is given it receives a one-line account of the element
/// furthest outside (or, when all match, closest to) its tolerance: "3 of 24 elements differ;
/// worst at 17 [1,1,2]: 0.5 vs expected 0.25 (|diff| 0.25 > tolerance 0.00035)", or the shape
/// mismatch.
bool all_close(const Tensor& actual, const Tensor& expected, double rtol, double atol, std::string* worst = nullptr);

}  // namespace tc
