#pragma once

/// \file
/// The opset-18 to 27 forms of the ONNX backend node tests. Debian's libonnx-testdata is ONNX 1.12
/// and stops at opset 17; the operators that changed in opsets 18-27 get their tests here: each
/// opset-17 test of such an operator rewritten to the new definition (same data), and new tests
/// for what has no opset-17 test (Gelu-20, Pad-19's wrap mode, Attention-23, RMSNormalization-23,
/// RotaryEmbedding-23, Swish-24) with expected outputs computed here.

#include <optional>
#include <string>
#include <vector>

#include <collage/support/result.hpp>

#include "onnx/model.hpp"
#include "onnx/tensor_proto.hpp"

namespace tc {

/// The first and last opsets the forms are written for.
inline constexpr int kFirstUpgradeOpset = 18;
inline constexpr int kLastUpgradeOpset = 27;

/// The opsets in 18..27 at which an operator of `model` that these forms rewrite changed, sorted.
std::vector<int> upgrade_targets(const OnnxModel& model);

/// One form of a model at a new opset: `suffix` is appended to the test's name ("_opset18",
/// "_opset18_axes").
struct UpgradedModel {
  std::string suffix;
  OnnxModel model;
};

/// The forms of the opset-17 `model` at opset `target` (18..27): the reductions' axes attribute
/// as an input (18), Split's num_outputs for equal parts (18), Pad with and without explicit axes
/// (18), every other operator of the model as it is. An error (invalid_argument) saying why when
/// the model cannot be rewritten faithfully: another opset, a value that is not a tensor, an
/// attribute parse_model() left out, an operator that changed in a way not rewritten here.
collage::Result<std::vector<UpgradedModel>> upgrade_model(const OnnxModel& model, int target);

/// A node test made here: the model and one data set.
struct NewNodeTest {
  std::string name;  ///< the test directory ("test_gelu_tanh_2_opset20")
  OnnxModel model;
  std::vector<OnnxTensor> inputs;   ///< input_N.pb, in the model's input order
  std::vector<OnnxTensor> outputs;  ///< output_N.pb
};

/// Gelu-20 as the ONNX spec defines it, in double: 0.5 x (1 + erf(x / sqrt 2)), or with `tanh`
/// 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))).
double gelu_reference(double x, bool tanh);

/// RotaryEmbedding-23 in double, rounded to float32, as ONNX's definition computes it: for each
/// token and head of x (3-D [B, S, heads * D] or 4-D [B, heads, S, D]) its first `dim` channels
/// split in halves, or into even and odd ones when `interleaved`, rotated by the caches' row of
/// the token (`positions`, B * S of them, index the caches' rows when not empty).
OnnxTensor rotary_embedding_reference(const OnnxTensor& x, const OnnxTensor& cos, const OnnxTensor& sin,
                                      const std::vector<std::int64_t>& positions, bool interleaved, std::int64_t dim,
                                      std::int64_t heads);

/// Attention-23's attributes that attention_reference() follows.
struct AttentionOptions {
  bool causal = false;
  std::optional<double> scale;  ///< default 1 / sqrt(head size)
  double softcap = 0;
  std::int64_t q_heads = 0;   ///< q_num_heads, for 3-D inputs
  std::int64_t kv_heads = 0;  ///< kv_num_heads, for 3-D inputs
};

/// Attention-23's outputs: Y and the key and value caches it hands on, [B, kv heads, P + S, size].
struct AttentionOutputs {
  OnnxTensor y;
  OnnxTensor present_key;
  OnnxTensor present_value;
};

/// Attention-23 in double, rounded to float32, as ONNX defines it: the keys and values are
/// `past_key` and `past_value` ([B, kv heads, P, size], or none: P = 0) followed by k and v; for
/// each query head (its key and value head: head / (q_heads / kv_heads)), softmax over the keys
/// of scale * q.k (softcapped), plus `mask` (boolean: -inf where false; float: added; aligned
/// right and broadcast, keys past its last dimension -inf), -inf for key j of query i when causal
/// and j > i + P, times v; a row with no key left is zeros.
AttentionOutputs attention_reference(const OnnxTensor& q, const OnnxTensor& k, const OnnxTensor& v, const OnnxTensor* mask,
                                     const AttentionOptions& options, const OnnxTensor* past_key = nullptr,
                                     const OnnxTensor* past_value = nullptr);

/// Swish-24 in double: x sigmoid(alpha x).
double swish_reference(double x, double alpha);

/// RMSNormalization-23 in double, rounded to float32: x over sqrt(mean(x^2) + epsilon), the mean
/// over the axes from `axis` on (negative: from the back), times `scale` broadcast to x.
OnnxTensor rms_normalization_reference(const OnnxTensor& x, const OnnxTensor& scale, std::int64_t axis, float epsilon);

/// The tests this opset range adds without an opset-17 original: Gelu-20 (approximate "none" and
/// "tanh", a small example and random data), Pad-19 in wrap mode, Swish-24 (alpha default and
/// 0.5), RMSNormalization-23 (the last axis, axis 1 with a broadcast scale and an epsilon, a
/// negative axis), RotaryEmbedding-23 (4-D in halves; 3-D, interleaved, partial, with
/// position_ids; 4-D with scattered position_ids) and Attention-23 (4-D; grouped heads, causal,
/// softcap and scale; 3-D multi-query with a boolean mask leaving a row empty; a float mask over
/// more keys than queries; causal over more keys than queries; key/value caches, causal and not,
/// 4-D and 3-D; float and boolean masks shorter than the past and new keys), their expected
/// outputs computed in double and rounded to float32. The random data comes from a fixed seed
/// with no standard-library distribution, so every build writes the same files.
std::vector<NewNodeTest> new_node_tests();

/// What upgrade_node_tests() did.
struct UpgradeReport {
  int written = 0;                   ///< test directories written
  std::vector<std::string> skipped;  ///< "test_x -> opset 18: reason", one per form not written
};

/// Writes into `out` (created when missing) `<test><suffix>/` for every form upgrade_model()
/// gives of every test of `data` (model.onnx rewritten, test_data_set_* copied unchanged) and the
/// new_node_tests(). Directories of an earlier run ("test_*_opset*") are removed first so that no
/// stale test survives. Errors (code io) name the path.
collage::Result<UpgradeReport> upgrade_node_tests(const std::string& data, const std::string& out);

}  // namespace tc
