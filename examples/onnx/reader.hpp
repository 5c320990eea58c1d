#pragma once

/// \file
/// The ONNX front end: reads an ONNX model (opsets 7 to 27) into the tensor IR, folding the shape
/// arithmetic exporters emit and lowering what the IR does not have (Split, legacy Softmax,
/// Dropout, variadic Max/Min/Sum/Mean, LRN, HardSwish, PRelu, Gelu, Resize and Upsample, Expand,
/// Gather of run-time data, constant operands that are attributes in the IR). Definitions older
/// than opset 11 are read where the reader adapts their form (see onnx/definitions.hpp); model-local
/// functions are expanded in place (onnx/functions.hpp).

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <collage/support/result.hpp>

#include "onnx/tensor_proto.hpp"
#include "tensor/graph.hpp"

namespace tc {

/// What the reader needs beyond the model.
struct ReadOptions {
  /// Shapes of graph inputs by name, replacing the model's (for inputs with dynamic dimensions).
  std::map<std::string, Shape> input_shapes;
  /// Sizes of symbolic dimensions (dim_param) by name, e.g. {"batch", 1}.
  std::map<std::string, std::int64_t> dim_params;
  /// Shapes of the graph's run-time inputs by position (those neither initializers nor given in
  /// input_values), e.g. those of a test data set's input_N.pb: each must have the model's rank
  /// and static sizes and gives its symbolic dimensions their sizes. After input_shapes and
  /// dim_params, which win.
  std::vector<Shape> input_shapes_in_order;
  /// Values of graph inputs known at load time: each becomes a constant of the graph instead of an
  /// input (the ONNX test layout passes shapes, axes and bounds as inputs).
  std::map<std::string, OnnxTensor> input_values;
  /// The most elements one folded constant may have; 0: a quarter of the memory available when
  /// the model is read, in 8-byte elements.
  std::int64_t max_folded_elements = 0;
  /// Multiply-adds above which an operator over constants is left for run time instead of folded.
  std::int64_t max_fold_work = std::int64_t{1} << 28;
  /// The folder an initializer's external data (ONNX's data_location EXTERNAL) is relative to:
  /// read_onnx() takes the model file's when this is empty; read_onnx_bytes() refuses external
  /// data without it.
  std::string external_data_dir;
};

/// Reads the ONNX model at `path`. The graph's inputs are the model's inputs that are neither
/// initializers nor given in options.input_values, in the model's order; its outputs are the
/// model's; shapes are inferred and attributes canonical. An integer input becomes a float32
/// input holding the same numbers (its node's InputDomain names its type and the axis it indexes),
/// which only Gather, Cast, reshapes and Expand may read. Errors are one line naming the node, its
/// operator and the problem (code parse for a malformed or truncated file, invalid_argument for
/// what the IR does not support, io when the file cannot be read).
collage::Result<Graph> read_onnx(const std::string& path, const ReadOptions& options = {});

/// read_onnx() of a serialised ModelProto.
collage::Result<Graph> read_onnx_bytes(std::string_view bytes, const ReadOptions& options = {});

/// Whether operand `index` of ONNX operator `op_type` is one the reader needs at load time
/// (a shape, axes, pads, bounds: attributes in the IR), so a graph input feeding it must be given
/// in ReadOptions::input_values.
bool is_load_time_operand(std::string_view op_type, std::size_t index);

}  // namespace tc
