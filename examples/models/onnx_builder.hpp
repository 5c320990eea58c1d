#pragma once

/// \file
/// OnnxBuilder: writes ONNX models node by node, the way an exporter does (opset 17), for the
/// project's own test and demo models.

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <collage/support/result.hpp>

#include "tensor/tensor.hpp"

namespace tc {

/// An ONNX attribute for OnnxBuilder::node: an int, a float, an int list or a float list.
struct OnnxAttr {
  std::string name;
  enum class Type { int_, float_, ints, floats } type = Type::int_;
  std::int64_t i = 0;
  float f = 0;
  std::vector<std::int64_t> ints;
  std::vector<float> floats;

  static OnnxAttr of(std::string name, std::int64_t v);
  static OnnxAttr of(std::string name, float v);
  static OnnxAttr of(std::string name, std::vector<std::int64_t> v);
};

/// Builds an ONNX ModelProto. Value names are made unique by the builder ("conv_7").
class OnnxBuilder {
 public:
  /// A model named `name`, producer "collage-examples", opset 17.
  explicit OnnxBuilder(std::string name, std::uint64_t seed = 1);
  ~OnnxBuilder();
  OnnxBuilder(const OnnxBuilder&) = delete;
  OnnxBuilder& operator=(const OnnxBuilder&) = delete;

  /// A float32 graph input; returns its value name.
  std::string input(const std::string& name, const Shape& shape);
  /// A float32 initializer holding `value`; returns its name.
  std::string initializer(const std::string& hint, const Tensor& value);
  /// An int64 initializer (shapes, axes); returns its name.
  std::string int64_initializer(const std::string& hint, const std::vector<std::int64_t>& values, const Shape& shape);
  /// A float32 initializer of `shape` with seeded values uniform in [-scale, scale].
  std::string random_weight(const std::string& hint, const Shape& shape, float scale);
  /// A node of `op` over `inputs` with one output; returns the output's name.
  std::string node(const std::string& op, const std::vector<std::string>& inputs, const std::vector<OnnxAttr>& attrs = {});
  /// A node with `outputs` outputs; returns their names.
  std::vector<std::string> node_n(const std::string& op, const std::vector<std::string>& inputs, std::size_t outputs,
                                  const std::vector<OnnxAttr>& attrs = {});
  /// Marks `value` a graph output of `shape` (float32).
  void output(const std::string& value, const Shape& shape);

  /// The serialised model.
  std::string serialize() const;
  /// Writes the model to `path`.
  collage::Status save(const std::string& path) const;

  std::mt19937_64& rng() { return rng_; }

 private:
  std::string fresh(const std::string& hint);

  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::mt19937_64 rng_;
  std::size_t counter_ = 0;
};

}  // namespace tc
